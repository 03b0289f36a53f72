// Tiling data of AddCustom: what the host tiling function hands to every core.
//
// A plain C++ POD struct ("standard C++ syntax" tiling, registered in the kernel with
// REGISTER_TILING_DEFAULT and filled on the host through TilingContext::GetTilingData<T>()):
// https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/850/opdevg/Ascendcopdevg/atlas_ascendc_10_00024.html
// That page requires the header to live under op_kernel/, because only op_kernel/ is shipped
// for online compilation. No CANN header is needed, so the CPU target compiles it too.
//
// Work split (computed in op_host/add_custom_tiling_math.h): the input is cut into 32-byte
// blocks; the first `formerNum` cores ("former" cores in the Ascend C docs' non-uniform split)
// take one block more than the others, so per-core work differs by at most one block. Only the
// very last core can end in a partial block (the unaligned tail of the whole tensor).
#ifndef ADD_CUSTOM_TILING_H
#define ADD_CUSTOM_TILING_H

#include <cstdint>

struct AddCustomTilingData {
    uint64_t totalLength;   // elements in x (== y == z)
    uint64_t formerLength;  // elements per former core: (blocksPerCore + 1) * elementsPerBlock
    uint64_t latterLength;  // elements per latter core: blocksPerCore * elementsPerBlock
    uint32_t usedCoreNum;   // block dim: cores that get work (never more than 32-byte blocks)
    uint32_t formerNum;     // cores [0, formerNum) are former cores, the rest latter cores
    uint32_t tileLength;    // elements per full tile in UB; a multiple of a 32-byte block
    uint32_t reserved;      // keeps sizeof a multiple of 8 bytes
};

#endif  // ADD_CUSTOM_TILING_H
