// Atomic adds of the CUDA kernels that add into shared positions (index.cu, pad.cu): one
// AtomicAdd per dtype the device adds natively, and the dtype dispatch that names the others.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "core/dtype.h"
#include "core/error.h"

namespace oneflow::cuda {

__device__ inline void AtomicAdd(float* p, float v) { atomicAdd(p, v); }
__device__ inline void AtomicAdd(double* p, double v) { atomicAdd(p, v); }
__device__ inline void AtomicAdd(Half* p, float v) { atomicAdd(reinterpret_cast<__half*>(p), __float2half(v)); }
__device__ inline void AtomicAdd(BFloat16* p, float v) {
  atomicAdd(reinterpret_cast<__nv_bfloat16*>(p), __float2bfloat16(v));
}
__device__ inline void AtomicAdd(int32_t* p, int32_t v) { atomicAdd(p, v); }
__device__ inline void AtomicAdd(int64_t* p, int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));  // two's complement
}

template <typename F>
void DispatchAtomic(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32: return f(Tag<float>{});
    case DType::kFloat64: return f(Tag<double>{});
    case DType::kFloat16: return f(Tag<Half>{});
    case DType::kBFloat16: return f(Tag<BFloat16>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kInt64: return f(Tag<int64_t>{});
    default:
      OF_THROW(kNotImplemented) << "adding into " << DTypeName(t)
                                << " CUDA tensors at indices is not implemented yet; move them to the CPU with .cpu()";
  }
}

}  // namespace oneflow::cuda
