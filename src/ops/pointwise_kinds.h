// What the CPU and CUDA pointwise bodies share: the result / dtype-set kinds of the op table,
// the compute-dtype dispatch, and the slots through which the CUDA engine's kernels are found
// (Note [CUDA pointwise kernels]). Kept apart from ops/pointwise.h so that the CUDA sources
// include no more host code than this.
#pragma once
#include <cstdint>

#include "core/dtype.h"
#include "core/error.h"
#include "kernels/functors.h"
#include "kernels/loop.h"

namespace oneflow {

enum class ResultKind { kSame, kFloat, kBool };      // output dtype vs computation dtype
enum class DTypeSet { kAll, kNumber, kIntegral, kFloat };  // dtypes an op computes in

template <DTypeSet S, typename F>
decltype(auto) DispatchSet(DType t, F&& f) {
  if constexpr (S == DTypeSet::kFloat) {
    return DispatchFloat(t, std::forward<F>(f));
  } else if constexpr (S == DTypeSet::kIntegral) {
    switch (t) {
      case DType::kBool: return f(Tag<bool>{});
      case DType::kInt8: return f(Tag<int8_t>{});
      case DType::kUInt8: return f(Tag<uint8_t>{});
      case DType::kInt16: return f(Tag<int16_t>{});
      case DType::kInt32: return f(Tag<int32_t>{});
      case DType::kInt64: return f(Tag<int64_t>{});
      default: break;
    }
    OF_THROW(kType) << "expected a bool or integer tensor, got " << DTypeName(t);
  } else {
    return DispatchAll(t, std::forward<F>(f));
  }
}

// Dispatches the compute dtype: complex to the complex types for functors that opt in, the rest
// through the op's real set.
template <typename F, DTypeSet S, typename G>
void DispatchCompute(DType compute, G&& g) {
  if (IsComplex(compute)) {
    if constexpr (kComplexKind<F> != 0) DispatchComplex(compute, std::forward<G>(g));
    return;
  }
  DispatchSet<S>(compute, std::forward<G>(g));
}

// The element type a functor's result is stored as (OutDType's C++ side).
template <typename T> struct RealOf { using type = T; };
template <typename T> struct RealOf<std::complex<T>> { using type = T; };
template <typename F, ResultKind RK, typename T>
using OutT = std::conditional_t<RK == ResultKind::kBool, bool,
                                std::conditional_t<kComplexKind<F> == 2, typename RealOf<T>::type, T>>;

// Note [CUDA pointwise kernels]: a pointwise op runs on CUDA through the same generic body as on
// the CPU; after meta inference the body finds the op's CUDA runner in the slot
// CudaPointwise<F, RK, S, N>::run (N inputs). The CUDA build fills the slots of every table op
// from generated code (pointwise_<family>_<k>_cuda.cu, src/cuda/pointwise.cuh) when the device is
// first used; an empty slot (a functor no table op uses, or a build without CUDA) is a
// NotImplementedError naming the op. Operands that are CPU scalars (Python numbers, 0-d CPU
// tensors) travel to the kernel by value.
struct CudaLaunch {
  int device = 0;
  bool host[kMaxOperands] = {};      // operand k is a one-element host tensor ...
  uint64_t bits[kMaxOperands][2] = {};  // ... holding these bytes (of the compute dtype, <= 16)
};
template <typename F, ResultKind RK, DTypeSet S, int N>
struct CudaPointwise {
  using Fn = void (*)(const LoopPlan&, const CudaLaunch&, DType compute, const F&);
  static inline Fn run = nullptr;
};

}  // namespace oneflow
