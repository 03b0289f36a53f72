// AddCustom host side: op definition (OpDef registration), shape/dtype inference and the tiling
// function. Compiled by the NPU build only (needs CANN headers); UNTESTED here for lack of CANN.
// The arithmetic lives in add_custom_tiling_math.h, which the CPU target tests.
//
// Sources of the interfaces used:
//   OpDef / OP_ADD / SetTiling / AddConfig / InferShape / InferDataType: Ascend C guide,
//     "算子原型定义" (custom op project, AddCustom example), CANN 8.x docs on hiascend.com;
//   TilingContext::GetTilingData<T>() with a POD tiling struct ("standard C++ syntax"):
//     https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/850/opdevg/Ascendcopdevg/atlas_ascendc_10_00024.html
//   PlatformAscendC::GetCoreMemSize(CoreMemType::UB, size) and GetCoreNumAiv():
//     https://www.hiascend.com/document/detail/zh/canncommercial/850/API/ascendcopapi/atlasascendc_api_07_1034.html
//   block dim = number of vector cores started for a KERNEL_TYPE_AIV_ONLY kernel:
//     https://www.hiascend.com/document/detail/zh/canncommercial/800/apiref/ascendcopapi/atlasascendc_api_07_0218.html
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

#include "add_custom_tiling_math.h"

namespace optiling {

static ge::graphStatus TilingFunc(gert::TilingContext *context)
{
    const auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubBytes = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubBytes);
    const uint32_t vectorCores = platform.GetCoreNumAiv();

    const int64_t xLength = context->GetInputShape(0)->GetOriginShape().GetShapeSize();
    const int64_t yLength = context->GetInputShape(1)->GetOriginShape().GetShapeSize();
    if (xLength < 0 || xLength != yLength) {
        return ge::GRAPH_FAILED;  // AddCustom adds tensors of one shape, no broadcasting
    }

    AddCustomTilingData *tiling = context->GetTilingData<AddCustomTilingData>();
    const add_custom_tiling::TilingStatus status = add_custom_tiling::ComputeTiling(
        static_cast<uint64_t>(xLength), vectorCores, ubBytes, sizeof(uint16_t) /* fp16 */, tiling);
    if (status != add_custom_tiling::TilingStatus::kOk) {
        return ge::GRAPH_FAILED;
    }
    context->SetBlockDim(tiling->usedCoreNum);
    size_t *workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = 0;  // the kernel needs no GM scratch
    return ge::GRAPH_SUCCESS;
}

}  // namespace optiling

namespace ge {

static graphStatus InferShape(gert::InferShapeContext *context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}

static graphStatus InferDataType(gert::InferDataTypeContext *context)
{
    context->SetOutputDataType(0, context->GetInputDataType(0));
    return GRAPH_SUCCESS;
}

}  // namespace ge

namespace ops {

// Mirrors add_custom.json: inputs x, y and output z, fp16, ND.
class AddCustom : public OpDef {
public:
    explicit AddCustom(const char *name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("z").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        // Compute unit "ascend910b" = Short_SoC_version of every Ascend910B1..B4 ini, lower-cased.
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
    }
};

OP_ADD(AddCustom);

}  // namespace ops
