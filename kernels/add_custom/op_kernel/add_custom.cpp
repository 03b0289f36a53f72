// AddCustom kernel: z = x + y on fp16, any length, split across the vector cores.
//
// The Ascend C vector programming model: a TPipe owns the Unified Buffer (UB); one TQue per
// tensor with BUFFER_NUM = 2 buffers (double buffering); each tile goes CopyIn (GM -> UB,
// MTE2) -> Compute (vector unit) -> CopyOut (UB -> GM, MTE3), the stages synchronised by
// EnQue/DeQue. Programming-model reference: Ascend C guide, "vector programming" / Add sample,
// https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/80RC1alpha003/devguide/opdevg/ascendcopdevg/atlas_ascendc_10_0016.html
//
// Unaligned tails. DataCopy moves whole 32-byte blocks only, so a tile whose byte length is not
// a multiple of 32 uses DataCopyPad instead (supported on Atlas A2 / 910B, the platform ini lists
// Intrinsic_data_move_pad): GM -> UB reads exactly blockLen bytes and fills the UB side up to the
// next 32-byte boundary; UB -> GM writes exactly blockLen bytes to GM (the rest of the last UB
// block is read but dropped). API: "DataCopyPad",
// https://www.hiascend.com/document/detail/zh/canncommercial/80RC1/apiref/opdevgapi/atlasascendc_api_07_0111.html
// Only the last core can meet such a tile: the tiling gives every other core a whole number of
// 32-byte blocks (op_host/add_custom_tiling_math.h), so no two cores ever write the same 32-byte
// GM block and no copy runs past the end of z.
//
// The same file compiles for the NPU (CANN's kernel_operator.h) and for the CPU target
// (cpu/kernel_operator.h, a portable logic checker of this API subset).
#include "kernel_operator.h"

#include "add_custom_tiling.h"

namespace {

constexpr int32_t BUFFER_NUM = 2;     // double buffering
constexpr uint32_t BLOCK_BYTES = 32;  // DataCopy granule, UB alignment (ubblock_size=32)

__aicore__ inline bool IsBlockAligned(uint32_t count)
{
    return (count * sizeof(half)) % BLOCK_BYTES == 0;
}

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddCustomTilingData &tiling)
    {
        // The core's share, exactly as add_custom_tiling::CoreRangeOf computes it on the host.
        const uint32_t index = static_cast<uint32_t>(AscendC::GetBlockIdx());
        uint64_t start = 0;
        if (index < tiling.formerNum) {
            start = index * tiling.formerLength;
            coreLength = tiling.formerLength;
        } else {
            start = tiling.formerNum * tiling.formerLength + (index - tiling.formerNum) * tiling.latterLength;
            coreLength = tiling.latterLength;
        }
        if (start >= tiling.totalLength) {
            coreLength = 0;
        } else if (start + coreLength > tiling.totalLength) {
            coreLength = tiling.totalLength - start;
        }
        if (coreLength == 0) {
            return;
        }
        tileLength = tiling.tileLength;
        xGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(x) + start, coreLength);
        yGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(y) + start, coreLength);
        zGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(z) + start, coreLength);
        // 3 queues x BUFFER_NUM buffers x tileLength halves: the tiling keeps this within UB.
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(half));
    }

    __aicore__ inline void Process()
    {
        if (coreLength == 0) {
            return;
        }
        const uint64_t tileNum = (coreLength + tileLength - 1) / tileLength;
        for (uint64_t i = 0; i < tileNum; ++i) {
            const uint64_t offset = i * tileLength;
            const uint64_t rest = coreLength - offset;
            const uint32_t count = rest < tileLength ? static_cast<uint32_t>(rest) : tileLength;
            CopyIn(offset, count);
            Compute(count);
            CopyOut(offset, count);
        }
    }

private:
    __aicore__ inline void LoadTile(AscendC::LocalTensor<half> &dst, AscendC::GlobalTensor<half> &src,
                                    uint64_t offset, uint32_t count)
    {
        if (IsBlockAligned(count)) {
            AscendC::DataCopy(dst, src[offset], count);
        } else {
            // blockLen in bytes; isPad = false: the UB bytes after the data up to the 32-byte
            // boundary are unspecified, and Compute/CopyOut never use them.
            AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(half)), 0, 0, 0};
            AscendC::DataCopyPadExtParams<half> pad{false, 0, 0, 0};
            AscendC::DataCopyPad(dst, src[offset], params, pad);
        }
    }

    __aicore__ inline void CopyIn(uint64_t offset, uint32_t count)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        LoadTile(xLocal, xGm, offset, count);
        LoadTile(yLocal, yGm, offset, count);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        AscendC::Add(zLocal, xLocal, yLocal, static_cast<int32_t>(count));
        outQueueZ.EnQue(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t count)
    {
        AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        if (IsBlockAligned(count)) {
            AscendC::DataCopy(zGm[offset], zLocal, count);
        } else {
            AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(half)), 0, 0, 0};
            AscendC::DataCopyPad(zGm[offset], zLocal, params);
        }
        outQueueZ.FreeTensor(zLocal);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueY;
    AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::GlobalTensor<half> xGm;
    AscendC::GlobalTensor<half> yGm;
    AscendC::GlobalTensor<half> zGm;
    uint64_t coreLength = 0;
    uint32_t tileLength = 0;
};

}  // namespace

// Kernel name = OpType AddCustom in snake case; workspace and tiling come last (custom op
// project convention). KERNEL_TYPE_AIV_ONLY: start vector cores only, block dim = AIV count
// (Ascend C API "设置kernel类型",
// https://www.hiascend.com/document/detail/zh/canncommercial/800/apiref/ascendcopapi/atlasascendc_api_07_0218.html).
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    REGISTER_TILING_DEFAULT(AddCustomTilingData);
    GET_TILING_DATA(tilingData, tiling);
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    KernelAdd op;
    op.Init(x, y, z, tilingData);
    op.Process();
}
