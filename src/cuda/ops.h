// Host entry points of CUDA kernels that the src/cuda file registering a kernels/ interface calls
// (Note [Kernel registry]): launches with narrower contracts than the interface (contiguous
// operands, int64 indices in range), wrapped by the registered function. A function that
// implements an interface as it stands registers itself in its own file and is declared here not
// at all: the interface in kernels/ is its one declaration (tests/test_kernel_registry.py). The
// pointwise kernels come from the shared functors (Note [CUDA pointwise kernels]). No CUDA
// headers: any .cpp of src/cuda may include this.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace oneflow {
struct LoopPlan;
struct CudaLaunch;
}

namespace oneflow::cuda {

// select.cu (where, masked_fill: kernels/where.h through cuda/where.cpp): out = cond ? a : b
// elementwise over `plan`, whose operands are out, the bool condition, a and b (element_size
// bytes each; byte strides); with `fill` (host bytes of one element) the plan is out, condition,
// b and a is that value.
void WhereSelect(const LoopPlan& plan, int64_t element_size, const void* fill, int device);

// ctc.cu (registered for kernels/ctc.h): lp float64 [T, N, C] contiguous; targets int64 (each element's
// labels at its offset); rows int64 [3, N]: input lengths, target lengths, label offsets; smax =
// 2 max(target length) + 1. CtcAlpha fills la float64 [N, T, smax] and nll float64 [N] (0 for an
// infinite loss under zero_infinity). CtcGrad takes CtcAlpha's la and nll (computed without
// zero_infinity), scale float64 [N] (incoming gradient x the reduction's factor), lb a float64
// [N, T, smax] scratch, and writes grad float64 [T, N, C], which must hold -inf on entry.
void CtcAlpha(const Tensor& lp, const Tensor& targets, const Tensor& rows, int64_t blank, int64_t smax,
              bool zero_infinity, const Tensor& la, const Tensor& nll);
void CtcGrad(const Tensor& lp, const Tensor& targets, const Tensor& rows, int64_t blank, int64_t smax,
             const Tensor& la, const Tensor& nll, const Tensor& scale, bool zero_infinity, const Tensor& lb,
             const Tensor& grad);

// nextafter.cu: out = nextafter(a, b) of float16 / bfloat16 (dt) operands in the 16-bit format,
// over `plan` (out, a, b; CPU scalars by value in `l`).
void Nextafter16(const LoopPlan& plan, const CudaLaunch& l, DType dt);

// random.cu (its fills are the CUDA kernels of kernels/random_fill.h, dropout's those of
// kernels/dropout.h through cuda/dropout.cpp, Note [Kernel registry]):
// dropout (ops/dropout_ops.cpp): element i is kept when (word i >> 8) < bound; x, out, mask
// contiguous. BernoulliNoise: keep_value where kept, else 0.
void Dropout(const Tensor& x, const Tensor& out, const Tensor& mask, uint32_t bound, double scale, uint64_t seed,
             uint64_t offset);
void BernoulliNoise(const Tensor& out, uint32_t bound, double keep_value, uint64_t seed, uint64_t offset);
// out = mask ? grad * scale : 0 in the compute type (grad, mask, out contiguous, one shape).
void DropoutBackwardSameShape(const Tensor& grad, const Tensor& mask, double scale, const Tensor& out);

// pad.cu (ops/padding_ops.cpp): x and out contiguous, padded from dim `first` on; maps (int64 on
// the device) holds each padded dim's output -> input position map (-1: the constant), in dim
// order; fill: host bytes of the constant. Backward: out (zeroed, the input's shape) += g
// through the maps, atomically (any dtype, cuda/atomic.cuh).
void PadForward(const Tensor& x, const Tensor& out, int first, const Tensor& maps, const void* fill);
void PadBackward(const Tensor& g, const Tensor& out, int first, const Tensor& maps);

// resample.cu (kernels/resample.h through cuda/resample_passes.cpp): one separable pass
// y[o, p, k] = sum over j in [start[p], start[p + 1]) of w[j] * x[o, idx[j], k]; x [outer, n_in,
// inner] and y [outer, n_out, inner] contiguous floating tensors; start, idx (int64) and w
// (float64 when x or y is, else float32) on the device.
void ResamplePass(const Tensor& x, const Tensor& y, int64_t outer, int64_t n_in, int64_t n_out, int64_t inner,
                  const Tensor& start, const Tensor& idx, const Tensor& w);

}  // namespace oneflow::cuda
