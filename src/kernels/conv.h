// Convolution kernels. One geometry describes a convolution relation y = conv(x, w) with 1-3
// spatial dims; the transposed convolution is the same relation read backwards (its input lives
// in y-space, its output in x-space), so three kernels serve all six public ops:
//   forward       y  = conv(x, w)          (convNd)
//   backward data dx = conv^T(dy, w)       (conv_transposeNd, and convNd's input gradient)
//   backward wt.  dw = sum x (*) dy        (conv_weight_grad)
// float32 runs on oneDNN or on im2col + OpenBLAS gemm (chosen per shape class by measurement,
// docs/decisions.md); float64 on im2col + OpenBLAS; integers on im2col + a reference gemm.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

struct ConvGeom {
  int k = 0;                 // spatial dims (1-3); unused trailing dims are 1
  int64_t n = 0, cx = 0, cy = 0, groups = 1;
  int64_t xs[3] = {1, 1, 1}, ys[3] = {1, 1, 1}, ks[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};

  int64_t XSpatial() const { return xs[0] * xs[1] * xs[2]; }
  int64_t YSpatial() const { return ys[0] * ys[1] * ys[2]; }
  int64_t KSpatial() const { return ks[0] * ks[1] * ks[2]; }
  // The right padding the sizes imply: transposed convolutions with output_padding have x
  // positions past the last window (negative or larger than pad); they get no contribution.
  int64_t PadR(int d) const { return (ys[d] - 1) * stride[d] + dil[d] * (ks[d] - 1) + 1 - xs[d] - pad[d]; }
  bool Is1x1() const {
    for (int d = 0; d < 3; ++d)
      if (ks[d] != 1 || stride[d] != 1 || pad[d] != 0 || xs[d] != ys[d]) return false;
    return true;
  }
};

// All tensors contiguous with the dtype of x (float32/float64/integers); outputs are written
// completely. bias may be undefined.
void ConvForward(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y);
void ConvBackwardData(const ConvGeom& g, const Tensor& dy, const Tensor& w, const Tensor& dx);
void ConvBackwardWeight(const ConvGeom& g, const Tensor& x, const Tensor& dy, const Tensor& dw);
// Their kernel interfaces (Note [Kernel registry]): CPU in kernels/conv.cpp (oneDNN or the GEMM
// forms), CUDA in cuda/cudnn_conv.cpp (cuDNN; none registered in a build without it).
namespace kernels {
struct ConvForwardKernel {
  static constexpr const char* kName = "conv_forward";
  using Fn = void (*)(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y);
  using Writes = KernelWrites<4>;
};
struct ConvBackwardDataKernel {
  static constexpr const char* kName = "conv_backward_data";
  using Fn = void (*)(const ConvGeom& g, const Tensor& dy, const Tensor& w, const Tensor& dx);
  using Writes = KernelWrites<3>;
};
struct ConvBackwardWeightKernel {
  static constexpr const char* kName = "conv_backward_weight";
  using Fn = void (*)(const ConvGeom& g, const Tensor& x, const Tensor& dy, const Tensor& dw);
  using Writes = KernelWrites<3>;
};
}  // namespace kernels

// The im2col + gemm implementation (every dtype); the reference the oneDNN path is tested against.
void GemmConvForward(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& y);
void GemmConvBackwardData(const ConvGeom& g, const Tensor& dy, const Tensor& w, const Tensor& dx);
void GemmConvBackwardWeight(const ConvGeom& g, const Tensor& x, const Tensor& dy, const Tensor& dw);
// t[:, c, ...] += bias[c] (t contiguous, channels at dim 1).
void AddChannelBias(const Tensor& t, const Tensor& bias);

}  // namespace oneflow
