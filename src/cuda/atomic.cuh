// Atomic adds of the CUDA kernels that add into shared positions (index.cu, pad.cu): one
// AtomicAdd per dtype (the one-byte ones through a compare-and-swap), and their dtype dispatch.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

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

// One-byte dtypes: the device has no 8-bit atomics, so the aligned 32-bit word holding the byte
// is swapped in a compare-and-swap loop (as PyTorch's CUDA backend does). The word never leaves
// the allocation: device allocations are 256-byte aligned and at least 512 bytes (allocator.cpp).
// bool adds are ors (True + True is True, PyTorch's bool add).
template <typename T>
__device__ inline void AtomicByte(T* p, T v) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  unsigned int* word = reinterpret_cast<unsigned int*>(a & ~uintptr_t(3));
  const unsigned int shift = static_cast<unsigned int>(a & 3) * 8;
  unsigned int old = *word, seen;
  do {
    seen = old;
    const T cur = static_cast<T>(static_cast<uint8_t>(seen >> shift));
    T next;
    if constexpr (std::is_same_v<T, bool>) next = cur || v;
    else next = static_cast<T>(cur + v);  // wraps, as the CPU's 8-bit add
    const unsigned int bits = (seen & ~(0xffu << shift)) | (static_cast<unsigned int>(static_cast<uint8_t>(next)) << shift);
    old = atomicCAS(word, seen, bits);
  } while (old != seen);
}
__device__ inline void AtomicAdd(bool* p, bool v) { AtomicByte(p, v); }
__device__ inline void AtomicAdd(int8_t* p, int8_t v) { AtomicByte(p, v); }
__device__ inline void AtomicAdd(uint8_t* p, uint8_t v) { AtomicByte(p, v); }

template <typename F>
void DispatchAtomic(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32: return f(Tag<float>{});
    case DType::kFloat64: return f(Tag<double>{});
    case DType::kFloat16: return f(Tag<Half>{});
    case DType::kBFloat16: return f(Tag<BFloat16>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kInt64: return f(Tag<int64_t>{});
    case DType::kBool: return f(Tag<bool>{});
    case DType::kInt8: return f(Tag<int8_t>{});
    case DType::kUInt8: return f(Tag<uint8_t>{});
    default:
      OF_THROW(kNotImplemented) << "adding into " << DTypeName(t)
                                << " CUDA tensors at indices is not implemented yet; move them to the CPU with .cpu()";
  }
}

}  // namespace oneflow::cuda
