// Host entry points of the CUDA kernels of non-pointwise ops (the pointwise ones come from the
// shared functors, Note [CUDA pointwise kernels]). An op's C++ entry checks its arguments and
// makes its outputs as on the CPU, then branches here for CUDA tensors (docs/cuda.md, "How to add
// a CUDA kernel"). No CUDA headers: any .cpp may include this.
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

// softmax.cu (registered for kernels/softmax.h). x and out contiguous, viewed as [outer, n, inner] with n the softmax dim.
// mode: 0 softmax, 1 log_softmax, 2 softmin (softmax of -x).
void SoftmaxForward(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, int mode);
// softmax: out = y * (g - sum(g * y)); log_softmax: out = g - exp(y) * sum(g). All contiguous.
void SoftmaxBackward(const Tensor& g, const Tensor& y, const Tensor& out, int64_t outer, int64_t n,
                     int64_t inner, bool log);

// random.cu (its fills are the CUDA kernels of kernels/random_fill.h, dropout's those of
// kernels/dropout.h through cuda/dropout.cpp, Note [Kernel registry]):
// dropout (ops/dropout_ops.cpp): element i is kept when (word i >> 8) < bound; x, out, mask
// contiguous. BernoulliNoise: keep_value where kept, else 0.
void Dropout(const Tensor& x, const Tensor& out, const Tensor& mask, uint32_t bound, double scale, uint64_t seed,
             uint64_t offset);
void BernoulliNoise(const Tensor& out, uint32_t bound, double keep_value, uint64_t seed, uint64_t offset);
// out = mask ? grad * scale : 0 in the compute type (grad, mask, out contiguous, one shape).
void DropoutBackward(const Tensor& grad, const Tensor& mask, double scale, const Tensor& out);

// pad.cu (ops/padding_ops.cpp): x and out contiguous, padded from dim `first` on; maps (int64 on
// the device) holds each padded dim's output -> input position map (-1: the constant), in dim
// order; fill: host bytes of the constant. Backward: out (zeroed, the input's shape) += g
// through the maps, atomically (kAtomicAddDTypes, cuda/index.h).
void PadForward(const Tensor& x, const Tensor& out, int first, const Tensor& maps, const void* fill);
void PadBackward(const Tensor& g, const Tensor& out, int first, const Tensor& maps);

// resample.cu (kernels/resample.h through cuda/resample_passes.cpp): one separable pass
// y[o, p, k] = sum over j in [start[p], start[p + 1]) of w[j] * x[o, idx[j], k]; x [outer, n_in,
// inner] and y [outer, n_out, inner] contiguous floating tensors; start, idx (int64) and w
// (float64 when x or y is, else float32) on the device.
void ResamplePass(const Tensor& x, const Tensor& y, int64_t outer, int64_t n_in, int64_t n_out, int64_t inner,
                  const Tensor& start, const Tensor& idx, const Tensor& w);

// scan.cu (registered for kernels/scan.h): cumsum (kind 0), cumprod (1), logcumsumexp (2) of contiguous x into out (same dtype),
// viewed as [outer, n, inner] with n the scanned dim; `reverse` scans from the end.
void Scan(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, int kind, bool reverse);
// cummax (max) / cummin of contiguous x, same view: the running extreme into values (x's dtype)
// and its position along n into indices (int64), by the CPU's rule (NaN and ties take over).
void CumExtreme(const Tensor& x, const Tensor& values, const Tensor& indices, int64_t outer, int64_t n,
                int64_t inner, bool max);

}  // namespace oneflow::cuda
