// ascendc_cpu.h: a small, portable CPU implementation of the subset of the Ascend C API that
// kernels/add_custom/op_kernel/add_custom.cpp uses, so the very same kernel source compiles with
// g++ (no CANN) and runs block by block.
//
// It is a LOGIC CHECKER, NOT A PERFORMANCE MODEL: blocks run one after the other, copies are
// memcpy, there is no pipeline timing. What it checks, failing loudly (an
// ascendc_cpu::Violation naming the call and its source line):
//   * the UB budget: the InitBuffer sizes of a core (each buffer rounded up to 32 bytes) must fit
//     in its Unified Buffer, 196608 bytes by default = ub_size of Ascend910B*.ini
//     (github:leideng/CANN-8.1.RC1@4332a0134a96cfea4a4f6673690a81075c1e4dfb:
//      Ascend/ascend-toolkit/8.1.RC1/aarch64-linux/data/platform_config/Ascend910B4.ini);
//   * DataCopy alignment: the length in bytes must be a multiple of 32 and the UB address
//     32-byte aligned (DataCopy moves whole 32-byte blocks; unaligned tails need DataCopyPad);
//     the same UB alignment for DataCopyPad and Add;
//   * bounds: every GM access inside its GlobalTensor and inside the buffers the launcher
//     registered; every UB access inside its LocalTensor;
//   * the queue protocol: AllocTensor with no free buffer, EnQue beyond the queue depth, DeQue on
//     an empty queue, a tensor used while enqueued or after FreeTensor;
//   * the hand-over between units: on the NPU the copy units (MTE2: GM -> UB, MTE3: UB -> GM) and
//     the vector unit run in parallel, and only EnQue/DeQue (and FreeTensor/AllocTensor) order
//     them ("Enque/Deque solves the read-after-write problem of the memory", Ascend C programming
//     model, https://www.hiascend.com/document/detail/en/canncommercial/850/opdevg/Ascendcopdevg/atlas_ascendc_10_00015.html).
//     Blocks run here one call after the other, so a kernel that skips the hand-over still
//     computes the right values on the CPU; the checker therefore records which unit last
//     touched each UB buffer and fails when another unit reads what it wrote (or overwrites
//     what it read) with no DeQue or AllocTensor of that buffer in between;
//   * disjoint GM writes: the cores of a launch run at the same time on the NPU, so two blocks
//     that write the same GM bytes race (which value lands is undefined) even when, run one
//     after the other here, they leave the right result; every UB -> GM copy is recorded and a
//     block that writes bytes an earlier block wrote fails.
// UB bytes the hardware leaves unspecified (start of each block, DataCopyPad padding without
// isPad) hold a NaN pattern (0x7E55), so a kernel that reads them shows NaNs in its output.
//
// fp16 ("half") is IEEE binary16; Add rounds to nearest, ties to even: both operands are exact
// in double, their sum is exact in double (53 bits cover the 40-bit span of two halves), and
// one rounding to binary16 is done in software, so results are exact and identical on every
// host. Whether the NPU vector unit matches IEEE on subnormals is not checked here.
//
// API reference for the signatures mirrored here: Ascend C API list ("DataCopy", "DataCopyPad",
// "Add", "TQue", "TPipe::InitBuffer", "GetBlockIdx"), e.g.
// https://www.hiascend.com/document/detail/zh/canncommercial/80RC1/apiref/opdevgapi/atlasascendc_api_07_0111.html
#ifndef ASCENDC_CPU_H
#define ASCENDC_CPU_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

// Device qualifiers of the Ascend C compiler mean nothing on the CPU.
#define __aicore__
#define __global__
#define __gm__
using GM_ADDR = uint8_t *;

namespace ascendc_cpu {

constexpr uint64_t kUbBytes = 196608;  // ub_size of Ascend910B*.ini (see the header comment)
constexpr uint32_t kBlockBytes = 32;   // ubblock_size of the same ini
constexpr uint16_t kPoison = 0x7E55;   // a quiet NaN: "unspecified" UB content

class Violation : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void Fail(const std::string &what, const char *file, int line)
{
    std::ostringstream message;
    message << what << " [" << file << ":" << line << "]";
    throw Violation(message.str());
}

inline uint64_t AlignUp(uint64_t value, uint64_t to) { return (value + to - 1) / to * to; }

// Round `value` right by `shift` bits (1..63), to nearest, ties to even.
inline uint64_t RoundShiftEven(uint64_t value, unsigned shift)
{
    const uint64_t kept = value >> shift;
    const uint64_t rest = value & ((uint64_t{1} << shift) - 1);
    const uint64_t halfway = uint64_t{1} << (shift - 1);
    return (rest > halfway || (rest == halfway && (kept & 1))) ? kept + 1 : kept;
}

inline uint16_t DoubleToHalfBits(double value)
{
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    const uint16_t sign = static_cast<uint16_t>((bits >> 48) & 0x8000);
    const uint64_t magnitude = bits & 0x7FFFFFFFFFFFFFFFull;
    if (magnitude > 0x7FF0000000000000ull) {
        return sign | 0x7E00;  // NaN
    }
    if (magnitude >= 0x40EFFE0000000000ull) {
        return sign | 0x7C00;  // >= 65520 (halfway above 65504) rounds to infinity
    }
    if (magnitude < 0x3F10000000000000ull) {  // below 2^-14: subnormal or zero
        if (magnitude <= 0x3E60000000000000ull) {
            return sign;  // <= 2^-25: ties to the even zero
        }
        const uint64_t mantissa = (magnitude & 0x000FFFFFFFFFFFFFull) | (uint64_t{1} << 52);
        const unsigned shift = static_cast<unsigned>(1051 - (magnitude >> 52));  // units of 2^-24
        return sign | static_cast<uint16_t>(RoundShiftEven(mantissa, shift));
    }
    // Normal: rebias the exponent (1023 -> 15) and keep 10 mantissa bits; a carry out of the
    // mantissa correctly bumps the exponent.
    return sign | static_cast<uint16_t>(RoundShiftEven(magnitude - (uint64_t{1008} << 52), 42));
}

inline double HalfBitsToDouble(uint16_t half)
{
    const uint64_t sign = static_cast<uint64_t>(half & 0x8000) << 48;
    const uint64_t exponent = (half >> 10) & 0x1F;
    const uint64_t mantissa = half & 0x3FF;
    uint64_t bits;
    if (exponent == 0x1F) {
        bits = sign | 0x7FF0000000000000ull | (mantissa << 42);
    } else if (exponent != 0) {
        bits = sign | ((exponent + 1008) << 52) | (mantissa << 42);
    } else {
        const double magnitude = static_cast<double>(mantissa) * 5.9604644775390625e-08;  // 2^-24
        return sign ? -magnitude : magnitude;
    }
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

}  // namespace ascendc_cpu

// The Ascend C device type `half` (IEEE binary16), by its bits.
struct half {
    uint16_t bits;
    half() = default;
    half(double value) : bits(ascendc_cpu::DoubleToHalfBits(value)) {}
    explicit operator double() const { return ascendc_cpu::HalfBitsToDouble(bits); }
    static half FromBits(uint16_t raw)
    {
        half h;
        h.bits = raw;
        return h;
    }
};

namespace ascendc_cpu {

struct GmBuffer {
    const void *data;
    uint64_t bytes;
    std::string name;
};

enum class SlotState { kFree, kAllocated, kQueued, kDequeued };

// The units of an AI Core that touch UB in this API subset (the PIPE_MTE2/PIPE_V/PIPE_MTE3 pipes).
enum class Unit { kNone, kMte2, kVector, kMte3 };

inline const char *UnitName(Unit unit)
{
    switch (unit) {
        case Unit::kMte2: return "MTE2 (the GM->UB copy unit)";
        case Unit::kVector: return "the vector unit";
        case Unit::kMte3: return "MTE3 (the UB->GM copy unit)";
        case Unit::kNone: break;
    }
    return "no unit";
}

struct Slot {
    uint64_t ubOffset;
    uint64_t bytes;
    SlotState state;
    // Who touched the buffer since its last hand-over (DeQue or AllocTensor), for the race check.
    Unit unit = Unit::kNone;
    bool wrote = false;
    std::string lastUse;  // "DataCopy GM->UB at file:line"
};

struct QueueState {
    const char *position = "?";
    int32_t depth = 0;
    std::vector<Slot> slots;
    std::deque<size_t> fifo;
};

// What one core sees while its block runs.
struct Core {
    int64_t blockIdx = 0;
    int64_t blockNum = 1;
    uint64_t ubBytes = kUbBytes;
    std::vector<uint8_t> ubStorage;
    uint8_t *ub = nullptr;  // 32-byte aligned start of the UB
    uint64_t ubUsed = 0;
    std::vector<GmBuffer> gm;
    std::vector<struct GmWrite> gmWrites;  // every UB -> GM copy of this block
};

// GM bytes [begin, end) of registered buffer `buffer` written by one copy.
struct GmWrite {
    size_t buffer;
    uint64_t begin;
    uint64_t end;
    std::string where;  // "DataCopy UB->GM at file:line"
};

inline Core &ThisCore()
{
    static Core core;
    return core;
}

inline void ResetCore(int64_t blockIdx, int64_t blockNum, uint64_t ubBytes, const std::vector<GmBuffer> &gm)
{
    Core &core = ThisCore();
    core.blockIdx = blockIdx;
    core.blockNum = blockNum;
    core.ubBytes = ubBytes;
    core.ubStorage.assign(ubBytes + kBlockBytes, 0);
    const uintptr_t raw = reinterpret_cast<uintptr_t>(core.ubStorage.data());
    core.ub = core.ubStorage.data() + (AlignUp(raw, kBlockBytes) - raw);
    for (uint64_t i = 0; i + 1 < ubBytes; i += 2) {
        std::memcpy(core.ub + i, &kPoison, 2);
    }
    core.ubUsed = 0;
    core.gm = gm;
    core.gmWrites.clear();
}

inline std::string Where(const std::string &what, const char *file, int line)
{
    return what + " at " + file + ":" + std::to_string(line);
}

// Records that this block writes GM bytes [data, data + bytes) (already checked registered).
inline void RecordGmWrite(const void *data, uint64_t bytes, const std::string &what, const char *file, int line)
{
    Core &core = ThisCore();
    const uint8_t *begin = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < core.gm.size(); ++i) {
        const uint8_t *base = static_cast<const uint8_t *>(core.gm[i].data);
        if (begin >= base && begin + bytes <= base + core.gm[i].bytes) {
            const uint64_t offset = static_cast<uint64_t>(begin - base);
            core.gmWrites.push_back({i, offset, offset + bytes, Where(what, file, line)});
            return;
        }
    }
}

// A hand-over-free access of `unit` to a UB buffer: fails when another unit wrote it (read or
// write after write) or read it (write after read) since the buffer's last DeQue/AllocTensor.
inline void UseSlot(Slot &slot, Unit unit, bool write, const std::string &what, const char *file, int line)
{
    if (slot.unit != Unit::kNone && slot.unit != unit && (slot.wrote || write)) {
        std::ostringstream message;
        message << what << ": " << UnitName(unit) << (write ? " writes" : " reads") << " a UB buffer that "
                << UnitName(slot.unit) << (slot.wrote ? " wrote" : " reads") << " (" << slot.lastUse
                << ") with no EnQue/DeQue hand-over in between: on the NPU the units run in parallel, so "
                << (slot.wrote ? "the data may not be there yet" : "the buffer may still be in use")
                << " (EnQue the tensor after the " << (slot.wrote ? "write" : "read") << ", DeQue it before this use)";
        Fail(message.str(), file, line);
    }
    slot.wrote = (slot.unit == unit && slot.wrote) || write;
    slot.unit = unit;
    slot.lastUse = Where(what, file, line);
}

inline void HandOver(Slot &slot)
{
    slot.unit = Unit::kNone;
    slot.wrote = false;
    slot.lastUse.clear();
}

// GM bytes [data, data + bytes) must lie inside one buffer the launcher registered.
inline void CheckGmRegistered(const void *data, uint64_t bytes, const std::string &what, const char *file, int line)
{
    const Core &core = ThisCore();
    const uint8_t *begin = static_cast<const uint8_t *>(data);
    for (const GmBuffer &buffer : core.gm) {
        const uint8_t *base = static_cast<const uint8_t *>(buffer.data);
        if (begin >= base && begin + bytes <= base + buffer.bytes) {
            return;
        }
    }
    std::ostringstream message;
    message << what << ": " << bytes << " bytes at GM address " << data << " lie outside every GM buffer";
    for (const GmBuffer &buffer : core.gm) {
        message << " (" << buffer.name << ": " << buffer.bytes << " bytes at " << buffer.data << ")";
    }
    Fail(message.str(), file, line);
}

inline void CheckUbAligned(uint64_t ubOffset, const std::string &what, const char *file, int line)
{
    if (ubOffset % kBlockBytes != 0) {
        Fail(what + ": UB address (offset " + std::to_string(ubOffset) + ") is not 32-byte aligned", file, line);
    }
}

}  // namespace ascendc_cpu

// The kernel's tiling struct arrives as GM bytes; the Ascend C macros copy it into a local.
#define REGISTER_TILING_DEFAULT(type) using AscendcCpuDefaultTiling = type
#define GET_TILING_DATA(name, tilingArg)  \
    AscendcCpuDefaultTiling name;        \
    std::memcpy(&name, (tilingArg), sizeof(name))

enum KernelMetaType {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
    KERNEL_TYPE_AICORE,
    KERNEL_TYPE_VECTORCORE,
    KERNEL_TYPE_MIX_AICORE,
    KERNEL_TYPE_MIX_VECTOR_CORE,
    KERNEL_TYPE_MAX
};
#define KERNEL_TASK_TYPE_DEFAULT(type) ((void)(type))  // which cores start: moot on the CPU

namespace AscendC {

enum class TPosition { GM, VECIN, VECOUT, VECCALC };
using QuePosition = TPosition;

inline int64_t GetBlockIdx() { return ascendc_cpu::ThisCore().blockIdx; }
inline int64_t GetBlockNum() { return ascendc_cpu::ThisCore().blockNum; }

template <typename T>
class GlobalTensor {
public:
    void SetGlobalBuffer(T *buffer, uint64_t bufferSize)
    {
        data_ = buffer;
        size_ = bufferSize;
    }
    uint64_t GetSize() const { return size_; }
    GlobalTensor operator[](uint64_t offset) const
    {
        if (offset > size_) {
            ascendc_cpu::Fail("GlobalTensor[" + std::to_string(offset) + "] is past its end (size " +
                                  std::to_string(size_) + " elements)",
                              __FILE__, __LINE__);
        }
        GlobalTensor view;
        view.data_ = data_ + offset;
        view.size_ = size_ - offset;
        return view;
    }

    // CPU-target internals (not Ascend C API): bytes [byteOffset, byteOffset + bytes) of this view.
    T *CheckedBytes(uint64_t byteOffset, uint64_t bytes, const std::string &what, const char *file, int line) const
    {
        if (data_ == nullptr) {
            ascendc_cpu::Fail(what + ": GlobalTensor has no buffer (SetGlobalBuffer missing)", file, line);
        }
        if (byteOffset + bytes > size_ * sizeof(T)) {
            std::ostringstream message;
            message << what << ": GM bytes [" << byteOffset << ", " << byteOffset + bytes
                    << ") run past the GlobalTensor (" << size_ * sizeof(T) << " bytes)";
            ascendc_cpu::Fail(message.str(), file, line);
        }
        uint8_t *begin = reinterpret_cast<uint8_t *>(data_) + byteOffset;
        ascendc_cpu::CheckGmRegistered(begin, bytes, what, file, line);
        return reinterpret_cast<T *>(begin);
    }

private:
    T *data_ = nullptr;
    uint64_t size_ = 0;
};

template <typename T>
class LocalTensor {
public:
    LocalTensor() = default;
    LocalTensor(ascendc_cpu::QueueState *queue, size_t slot)
        : queue_(queue), slot_(slot), ubOffset_(queue->slots[slot].ubOffset),
          size_(queue->slots[slot].bytes / sizeof(T))
    {
    }
    uint32_t GetSize() const { return static_cast<uint32_t>(size_); }
    // A view starting `offset` elements in (same buffer, same queue state).
    LocalTensor operator[](uint32_t offset) const
    {
        if (offset > size_) {
            ascendc_cpu::Fail("LocalTensor[" + std::to_string(offset) + "] is past its end (size " +
                                  std::to_string(size_) + " elements)",
                              __FILE__, __LINE__);
        }
        LocalTensor view = *this;
        view.ubOffset_ += uint64_t{offset} * sizeof(T);
        view.size_ -= offset;
        return view;
    }

    // CPU-target internals (not Ascend C API).
    uint64_t UbOffset() const { return ubOffset_; }
    uint64_t Size() const { return size_; }
    T *Data() const { return reinterpret_cast<T *>(ascendc_cpu::ThisCore().ub + ubOffset_); }
    void CheckUsable(const std::string &what, uint64_t ubBytes, const char *file, int line) const
    {
        if (queue_ == nullptr) {
            ascendc_cpu::Fail(what + ": LocalTensor was never allocated", file, line);
        }
        const ascendc_cpu::SlotState state = queue_->slots[slot_].state;
        if (state == ascendc_cpu::SlotState::kFree) {
            ascendc_cpu::Fail(what + ": LocalTensor used after FreeTensor", file, line);
        }
        if (state == ascendc_cpu::SlotState::kQueued) {
            ascendc_cpu::Fail(what + ": LocalTensor used while in its queue (DeQue it first)", file, line);
        }
        ascendc_cpu::CheckUbAligned(ubOffset_, what, file, line);
        if (ubBytes > size_ * sizeof(T)) {
            std::ostringstream message;
            message << what << ": touches " << ubBytes << " UB bytes of a " << size_ * sizeof(T)
                    << "-byte LocalTensor";
            ascendc_cpu::Fail(message.str(), file, line);
        }
    }
    // `unit` reads (or writes) this tensor: the hand-over check of ascendc_cpu::UseSlot.
    void Use(ascendc_cpu::Unit unit, bool write, const std::string &what, const char *file, int line) const
    {
        ascendc_cpu::UseSlot(queue_->slots[slot_], unit, write, what, file, line);
    }
    ascendc_cpu::QueueState *Queue() const { return queue_; }
    size_t SlotIndex() const { return slot_; }

private:
    ascendc_cpu::QueueState *queue_ = nullptr;
    size_t slot_ = 0;
    uint64_t ubOffset_ = 0;
    uint64_t size_ = 0;
};

template <TPosition POS, int32_t DEPTH>
class TQue {
public:
    template <typename T>
    LocalTensor<T> AllocTensor(const char *file = __builtin_FILE(), int line = __builtin_LINE())
    {
        for (size_t i = 0; i < state_.slots.size(); ++i) {
            if (state_.slots[i].state == ascendc_cpu::SlotState::kFree) {
                state_.slots[i].state = ascendc_cpu::SlotState::kAllocated;
                ascendc_cpu::HandOver(state_.slots[i]);  // the previous user freed it: its units are done
                return LocalTensor<T>(&state_, i);
            }
        }
        ascendc_cpu::Fail(std::string("AllocTensor: all ") + std::to_string(state_.slots.size()) + " buffers of the " +
                              state_.position + " queue are in use (FreeTensor missing, or InitBuffer not called)",
                          file, line);
    }

    template <typename T>
    bool EnQue(const LocalTensor<T> &tensor, const char *file = __builtin_FILE(), int line = __builtin_LINE())
    {
        ascendc_cpu::Slot &slot = OwnSlot(tensor, "EnQue", file, line);
        if (slot.state == ascendc_cpu::SlotState::kQueued) {
            ascendc_cpu::Fail("EnQue: the tensor is already in the queue", file, line);
        }
        if (static_cast<int32_t>(state_.fifo.size()) >= DEPTH) {
            ascendc_cpu::Fail("EnQue: queue depth " + std::to_string(DEPTH) + " exceeded", file, line);
        }
        slot.state = ascendc_cpu::SlotState::kQueued;
        state_.fifo.push_back(tensor.SlotIndex());
        return true;
    }

    template <typename T>
    LocalTensor<T> DeQue(const char *file = __builtin_FILE(), int line = __builtin_LINE())
    {
        if (state_.fifo.empty()) {
            ascendc_cpu::Fail(std::string("DeQue: the ") + state_.position + " queue is empty (EnQue missing)", file,
                              line);
        }
        const size_t index = state_.fifo.front();
        state_.fifo.pop_front();
        state_.slots[index].state = ascendc_cpu::SlotState::kDequeued;
        ascendc_cpu::HandOver(state_.slots[index]);  // DeQue waits for the unit that enqueued it
        return LocalTensor<T>(&state_, index);
    }

    template <typename T>
    void FreeTensor(const LocalTensor<T> &tensor, const char *file = __builtin_FILE(), int line = __builtin_LINE())
    {
        ascendc_cpu::Slot &slot = OwnSlot(tensor, "FreeTensor", file, line);
        if (slot.state == ascendc_cpu::SlotState::kQueued) {
            ascendc_cpu::Fail("FreeTensor: the tensor is still in the queue", file, line);
        }
        slot.state = ascendc_cpu::SlotState::kFree;
    }

    ascendc_cpu::QueueState state_{POS == TPosition::VECIN ? "VECIN" : POS == TPosition::VECOUT ? "VECOUT" : "VECCALC",
                                   DEPTH, {}, {}};

private:
    template <typename T>
    ascendc_cpu::Slot &OwnSlot(const LocalTensor<T> &tensor, const char *what, const char *file, int line)
    {
        if (tensor.Queue() != &state_) {
            ascendc_cpu::Fail(std::string(what) + ": the tensor was not allocated from this queue", file, line);
        }
        ascendc_cpu::Slot &slot = state_.slots[tensor.SlotIndex()];
        if (slot.state == ascendc_cpu::SlotState::kFree) {
            ascendc_cpu::Fail(std::string(what) + ": the tensor was already freed", file, line);
        }
        return slot;
    }
};

class TPipe {
public:
    // Carves `num` buffers of `len` bytes (each rounded up to 32 bytes) out of this core's UB.
    template <TPosition POS, int32_t DEPTH>
    bool InitBuffer(TQue<POS, DEPTH> &que, uint8_t num, uint32_t len, const char *file = __builtin_FILE(),
                    int line = __builtin_LINE())
    {
        ascendc_cpu::Core &core = ascendc_cpu::ThisCore();
        if (!que.state_.slots.empty()) {
            ascendc_cpu::Fail("InitBuffer: the queue already has its buffers", file, line);
        }
        if (num == 0 || len == 0) {
            ascendc_cpu::Fail("InitBuffer: num and len must be positive", file, line);
        }
        const uint64_t each = ascendc_cpu::AlignUp(len, ascendc_cpu::kBlockBytes);
        const uint64_t asked = each * num;
        if (core.ubUsed + asked > core.ubBytes) {
            std::ostringstream message;
            message << "UB budget exceeded: InitBuffer(" << que.state_.position << " queue, num=" << unsigned(num)
                    << ", len=" << len << " bytes) asks for " << asked << " bytes while " << core.ubUsed
                    << " are already taken: " << core.ubUsed + asked << " > UB size " << core.ubBytes << " bytes";
            ascendc_cpu::Fail(message.str(), file, line);
        }
        for (uint8_t i = 0; i < num; ++i) {
            que.state_.slots.push_back({core.ubUsed, each, ascendc_cpu::SlotState::kFree, ascendc_cpu::Unit::kNone, false, ""});
            core.ubUsed += each;
        }
        return true;
    }
};

struct DataCopyExtParams {
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn, uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn)
    {
    }
    uint16_t blockCount = 1;  // [1, 4095] blocks
    uint32_t blockLen = 0;    // bytes per block
    uint32_t srcStride = 0;   // gap between blocks: bytes on GM, 32-byte units on UB
    uint32_t dstStride = 0;   // same units as srcStride, on the destination side
    uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool isPadValue, uint8_t leftPadValue, uint8_t rightPadValue, T padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue)
    {
    }
    bool isPad = false;        // true: fill the padding with paddingValue
    uint8_t leftPadding = 0;   // elements before each block's data in UB (<= 32 bytes)
    uint8_t rightPadding = 0;  // elements after each block's data in UB (<= 32 bytes)
    T paddingValue{};
};

namespace cpu_detail {

inline std::string CopyName(const char *api, const char *direction)
{
    return std::string(api) + " " + direction;
}

inline void CheckWholeBlocks(const std::string &what, uint64_t count, uint64_t elementBytes, const char *file,
                             int line)
{
    const uint64_t bytes = count * elementBytes;
    if (count == 0 || bytes % ascendc_cpu::kBlockBytes != 0) {
        std::ostringstream message;
        message << what << ": " << bytes << " bytes (" << count << " elements x " << elementBytes
                << " bytes) is not a multiple of 32 bytes; DataCopy moves whole 32-byte blocks, use DataCopyPad"
                << " for an unaligned tail";
        ascendc_cpu::Fail(message.str(), file, line);
    }
}

inline void CheckExtParams(const std::string &what, const DataCopyExtParams &params, uint64_t elementBytes,
                           const char *file, int line)
{
    if (params.blockCount < 1 || params.blockCount > 4095) {
        ascendc_cpu::Fail(what + ": blockCount " + std::to_string(params.blockCount) + " is outside [1, 4095]", file,
                          line);
    }
    if (params.blockLen < 1 || params.blockLen > 2097151 || params.blockLen % elementBytes != 0) {
        ascendc_cpu::Fail(what + ": blockLen " + std::to_string(params.blockLen) +
                              " bytes is not a positive whole number of elements below 2^21",
                          file, line);
    }
}

}  // namespace cpu_detail

// GM -> UB, whole 32-byte blocks only.
template <typename T>
void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, uint32_t count,
              const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    const std::string what = cpu_detail::CopyName("DataCopy", "GM->UB");
    cpu_detail::CheckWholeBlocks(what, count, sizeof(T), file, line);
    dst.CheckUsable(what, uint64_t{count} * sizeof(T), file, line);
    dst.Use(ascendc_cpu::Unit::kMte2, true, what, file, line);
    const T *from = src.CheckedBytes(0, uint64_t{count} * sizeof(T), what, file, line);
    std::memcpy(dst.Data(), from, uint64_t{count} * sizeof(T));
}

// UB -> GM, whole 32-byte blocks only.
template <typename T>
void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src, uint32_t count,
              const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    const std::string what = cpu_detail::CopyName("DataCopy", "UB->GM");
    cpu_detail::CheckWholeBlocks(what, count, sizeof(T), file, line);
    src.CheckUsable(what, uint64_t{count} * sizeof(T), file, line);
    src.Use(ascendc_cpu::Unit::kMte3, false, what, file, line);
    T *to = dst.CheckedBytes(0, uint64_t{count} * sizeof(T), what, file, line);
    ascendc_cpu::RecordGmWrite(to, uint64_t{count} * sizeof(T), what, file, line);
    std::memcpy(to, src.Data(), uint64_t{count} * sizeof(T));
}

// GM -> UB, any byte length: each block lands at a 32-byte boundary in UB, padded to the next.
template <typename T>
void DataCopyPad(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const DataCopyExtParams &params,
                 const DataCopyPadExtParams<T> &padParams, const char *file = __builtin_FILE(),
                 int line = __builtin_LINE())
{
    const std::string what = cpu_detail::CopyName("DataCopyPad", "GM->UB");
    cpu_detail::CheckExtParams(what, params, sizeof(T), file, line);
    const uint64_t left = uint64_t{padParams.leftPadding} * sizeof(T);
    const uint64_t right = uint64_t{padParams.rightPadding} * sizeof(T);
    if (left > ascendc_cpu::kBlockBytes || right > ascendc_cpu::kBlockBytes) {
        ascendc_cpu::Fail(what + ": leftPadding/rightPadding exceed 32 bytes", file, line);
    }
    const uint64_t footprint = ascendc_cpu::AlignUp(left + params.blockLen + right, ascendc_cpu::kBlockBytes);
    const uint64_t pitch = footprint + uint64_t{params.dstStride} * ascendc_cpu::kBlockBytes;
    dst.CheckUsable(what, pitch * (params.blockCount - 1) + footprint, file, line);
    dst.Use(ascendc_cpu::Unit::kMte2, true, what, file, line);
    for (uint64_t b = 0; b < params.blockCount; ++b) {
        const uint64_t gmOffset = b * (uint64_t{params.blockLen} + params.srcStride);
        const T *from = src.CheckedBytes(gmOffset, params.blockLen, what, file, line);
        uint8_t *to = reinterpret_cast<uint8_t *>(dst.Data()) + b * pitch;
        if (padParams.isPad) {
            for (uint64_t i = 0; i + sizeof(T) <= footprint; i += sizeof(T)) {
                std::memcpy(to + i, &padParams.paddingValue, sizeof(T));
            }
        } else {  // unspecified content: the NaN pattern, never a usable value
            for (uint64_t i = 0; i + 2 <= footprint; i += 2) {
                std::memcpy(to + i, &ascendc_cpu::kPoison, 2);
            }
        }
        std::memcpy(to + left, from, params.blockLen);
    }
}

// UB -> GM, any byte length: writes exactly blockLen bytes per block to GM.
template <typename T>
void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const DataCopyExtParams &params,
                 const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    const std::string what = cpu_detail::CopyName("DataCopyPad", "UB->GM");
    cpu_detail::CheckExtParams(what, params, sizeof(T), file, line);
    const uint64_t footprint = ascendc_cpu::AlignUp(params.blockLen, ascendc_cpu::kBlockBytes);
    const uint64_t pitch = footprint + uint64_t{params.srcStride} * ascendc_cpu::kBlockBytes;
    src.CheckUsable(what, pitch * (params.blockCount - 1) + footprint, file, line);
    src.Use(ascendc_cpu::Unit::kMte3, false, what, file, line);
    for (uint64_t b = 0; b < params.blockCount; ++b) {
        const uint64_t gmOffset = b * (uint64_t{params.blockLen} + params.dstStride);
        T *to = dst.CheckedBytes(gmOffset, params.blockLen, what, file, line);
        ascendc_cpu::RecordGmWrite(to, params.blockLen, what, file, line);
        std::memcpy(to, reinterpret_cast<const uint8_t *>(src.Data()) + b * pitch, params.blockLen);
    }
}

// dst[i] = src0[i] + src1[i] for the first `count` elements (fp16, round to nearest even).
inline void Add(const LocalTensor<half> &dst, const LocalTensor<half> &src0, const LocalTensor<half> &src1,
                const int32_t &count, const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    if (count <= 0) {
        ascendc_cpu::Fail("Add: count " + std::to_string(count) + " must be positive", file, line);
    }
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(half);
    src0.CheckUsable("Add src0", bytes, file, line);
    src1.CheckUsable("Add src1", bytes, file, line);
    dst.CheckUsable("Add dst", bytes, file, line);
    src0.Use(ascendc_cpu::Unit::kVector, false, "Add src0", file, line);
    src1.Use(ascendc_cpu::Unit::kVector, false, "Add src1", file, line);
    dst.Use(ascendc_cpu::Unit::kVector, true, "Add dst", file, line);
    const half *a = src0.Data();
    const half *b = src1.Data();
    half *out = dst.Data();
    for (int32_t i = 0; i < count; ++i) {
        out[i] = half(static_cast<double>(a[i]) + static_cast<double>(b[i]));
    }
}

}  // namespace AscendC

namespace ascendc_cpu {

// The first GM bytes that `write` shares with a write of an earlier block, as a message; "" if none.
inline std::string OverlapOf(const GmWrite &write, uint32_t block, const std::vector<std::vector<GmWrite>> &earlier,
                             const std::vector<GmBuffer> &gm)
{
    for (uint32_t other = 0; other < earlier.size(); ++other) {
        for (const GmWrite &done : earlier[other]) {
            if (done.buffer != write.buffer || done.end <= write.begin || write.end <= done.begin) {
                continue;
            }
            std::ostringstream message;
            message << "blocks " << other << " and " << block << " both write " << gm[write.buffer].name << " bytes ["
                    << std::max(done.begin, write.begin) << ", " << std::min(done.end, write.end) << ") (block "
                    << other << ": " << done.where << "; block " << block << ": " << write.where
                    << "): on the NPU the cores run at the same time and which write lands is undefined; "
                    << "the tiling must give every core a GM range of its own";
            return message.str();
        }
    }
    return "";
}

// Runs `kernel` once per block, one block after the other, each with a fresh UB of `ubBytes`.
// `gm` lists the device buffers the kernel may touch. A violation is rethrown naming the block;
// so is a GM write of a block that overlaps a write of an earlier block.
inline void RunBlocks(uint32_t blockDim, uint64_t ubBytes, const std::vector<GmBuffer> &gm,
                      const std::function<void()> &kernel)
{
    if (blockDim == 0) {
        throw Violation("launch with block dim 0");
    }
    std::vector<std::vector<GmWrite>> written;
    for (uint32_t block = 0; block < blockDim; ++block) {
        const std::string name = "block " + std::to_string(block) + "/" + std::to_string(blockDim) + ": ";
        ResetCore(block, blockDim, ubBytes, gm);
        try {
            kernel();
        } catch (const Violation &error) {
            throw Violation(name + error.what());
        }
        for (const GmWrite &write : ThisCore().gmWrites) {
            const std::string overlap = OverlapOf(write, block, written, gm);
            if (!overlap.empty()) {
                throw Violation(name + overlap);
            }
        }
        written.push_back(ThisCore().gmWrites);
    }
}

}  // namespace ascendc_cpu

#endif  // ASCENDC_CPU_H
