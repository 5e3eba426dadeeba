// Note [Complex on CUDA] (cuda/complex.cuh): std::exp, std::abs, ... for libcu++'s complex, so
// that the shared functors' qualified calls compile in device code. Declaring overloads in
// namespace std is formally an extension of std; only nvcc-compiled code includes this (from
// kernels/functors.h), and the overloads take a type no other code uses, so nothing else can pick
// them.
#pragma once
#include <cuda/std/complex>

namespace std {

#define OF_CUDA_COMPLEX_FN(fn)                                                        \
  template <typename T>                                                               \
  __host__ __device__ inline ::cuda::std::complex<T> fn(const ::cuda::std::complex<T>& z) { \
    return ::cuda::std::fn(z);                                                        \
  }
OF_CUDA_COMPLEX_FN(exp)
OF_CUDA_COMPLEX_FN(log)
OF_CUDA_COMPLEX_FN(sqrt)
OF_CUDA_COMPLEX_FN(sin)
OF_CUDA_COMPLEX_FN(cos)
OF_CUDA_COMPLEX_FN(tanh)
OF_CUDA_COMPLEX_FN(log10)
OF_CUDA_COMPLEX_FN(tan)
OF_CUDA_COMPLEX_FN(asin)
OF_CUDA_COMPLEX_FN(acos)
OF_CUDA_COMPLEX_FN(atan)
OF_CUDA_COMPLEX_FN(sinh)
OF_CUDA_COMPLEX_FN(cosh)
OF_CUDA_COMPLEX_FN(asinh)
OF_CUDA_COMPLEX_FN(acosh)
OF_CUDA_COMPLEX_FN(atanh)
OF_CUDA_COMPLEX_FN(conj)
#undef OF_CUDA_COMPLEX_FN

template <typename T>
__host__ __device__ inline T abs(const ::cuda::std::complex<T>& z) { return ::cuda::std::abs(z); }
template <typename T>
__host__ __device__ inline T arg(const ::cuda::std::complex<T>& z) { return ::cuda::std::arg(z); }
// pow is exp(b * log(a)) as glibc's cpow (the CPU kernels' reference through libstdc++), which
// libcu++'s pow computes too: a zero base gives 0, inf + nan i or nan by the sign of b's parts.
template <typename T>
__host__ __device__ inline ::cuda::std::complex<T> pow(const ::cuda::std::complex<T>& a,
                                                       const ::cuda::std::complex<T>& b) {
  return ::cuda::std::pow(a, b);
}

}  // namespace std
