// Atomic updates of the CUDA kernels that write shared positions (index.cu, pad.cu): AtomicAdd per
// dtype, AtomicUpdate (a compare-and-swap loop) for the rest, and the dtype dispatch of the adds.
#pragma once
#include <cuda/std/complex>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
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

// *p = f(*p) atomically, for any 1-, 2-, 4- or 8-byte T: a compare-and-swap loop on the value's
// bits (for one byte, on the aligned 32-bit word holding it: the device has no 8-bit CAS; the word
// never leaves the allocation, device allocations being 256-byte aligned and at least 512 bytes).
// Serves the adds the device lacks (bool, int8, uint8) and scatter's multiply / max / min.
template <typename T, typename F>
__device__ inline void AtomicUpdate(T* p, F f) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "AtomicUpdate: size");
  if constexpr (sizeof(T) == 1) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    unsigned int* word = reinterpret_cast<unsigned int*>(a & ~uintptr_t(3));
    const unsigned int shift = static_cast<unsigned int>(a & 3) * 8;
    unsigned int old = *word, seen;
    do {
      seen = old;
      const uint8_t cur_bits = static_cast<uint8_t>(seen >> shift);
      T cur;
      memcpy(&cur, &cur_bits, 1);
      const T next = f(cur);
      uint8_t next_bits;
      memcpy(&next_bits, &next, 1);
      old = atomicCAS(word, seen, (seen & ~(0xffu << shift)) | (static_cast<unsigned int>(next_bits) << shift));
    } while (old != seen);
  } else {
    using U = std::conditional_t<sizeof(T) == 2, unsigned short,
                                 std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>>;
    U* bits = reinterpret_cast<U*>(p);
    U old = *bits, seen;
    do {
      seen = old;
      T cur;
      memcpy(&cur, &seen, sizeof(T));
      const T next = f(cur);
      U next_bits;
      memcpy(&next_bits, &next, sizeof(T));
      old = atomicCAS(bits, seen, next_bits);
    } while (old != seen);
  }
}

// bool adds are ors (True + True is True, PyTorch's bool add); 8- and 16-bit adds wrap, as the CPU's.
__device__ inline void AtomicAdd(bool* p, bool v) { AtomicUpdate(p, [v](bool c) { return c || v; }); }
__device__ inline void AtomicAdd(int8_t* p, int8_t v) {
  AtomicUpdate(p, [v](int8_t c) { return static_cast<int8_t>(c + v); });
}
__device__ inline void AtomicAdd(uint8_t* p, uint8_t v) {
  AtomicUpdate(p, [v](uint8_t c) { return static_cast<uint8_t>(c + v); });
}
__device__ inline void AtomicAdd(int16_t* p, int16_t v) {
  AtomicUpdate(p, [v](int16_t c) { return static_cast<int16_t>(c + v); });
}

// Complex values (the CUDA kernels' ::cuda::std::complex, Note [Complex on CUDA]): one atomic
// add per component, on the real and on the imaginary part (the element is two T, real first).
// The pair is not one atomic step -- a concurrent reader may see one part added -- but no add is
// lost, so once the kernel ends each element is the sum of everything added into it, as for the
// real dtypes (only the rounding order varies).
template <typename T> constexpr bool kIsDeviceComplex = false;
template <typename T> constexpr bool kIsDeviceComplex<::cuda::std::complex<T>> = true;

template <typename T>
__device__ inline void AtomicAdd(::cuda::std::complex<T>* p, ::cuda::std::complex<T> v) {
  T* parts = reinterpret_cast<T*>(p);
  atomicAdd(parts, v.real());
  atomicAdd(parts + 1, v.imag());
}

// Every dtype has an atomic add, so the kernels that add (index_add, pad's backward, scatter's
// add, index_put's accumulate) register for all dtypes (Note [Kernel registry]).
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
    case DType::kInt16: return f(Tag<int16_t>{});
    case DType::kComplex64: return f(Tag<::cuda::std::complex<float>>{});
    case DType::kComplex128: return f(Tag<::cuda::std::complex<double>>{});
    default:
      OF_ASSERT(false) << "no atomic add for " << DTypeName(t) << " (a dtype added without one)";
  }
}

}  // namespace oneflow::cuda
