// The CUDA half of the pointwise engine (docs/architecture.md §4, Note [CUDA pointwise kernels] in
// ops/pointwise_kinds.h). It runs the LoopPlan the generic body already made (broadcast byte
// strides, coalesced dims) with the same functors as the CPU loops (kernels/functors*.h, callable
// on the device through OF_HD): no op has CUDA code of its own. Two kernels per (functor, dtype):
// a flat one when every operand is contiguous or a host scalar, and a strided one that unravels
// the index per element (in 32-bit arithmetic with multiply-high divisions whenever every offset
// fits, as nearly always; 64-bit otherwise). Each thread handles kUnroll elements kThreads apart, loading all of
// them before computing (loads in flight hide latency; element i is read and written by the
// same thread, so in-place operands are safe).
#pragma once
#include <cuda_runtime.h>

#include <cstring>

#include "cuda/complex.cuh"
#include "cuda/fast_div.cuh"
#include "cuda/runtime.h"
#include "ops/pointwise_kinds.h"

namespace oneflow::cuda {

constexpr int kThreads = 256, kUnroll = 4;

// The operands of a launch: base pointers, and the host scalars' bytes.
struct KernelOperands {
  char* base[kMaxOperands];
  bool host[kMaxOperands];
  uint64_t bits[kMaxOperands][2];

  void Fill(const LoopPlan& plan, const CudaLaunch& l, int operands) {
    for (int o = 0; o < operands; ++o) {
      base[o] = plan.base[o];
      host[o] = l.host[o];
      bits[o][0] = l.bits[o][0];
      bits[o][1] = l.bits[o][1];
    }
  }
};

// LoopPlan + host scalars, passed by value as the kernel's parameter. Unravel adds element
// `rem`'s byte offset within each of the first K operands to off[k] (64-bit division per dim).
struct KernelPlan : KernelOperands {
  using Index = int64_t;
  int ndim = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxOperands][kMaxDims];

  template <int K>
  __device__ __forceinline__ void Unravel(int64_t rem, int64_t* off) const {
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t idx = rem % sizes[d];
      rem /= sizes[d];
#pragma unroll
      for (int k = 0; k < K; ++k) off[k] += idx * strides[k][d];
    }
  }
};

template <typename T>
__device__ __forceinline__ T FromBits(const uint64_t* b) {
  T v;
  memcpy(&v, b, sizeof(T));
  return v;
}

template <int N, typename R, typename M, typename F>
__device__ __forceinline__ R Apply(const F& f, const M* v) {
  if constexpr (N == 1) return static_cast<R>(f(v[0]));
  else if constexpr (N == 2) return static_cast<R>(f(v[0], v[1]));
  else return static_cast<R>(f(v[0], v[1], v[2]));
}

template <int N, typename R, typename T, typename F>
__global__ void __launch_bounds__(kThreads) FlatKernel(KernelPlan p, F f) {
  using M = OpMath<T>;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kThreads * kUnroll + threadIdx.x;
  M v[kUnroll][N > 0 ? N : 1];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const bool host = p.host[k + 1];
    const M hv = host ? static_cast<M>(FromBits<T>(p.bits[k + 1])) : M();
    const T* in = reinterpret_cast<const T*>(p.base[k + 1]);
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) {
      const int64_t i = first + j * kThreads;
      if (i < p.numel) v[j][k] = host ? hv : static_cast<M>(in[i]);
    }
  }
  R* out = reinterpret_cast<R*>(p.base[0]);
#pragma unroll
  for (int j = 0; j < kUnroll; ++j) {
    const int64_t i = first + j * kThreads;
    if (i < p.numel) out[i] = Apply<N, R>(f, v[j]);
  }
}

// One thread per kUnroll elements kThreads apart, at the offsets the plan unravels (Plan:
// KernelPlan, or KernelPlan32 under Note [32-bit strided kernels]).
template <int N, typename R, typename T, typename Plan, typename F>
__global__ void __launch_bounds__(kThreads) StridedKernel(Plan p, F f) {
  using M = OpMath<T>;
  using I = typename Plan::Index;
  const I first = static_cast<I>(blockIdx.x) * I(kThreads * kUnroll) + static_cast<I>(threadIdx.x);
  I off[kUnroll][N + 1];
  M v[kUnroll][N > 0 ? N : 1];
#pragma unroll
  for (int j = 0; j < kUnroll; ++j) {
    const I i = first + j * kThreads;
#pragma unroll
    for (int k = 0; k <= N; ++k) off[j][k] = 0;
    if (i >= p.numel) continue;
    p.template Unravel<N + 1>(i, off[j]);
#pragma unroll
    for (int k = 0; k < N; ++k)
      v[j][k] = p.host[k + 1] ? static_cast<M>(FromBits<T>(p.bits[k + 1]))
                              : static_cast<M>(*reinterpret_cast<const T*>(p.base[k + 1] + off[j][k + 1]));
  }
#pragma unroll
  for (int j = 0; j < kUnroll; ++j) {
    if (first + j * kThreads < p.numel)
      *reinterpret_cast<R*>(p.base[0] + off[j][0]) = Apply<N, R>(f, v[j]);
  }
}

// Note [32-bit strided kernels] (docs/cuda.md). The plan in 32-bit form, dims innermost first
// (so the unrolled loops index it with constants): for numel < 2^31 and every operand's byte
// offsets within +-2^31.
struct KernelPlan32 : KernelOperands {
  using Index = int32_t;  // (element indices below 2^31 - kThreads * kUnroll, offsets within +-2^31)
  int ndim = 0;
  int32_t numel = 0;
  FastDiv sizes[kMaxDims];
  int32_t strides[kMaxOperands][kMaxDims];

  // As KernelPlan::Unravel, with the divisions as multiply-highs.
  template <int K>
  OF_HD __forceinline__ void Unravel(int32_t i, int32_t* off) const {
    uint32_t rem = static_cast<uint32_t>(i);
#pragma unroll
    for (int d = 0; d < kMaxDims; ++d) {
      if (d == ndim - 1) {  // the outermost dim: the quotient left is its index
#pragma unroll
        for (int k = 0; k < K; ++k) off[k] += static_cast<int32_t>(rem) * strides[k][d];
        break;
      }
      const uint32_t q = sizes[d].Div(rem), idx = rem - q * sizes[d].d;
      rem = q;
#pragma unroll
      for (int k = 0; k < K; ++k) off[k] += static_cast<int32_t>(idx) * strides[k][d];
    }
  }
};

// Whether the 32-bit kernel can run the plan: numel and every operand's reach (the sum of
// (size - 1) |stride| over dims, in bytes) below 2^31, so no partial offset overflows.
inline bool Fits32(const LoopPlan& plan, int operands) {
  constexpr int64_t kLimit = int64_t(1) << 31;
  if (plan.numel >= kLimit - int64_t(kThreads) * kUnroll) return false;  // index math of the last block
  for (int o = 0; o < operands; ++o) {
    int64_t reach = 0;
    for (int d = 0; d < plan.ndim; ++d) {
      const int64_t st = plan.strides[o][d] < 0 ? -plan.strides[o][d] : plan.strides[o][d];
      reach += (plan.sizes[d] - 1) * st;
    }
    if (reach >= kLimit) return false;
  }
  return true;
}

template <int N, typename R, typename T, typename F>
void LaunchStrided32(const LoopPlan& plan, const CudaLaunch& l, const F& f, unsigned blocks, cudaStream_t s) {
  KernelPlan32 k;
  k.ndim = plan.ndim;
  k.numel = static_cast<int32_t>(plan.numel);
  for (int t = 0; t < plan.ndim; ++t) {
    const int d = plan.ndim - 1 - t;
    k.sizes[t] = FastDiv(static_cast<uint32_t>(plan.sizes[d]));
    for (int o = 0; o <= N; ++o) k.strides[o][t] = static_cast<int32_t>(plan.strides[o][d]);
  }
  k.Fill(plan, l, N + 1);
  StridedKernel<N, R, T><<<blocks, kThreads, 0, s>>>(k, f);
}

// Launches out = f(inputs) over the plan; R / T: stored output / input element types.
template <int N, typename R, typename T, typename F>
void LaunchPointwise(const LoopPlan& plan, const CudaLaunch& l, const F& f) {
  if (plan.numel == 0) return;
  KernelPlan k;
  k.ndim = plan.ndim;
  k.numel = plan.numel;
  bool flat = plan.ndim <= 1;
  for (int d = 0; d < plan.ndim; ++d) k.sizes[d] = plan.sizes[d];
  k.Fill(plan, l, N + 1);
  for (int o = 0; o <= N; ++o) {
    for (int d = 0; d < plan.ndim; ++d) k.strides[o][d] = plan.strides[o][d];
    const int64_t es = o == 0 ? sizeof(R) : sizeof(T);
    if (plan.ndim == 1 && !l.host[o] && plan.strides[o][0] != es) flat = false;
  }
  DeviceGuard g(l.device);
  const int64_t per_block = int64_t(kThreads) * kUnroll;
  const unsigned blocks = static_cast<unsigned>((plan.numel + per_block - 1) / per_block);
  cudaStream_t s = static_cast<cudaStream_t>(Stream(l.device));
  if (flat) FlatKernel<N, R, T><<<blocks, kThreads, 0, s>>>(k, f);
  else if (Fits32(plan, N + 1)) LaunchStrided32<N, R, T>(plan, l, f, blocks, s);
  else StridedKernel<N, R, T><<<blocks, kThreads, 0, s>>>(k, f);
  CheckLaunch("a pointwise kernel");
}

// The slot filler of Note [CUDA pointwise kernels]: dispatches the compute dtype as the CPU body
// does; complex dtypes (for functors that opt in) as libcu++'s complex (Note [Complex on CUDA]).
template <typename F, ResultKind RK, DTypeSet S, int N>
void RunPointwise(const LoopPlan& plan, const CudaLaunch& l, DType compute, const F& f) {
  if constexpr (kComplexKind<F> != 0) {
    if (IsComplex(compute)) {
      DispatchComplex(compute, [&](auto tag) {
        using T = DevType<typename std::decay_t<decltype(tag)>::type>;
        LaunchPointwise<N, OutT<F, RK, T>, T>(plan, l, f);
      });
      return;
    }
  }
  DispatchSet<S>(compute, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    LaunchPointwise<N, OutT<F, RK, T>, T>(plan, l, f);
  });
}

template <typename F, ResultKind RK, DTypeSet S, int N>
void RegisterPointwise() {
  CudaPointwise<F, RK, S, N>::run = &RunPointwise<F, RK, S, N>;
}

}  // namespace oneflow::cuda
