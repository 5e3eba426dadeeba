// Note [Complex on CUDA]: complex64 / complex128 in the CUDA pointwise engine.
//
// The shared functors (kernels/functors.h) compute complex values with std::exp, std::abs,
// std::pow, ... of std::complex, and those are host-only functions. CUDA kernels therefore store
// and compute complex elements as ::cuda::std::complex<T> (libcu++: the same layout, two T), the
// type DevType<T> maps the dispatch types to, and kernels/complex_std.h gives the functors'
// qualified std::exp(x) & co. an overload for it that calls libcu++'s device implementation
// (functors.h includes it first when nvcc compiles: a qualified call in a template only sees the
// overloads declared before the template). kIsCplx / kIsComplexT / RealOf learn the type as well, so the functors' complex
// branches (abs's modulus, sgn, isinf of either part, angle) are the ones the CPU runs.
#pragma once
#include <complex>

#include "core/dtype.h"
#include "kernels/complex_std.h"
#include "kernels/functors.h"
#include "kernels/reducers.h"
#include "ops/pointwise_kinds.h"


namespace oneflow {

template <typename T> constexpr bool kIsCplx<::cuda::std::complex<T>> = true;
template <typename T> constexpr bool kIsComplexT<::cuda::std::complex<T>> = true;
template <typename T> struct RealOf<::cuda::std::complex<T>> { using type = T; };
namespace reducers {
template <typename T> struct ComplexAcc<::cuda::std::complex<T>> { using type = ::cuda::std::complex<double>; };
}  // namespace reducers

namespace cuda {

// The element type a CUDA kernel uses for a dispatch type.
template <typename T> struct DevTypeT { using type = T; };
template <typename T> struct DevTypeT<std::complex<T>> { using type = ::cuda::std::complex<T>; };
template <typename T> using DevType = typename DevTypeT<T>::type;

// Same size; libcu++ aligns complex<T> to 2 * sizeof(T), which every complex element of our
// tensors is (storage is 256-byte aligned and complex offsets count whole elements).
static_assert(sizeof(::cuda::std::complex<float>) == sizeof(std::complex<float>) &&
              sizeof(::cuda::std::complex<double>) == sizeof(std::complex<double>));

}  // namespace cuda
}  // namespace oneflow
