// Golden test driver of the AddCustom CPU target.
//
//   add_custom_cpu CORES LEN[:SEED] [LEN[:SEED] ...]
//   add_custom_cpu io CORES LEN X_FILE Y_FILE Z_FILE
//
// The io mode is `ascenv test`'s: x and y are read from raw little-endian fp16 files of LEN
// values, the kernel runs as below on CORES vector cores, and z is written to Z_FILE; the host
// compares it with its reference. z starts as NaN, so an element the kernel never writes shows.
// It prints one line, "RAN len=.. cores=.. blocks=.. tile=..", or what went wrong (exit 1;
// 2 on bad usage or an unreadable file).
//
// For each case: tile with op_host/add_custom_tiling_math.h for CORES vector cores and the 910B
// UB size, fill x and y with random finite fp16 values (all bit patterns but Inf/NaN, so
// subnormals, signed zeros and overflow to Inf are covered), run op_kernel/add_custom.cpp block
// by block on the CPU target, and compare z bit for bit with an independent reference add
// (the compiler's _Float16). One line per case:
//   PASS len=16385 cores=8 seed=2 blocks=8 tile=2064 time_ns=183004 peer_ns=95120
//   FAIL len=15 cores=1 seed=3: <what went wrong>
// then "SUMMARY pass=N fail=M"; exit status 0 when every case passes, 1 otherwise, 2 on bad usage.
// time_ns is the CPU time of the kernel run alone (RunBlocks, not the data generation or the
// check), from CLOCK_PROCESS_CPUTIME_ID (POSIX clock_gettime,
// https://pubs.opengroup.org/onlinepubs/9699919799/functions/clock_gettime.html): the blocks run
// one after another in this thread, and CPU time does not count the time another process held
// the core, so `ascenv bench run` on a busy machine still compares tilings, not machine load.
// peer_ns is the CPU time of the check that follows (the reference add over the same elements,
// the same code in every build): a peer timed in the same process, which a busier or slower
// machine slows as it slows the kernel, so `bench compare` judges time_ns / peer_ns.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <time.h>
#include <vector>

#include "../op_host/add_custom_tiling_math.h"
#include "ascendc_cpu.h"

#if !defined(__FLT16_MANT_DIG__)
#error "the reference add needs the compiler's _Float16 (GCC >= 12 or Clang on x86_64/aarch64)"
#endif

extern "C" void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling);

namespace {

// splitmix64: a fixed, platform-independent generator (the std:: distributions are not).
struct Random {
    uint64_t state;
    uint64_t Next()
    {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    uint16_t FiniteHalf()
    {
        for (;;) {
            const uint16_t bits = static_cast<uint16_t>(Next() >> 48);
            if ((bits & 0x7C00) != 0x7C00) {
                return bits;
            }
        }
    }
};

// Reference: IEEE binary16 addition by the compiler (correctly rounded even when it computes in
// float first: 24 >= 2 * 11 + 2 bits makes the double rounding innocuous).
uint16_t ReferenceAdd(uint16_t a, uint16_t b)
{
    _Float16 x;
    _Float16 y;
    std::memcpy(&x, &a, 2);
    std::memcpy(&y, &b, 2);
    const _Float16 sum = static_cast<_Float16>(x + y);
    uint16_t bits;
    std::memcpy(&bits, &sum, 2);
    return bits;
}

// Device-like GM buffer: 512-byte aligned start, exact byte size registered with the launcher.
struct GmArray {
    explicit GmArray(uint64_t count)
        : storage(count + 256 + 1), count(count)
    {
        const uintptr_t raw = reinterpret_cast<uintptr_t>(storage.data());
        data = storage.data() + ((512 - raw % 512) % 512) / sizeof(uint16_t);
    }
    std::vector<uint16_t> storage;
    uint16_t *data;
    uint64_t count;
};

uint64_t CpuNanoseconds()
{
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

bool ParseUnsigned(const char *text, uint64_t *out)
{
    if (*text < '0' || *text > '9') {
        return false;
    }
    char *end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (*end != '\0' && *end != ':') {
        return false;
    }
    *out = value;
    return true;
}

bool RunCase(uint32_t cores, uint64_t length, uint64_t seed)
{
    AddCustomTilingData tiling;
    const add_custom_tiling::TilingStatus status =
        add_custom_tiling::ComputeTiling(length, cores, ascendc_cpu::kUbBytes, sizeof(uint16_t), &tiling);
    if (status != add_custom_tiling::TilingStatus::kOk) {
        std::printf("FAIL len=%llu cores=%u seed=%llu: tiling: %s\n", (unsigned long long)length, cores,
                    (unsigned long long)seed, add_custom_tiling::TilingStatusName(status));
        return false;
    }
    GmArray x(length), y(length), z(length);
    Random random{seed};
    for (uint64_t i = 0; i < length; ++i) {
        x.data[i] = random.FiniteHalf();
        y.data[i] = random.FiniteHalf();
        z.data[i] = ascendc_cpu::kPoison;  // an element the kernel never writes stays NaN
    }
    const std::vector<ascendc_cpu::GmBuffer> gm = {
        {x.data, length * 2, "x"}, {y.data, length * 2, "y"}, {z.data, length * 2, "z"}};
    const uint64_t started = CpuNanoseconds();
    try {
        ascendc_cpu::RunBlocks(tiling.usedCoreNum, ascendc_cpu::kUbBytes, gm, [&] {
            add_custom(reinterpret_cast<GM_ADDR>(x.data), reinterpret_cast<GM_ADDR>(y.data),
                       reinterpret_cast<GM_ADDR>(z.data), nullptr, reinterpret_cast<GM_ADDR>(&tiling));
        });
    } catch (const ascendc_cpu::Violation &error) {
        std::printf("FAIL len=%llu cores=%u seed=%llu: %s\n", (unsigned long long)length, cores,
                    (unsigned long long)seed, error.what());
        return false;
    }
    const uint64_t kernelNs = CpuNanoseconds() - started;
    const uint64_t checkStarted = CpuNanoseconds();
    for (uint64_t i = 0; i < length; ++i) {
        const uint16_t expected = ReferenceAdd(x.data[i], y.data[i]);
        if (z.data[i] != expected) {
            std::printf("FAIL len=%llu cores=%u seed=%llu: z[%llu] = 0x%04x, expected 0x%04x (x=0x%04x y=0x%04x)\n",
                        (unsigned long long)length, cores, (unsigned long long)seed, (unsigned long long)i,
                        z.data[i], expected, x.data[i], y.data[i]);
            return false;
        }
    }
    const uint64_t peerNs = CpuNanoseconds() - checkStarted;
    std::printf("PASS len=%llu cores=%u seed=%llu blocks=%u tile=%u time_ns=%llu peer_ns=%llu\n",
                (unsigned long long)length, cores, (unsigned long long)seed, tiling.usedCoreNum, tiling.tileLength,
                (unsigned long long)kernelNs, (unsigned long long)peerNs);
    return true;
}

bool ReadHalves(const char *path, uint16_t *data, uint64_t count)
{
    FILE *file = std::fopen(path, "rb");
    if (file == nullptr) {
        return false;
    }
    const size_t read = std::fread(data, sizeof(uint16_t), count, file);
    const bool exact = read == count && std::fgetc(file) == EOF;
    std::fclose(file);
    return exact;
}

int RunFiles(int argc, char **argv)
{
    uint64_t cores = 0;
    uint64_t length = 0;
    if (argc != 7 || !ParseUnsigned(argv[2], &cores) || cores == 0 || cores > 4096 || !ParseUnsigned(argv[3], &length)) {
        std::fprintf(stderr, "usage: %s io CORES LEN X_FILE Y_FILE Z_FILE\n", argv[0]);
        return 2;
    }
    AddCustomTilingData tiling;
    const add_custom_tiling::TilingStatus status =
        add_custom_tiling::ComputeTiling(length, static_cast<uint32_t>(cores), ascendc_cpu::kUbBytes, sizeof(uint16_t), &tiling);
    if (status != add_custom_tiling::TilingStatus::kOk) {
        std::printf("FAIL len=%llu cores=%llu: tiling: %s\n", (unsigned long long)length, (unsigned long long)cores,
                    add_custom_tiling::TilingStatusName(status));
        return 1;
    }
    GmArray x(length), y(length), z(length);
    if (!ReadHalves(argv[4], x.data, length) || !ReadHalves(argv[5], y.data, length)) {
        std::fprintf(stderr, "cannot read %llu fp16 values from each of %s and %s\n", (unsigned long long)length,
                     argv[4], argv[5]);
        return 2;
    }
    for (uint64_t i = 0; i < length; ++i) {
        z.data[i] = ascendc_cpu::kPoison;
    }
    const std::vector<ascendc_cpu::GmBuffer> gm = {
        {x.data, length * 2, "x"}, {y.data, length * 2, "y"}, {z.data, length * 2, "z"}};
    try {
        ascendc_cpu::RunBlocks(tiling.usedCoreNum, ascendc_cpu::kUbBytes, gm, [&] {
            add_custom(reinterpret_cast<GM_ADDR>(x.data), reinterpret_cast<GM_ADDR>(y.data),
                       reinterpret_cast<GM_ADDR>(z.data), nullptr, reinterpret_cast<GM_ADDR>(&tiling));
        });
    } catch (const ascendc_cpu::Violation &error) {
        std::printf("FAIL len=%llu cores=%llu: %s\n", (unsigned long long)length, (unsigned long long)cores, error.what());
        return 1;
    }
    FILE *out = std::fopen(argv[6], "wb");
    if (out == nullptr || std::fwrite(z.data, sizeof(uint16_t), length, out) != length || std::fclose(out) != 0) {
        std::fprintf(stderr, "cannot write %s\n", argv[6]);
        return 2;
    }
    std::printf("RAN len=%llu cores=%llu blocks=%u tile=%u\n", (unsigned long long)length, (unsigned long long)cores,
                tiling.usedCoreNum, tiling.tileLength);
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc > 1 && std::strcmp(argv[1], "io") == 0) {
        return RunFiles(argc, argv);
    }
    uint64_t cores = 0;
    if (argc < 3 || !ParseUnsigned(argv[1], &cores) || cores == 0 || cores > 4096) {
        std::fprintf(stderr, "usage: %s CORES LEN[:SEED] [LEN[:SEED] ...]\n", argv[0]);
        return 2;
    }
    int passed = 0;
    int failed = 0;
    for (int i = 2; i < argc; ++i) {
        uint64_t length = 0;
        uint64_t seed = 1;
        const char *colon = std::strchr(argv[i], ':');
        if (!ParseUnsigned(argv[i], &length) || (colon != nullptr && !ParseUnsigned(colon + 1, &seed))) {
            std::fprintf(stderr, "bad case '%s': expected LEN or LEN:SEED (decimal)\n", argv[i]);
            return 2;
        }
        if (RunCase(static_cast<uint32_t>(cores), length, seed)) {
            ++passed;
        } else {
            ++failed;
        }
    }
    std::printf("SUMMARY pass=%d fail=%d\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
