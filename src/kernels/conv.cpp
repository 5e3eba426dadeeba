// Which implementation runs a convolution (docs/decisions.md has the measurements behind the
// policy; ONEFLOW_CONV_IMPL in docs/env.md overrides it for benchmarking).
#include "kernels/conv.h"

#include <cstdlib>
#include <cstring>

#include "kernels/dnnl/dnnl_conv.h"
#include "ops/copy.h"

namespace oneflow {

namespace {

enum class Impl { kAuto, kDnnlBlocked, kDnnlPlain, kGemm };

// Read on every call (a getenv, nothing next to a convolution), so that a benchmark can compare
// the implementations in one process (benchmarks/conv_impls.py).
Impl ForcedImpl() {
  const char* v = std::getenv("ONEFLOW_CONV_IMPL");
  if (!v || !*v || !std::strcmp(v, "auto")) return Impl::kAuto;
  if (!std::strcmp(v, "dnnl")) return Impl::kDnnlBlocked;
  if (!std::strcmp(v, "dnnl_plain")) return Impl::kDnnlPlain;
  if (!std::strcmp(v, "gemm")) return Impl::kGemm;
  OF_THROW(kValue) << "ONEFLOW_CONV_IMPL must be auto, dnnl, dnnl_plain or gemm, got '" << v << "'";
}

// Note [1x1 convolutions on the plain layout]
// float32 policy (measured, docs/decisions.md): oneDNN's blocked layouts, except 1x1 stride-1
// convolutions over planes of 28x28 and more, which run on oneDNN over our NCHW buffers. Such a
// convolution is one GEMM per image with few FLOPs per byte, so the reorders of its input and
// output to and from the blocked layout cost more than the blocked kernel saves; on small planes
// (7x7, many channels) the product is skinny and the blocked kernel wins; 14x14 is a tie.
constexpr int64_t kPlain1x1MinPlane = 28 * 28;

Impl Choose(const ConvGeom& g) {
  const Impl f = ForcedImpl();
  if (f != Impl::kAuto) return f;
  if (g.Is1x1() && g.groups == 1 && g.XSpatial() >= kPlain1x1MinPlane) return Impl::kDnnlPlain;
  return Impl::kDnnlBlocked;
}

bool Dnnl(Impl i) { return i == Impl::kDnnlBlocked || i == Impl::kDnnlPlain; }
dnnl_glue::ConvLayout Layout(Impl i) {
  return i == Impl::kDnnlPlain ? dnnl_glue::ConvLayout::kPlain : dnnl_glue::ConvLayout::kBlocked;
}

void ConvForwardCpu(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) {
  if (x.dtype() == DType::kFloat32) {
    const Impl i = Choose(g);
    if (Dnnl(i) && dnnl_glue::ConvForward(g, x.data<float>(), w,
                                          bias.defined() ? bias.data<float>() : nullptr, y.data<float>(), Layout(i)))
      return;
  }
  GemmConvForward(g, x, w, y);
  if (bias.defined()) AddChannelBias(y, bias);
}

void ConvBackwardDataCpu(const ConvGeom& g, const Tensor& dy, const Tensor& w, const Tensor& dx) {
  if (dy.dtype() == DType::kFloat32) {
    const Impl i = Choose(g);
    if (Dnnl(i) && dnnl_glue::ConvBackwardData(g, dy.data<float>(), w, dx.data<float>(), Layout(i)))
      return;
  }
  GemmConvBackwardData(g, dy, w, dx);
}

void ConvBackwardWeightCpu(const ConvGeom& g, const Tensor& x, const Tensor& dy, const Tensor& dw) {
  if (x.dtype() == DType::kFloat32) {
    const Impl i = Choose(g);
    if (Dnnl(i) && dnnl_glue::ConvBackwardWeight(g, x.data<float>(), dy.data<float>(), dw.data<float>(), Layout(i)))
      return;
  }
  GemmConvBackwardWeight(g, x, dy, dw);
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::ConvForwardKernel>(DeviceType::kCPU, &ConvForwardCpu);
  kernels::RegisterKernel<kernels::ConvBackwardDataKernel>(DeviceType::kCPU, &ConvBackwardDataCpu);
  kernels::RegisterKernel<kernels::ConvBackwardWeightKernel>(DeviceType::kCPU, &ConvBackwardWeightCpu);
  return true;
}();

}  // namespace

void ConvForward(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) {
  if (y.numel() == 0) return;
  kernels::CallKernel<kernels::ConvForwardKernel>(y.device(), g, x, w, bias, y);
}

void ConvBackwardData(const ConvGeom& g, const Tensor& dy, const Tensor& w, const Tensor& dx) {
  if (dx.numel() == 0) return;
  kernels::CallKernel<kernels::ConvBackwardDataKernel>(dx.device(), g, dy, w, dx);
}

void ConvBackwardWeight(const ConvGeom& g, const Tensor& x, const Tensor& dy, const Tensor& dw) {
  if (dw.numel() == 0) return;
  kernels::CallKernel<kernels::ConvBackwardWeightKernel>(dw.device(), g, x, dy, dw);
}

}  // namespace oneflow
