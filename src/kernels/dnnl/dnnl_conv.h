// float32 convolutions on oneDNN (the geometry of kernels/conv.h). Each returns false when
// oneDNN cannot express the case (e.g. the negative right padding of some transposed
// convolutions); the caller then uses im2col + gemm.
#pragma once
#include "kernels/conv.h"

namespace oneflow::dnnl_glue {

// Layout the primitives work in: "blocked" lets oneDNN choose (nChw8c..., reorders around the
// call), "plain" keeps our NCHW buffers (no reorders; oneDNN then runs its gemm-based kernels).
enum class ConvLayout { kBlocked, kPlain };

// w: the float32 contiguous weight, a tensor for the weight cache (Note [Weight cache]).
bool ConvForward(const ConvGeom& g, const float* x, const Tensor& w, const float* bias, float* y, ConvLayout l);
bool ConvBackwardData(const ConvGeom& g, const float* dy, const Tensor& w, float* dx, ConvLayout l);
bool ConvBackwardWeight(const ConvGeom& g, const float* x, const float* dy, float* dw, ConvLayout l);

}  // namespace oneflow::dnnl_glue
