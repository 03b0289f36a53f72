// Tiling arithmetic of AddCustom, plain C++17 with no CANN header: the NPU tiling function
// (op_host/add_custom.cpp) and the CPU target (cpu/main.cpp, cpu/tiling_main.cpp) compile this
// same file, so what the tests check is what the NPU host code runs.
//
// Facts used (Ascend910B1..B4 platform ini of CANN 8.1.RC1,
// github:leideng/CANN-8.1.RC1@4332a0134a96cfea4a4f6673690a81075c1e4dfb:
// Ascend/ascend-toolkit/8.1.RC1/aarch64-linux/data/platform_config/Ascend910B4.ini):
//   [AICoreSpec] ub_size=196608 (192 KiB of Unified Buffer per core), ubblock_size=32;
//   [SoCInfo] vector_core_cnt=40 on 910B4 (48 on 910B1). The NPU host code reads both at run time
//   (PlatformAscendC::GetCoreMemSize(UB) and GetCoreNumAiv()), nothing here hard-codes a chip.
// DataCopy moves whole 32-byte blocks between GM and UB and needs 32-byte aligned UB addresses;
// DataCopyPad moves any byte length (Ascend C API reference "DataCopyPad",
// https://www.hiascend.com/document/detail/zh/canncommercial/80RC1/apiref/opdevgapi/atlasascendc_api_07_0111.html).
#ifndef ADD_CUSTOM_TILING_MATH_H
#define ADD_CUSTOM_TILING_MATH_H

#include <cstdint>

#include "../op_kernel/add_custom_tiling.h"

namespace add_custom_tiling {

constexpr uint32_t kBlockBytes = 32;       // ubblock_size: DataCopy granule and UB alignment
constexpr uint32_t kTensorsInUb = 3;       // x, y and z each have a queue in UB
constexpr uint32_t kBufferNum = 2;         // double buffering: copy-in of tile i+1 overlaps tile i
constexpr uint64_t kUbBytes910B = 196608;  // ub_size of Ascend910B*.ini (CPU target default)

enum class TilingStatus { kOk, kNoCores, kBadElementSize, kUbTooSmall };

inline const char *TilingStatusName(TilingStatus status)
{
    switch (status) {
        case TilingStatus::kOk: return "ok";
        case TilingStatus::kNoCores: return "no-cores";
        case TilingStatus::kBadElementSize: return "bad-element-size";
        case TilingStatus::kUbTooSmall: return "ub-too-small";
    }
    return "unknown";
}

// Largest tile (in elements) such that 3 tensors x 2 buffers of it fit in `ubBytes`, each
// buffer a whole number of 32-byte blocks. 0 when the UB cannot hold even one block per buffer.
inline uint64_t MaxTileElements(uint64_t ubBytes, uint32_t elementBytes)
{
    const uint64_t perBuffer = ubBytes / (kTensorsInUb * kBufferNum);
    return (perBuffer / kBlockBytes) * kBlockBytes / elementBytes;
}

// Fills `out` for `totalLength` elements of `elementBytes` bytes on up to `coreNum` cores.
// A zero-length input gets one core with nothing to do (a launch needs block dim >= 1).
inline TilingStatus ComputeTiling(uint64_t totalLength, uint32_t coreNum, uint64_t ubBytes,
                                  uint32_t elementBytes, AddCustomTilingData *out)
{
    *out = AddCustomTilingData{};
    if (coreNum == 0) {
        return TilingStatus::kNoCores;
    }
    if (elementBytes == 0 || kBlockBytes % elementBytes != 0) {
        return TilingStatus::kBadElementSize;
    }
    const uint64_t maxTile = MaxTileElements(ubBytes, elementBytes);
    if (maxTile == 0) {
        return TilingStatus::kUbTooSmall;
    }
    const uint64_t perBlock = kBlockBytes / elementBytes;
    const uint64_t blocks = (totalLength + perBlock - 1) / perBlock;
    out->totalLength = totalLength;
    if (blocks == 0) {
        out->usedCoreNum = 1;
        return TilingStatus::kOk;
    }
    // Never more cores than blocks, so no core is idle and none starts inside another's block.
    const uint64_t used = blocks < coreNum ? blocks : coreNum;
    const uint64_t blocksPerCore = blocks / used;
    const uint64_t formerNum = blocks % used;
    out->usedCoreNum = static_cast<uint32_t>(used);
    out->formerNum = static_cast<uint32_t>(formerNum);
    out->formerLength = (blocksPerCore + 1) * perBlock;
    out->latterLength = blocksPerCore * perBlock;
    // A tile larger than the biggest per-core share would only waste UB.
    const uint64_t largestShare = formerNum > 0 ? out->formerLength : out->latterLength;
    out->tileLength = static_cast<uint32_t>(largestShare < maxTile ? largestShare : maxTile);
    return TilingStatus::kOk;
}

struct CoreRange {
    uint64_t start;   // first element of the core
    uint64_t length;  // elements of the core (the last core may end in a partial block)
};

// The elements core `index` works on; the kernel computes the same from the tiling data.
inline CoreRange CoreRangeOf(const AddCustomTilingData &tiling, uint32_t index)
{
    CoreRange range{};
    if (index < tiling.formerNum) {
        range.start = index * tiling.formerLength;
        range.length = tiling.formerLength;
    } else {
        range.start = tiling.formerNum * tiling.formerLength + (index - tiling.formerNum) * tiling.latterLength;
        range.length = tiling.latterLength;
    }
    if (range.start >= tiling.totalLength) {
        range.length = 0;
    } else if (range.start + range.length > tiling.totalLength) {
        range.length = tiling.totalLength - range.start;
    }
    return range;
}

}  // namespace add_custom_tiling

#endif  // ADD_CUSTOM_TILING_MATH_H
