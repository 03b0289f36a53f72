// Prints the AddCustom tiling for one input, so tests can check
// op_host/add_custom_tiling_math.h (the header the NPU tiling function compiles) from Python.
//
//   add_custom_tiling LEN CORES [UB_BYTES]     (UB_BYTES defaults to 196608, the 910B ub_size)
//
// Output: one "key=value ..." line with status and every AddCustomTilingData field, then one
// "core=I start=S length=L" line per used core (add_custom_tiling::CoreRangeOf). Exit 0 when the
// tiling succeeds, 1 when it reports an error, 2 on bad usage.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "../op_host/add_custom_tiling_math.h"

namespace {

bool ParseUnsigned(const char *text, uint64_t *out)
{
    if (*text < '0' || *text > '9') {
        return false;
    }
    char *end = nullptr;
    *out = std::strtoull(text, &end, 10);
    return *end == '\0';
}

}  // namespace

int main(int argc, char **argv)
{
    uint64_t length = 0;
    uint64_t cores = 0;
    uint64_t ubBytes = add_custom_tiling::kUbBytes910B;
    if (argc < 3 || argc > 4 || !ParseUnsigned(argv[1], &length) || !ParseUnsigned(argv[2], &cores) ||
        cores > UINT32_MAX || (argc == 4 && !ParseUnsigned(argv[3], &ubBytes))) {
        std::fprintf(stderr, "usage: %s LEN CORES [UB_BYTES]\n", argv[0]);
        return 2;
    }
    AddCustomTilingData tiling;
    const add_custom_tiling::TilingStatus status =
        add_custom_tiling::ComputeTiling(length, static_cast<uint32_t>(cores), ubBytes, sizeof(uint16_t), &tiling);
    std::printf("status=%s totalLength=%llu usedCoreNum=%u formerNum=%u formerLength=%llu latterLength=%llu "
                "tileLength=%u\n",
                add_custom_tiling::TilingStatusName(status), (unsigned long long)tiling.totalLength, tiling.usedCoreNum,
                tiling.formerNum, (unsigned long long)tiling.formerLength, (unsigned long long)tiling.latterLength,
                tiling.tileLength);
    if (status != add_custom_tiling::TilingStatus::kOk) {
        return 1;
    }
    for (uint32_t core = 0; core < tiling.usedCoreNum; ++core) {
        const add_custom_tiling::CoreRange range = add_custom_tiling::CoreRangeOf(tiling, core);
        std::printf("core=%u start=%llu length=%llu\n", core, (unsigned long long)range.start,
                    (unsigned long long)range.length);
    }
    return 0;
}
