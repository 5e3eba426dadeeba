// Row statistics on CUDA (kernels/row_stats.h, kernels/norm.h): var / std (two passes: the mean, then the squared
// deviations, in double as the CPU), logsumexp and vector norms, one block per row of the reduced elements
// (ops/reduce_util.h's ReducedLast rows).
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/runtime.h"
#include "cuda/warp.cuh"
#include "kernels/norm.h"
#include "kernels/row_stats.h"

namespace oneflow::cuda {

namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void MomentsKernel(const T* x, int64_t inner, double dof, bool take_sqrt, T* out, T* mean) {
  const T* row = x + static_cast<int64_t>(blockIdx.x) * inner;
  double s = 0;
  for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) s += static_cast<double>(static_cast<OpMath<T>>(row[i]));
  const double mu = BlockSum(s) / static_cast<double>(inner);
  double m2 = 0;
  for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) {
    const double d = static_cast<double>(static_cast<OpMath<T>>(row[i])) - mu;
    m2 += d * d;
  }
  m2 = BlockSum(m2);
  if (threadIdx.x == 0) {
    const double v = m2 / dof;
    out[blockIdx.x] = static_cast<T>(take_sqrt ? sqrt(v) : v);
    if (mean) mean[blockIdx.x] = static_cast<T>(mu);
  }
}

template <typename T>
__global__ void LogSumExpKernel(const T* x, int64_t inner, T* out) {
  using M = OpMath<T>;
  const T* row = x + static_cast<int64_t>(blockIdx.x) * inner;
  M mx = -INFINITY;
  for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) {
    const M v = static_cast<M>(row[i]);
    mx = v > mx || v != v ? v : mx;  // NaN propagates, as the CPU's max
  }
  mx = BlockMax(mx);
  const M shift = isinf(mx) ? M(0) : mx;
  double s = 0;
  for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) s += static_cast<double>(DevExp(static_cast<M>(row[i]) - shift));
  s = BlockSum(s);
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<T>(static_cast<double>(shift) + log(s));
}

// The p-norm of a row as the CPU's NormRow (ops/norm_ops.cpp): sums of |x|^p in double, the
// extremes of |x| (NaN wins) for p = +-inf, the count of nonzeros for p = 0.
template <typename T>
__global__ void NormKernel(const T* x, int64_t inner, double p, T* out) {
  const T* row = x + static_cast<int64_t>(blockIdx.x) * inner;
  auto at = [&](int64_t i) { return fabs(static_cast<double>(static_cast<OpMath<T>>(row[i]))); };
  double r;
  if (isinf(p)) {
    const bool is_max = p > 0;
    double m = is_max ? 0.0 : INFINITY;
    for (int64_t i = threadIdx.x; i < inner; i += blockDim.x)
      m = is_max ? NanMaxOp{}(m, at(i)) : NanMinOp{}(m, at(i));
    r = is_max ? BlockReduce(m, NanMaxOp{}) : BlockReduce(m, NanMinOp{});
  } else {
    double s = 0;
    for (int64_t i = threadIdx.x; i < inner; i += blockDim.x) {
      const double a = at(i);
      s += p == 2 ? a * a : p == 1 ? a : p == 0 ? (a != 0 ? 1.0 : 0.0) : pow(a, p);
    }
    s = BlockSum(s);
    r = p == 2 ? sqrt(s) : (p == 1 || p == 0) ? s : pow(s, 1.0 / p);
  }
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<T>(r);
}

void CheckRows(int64_t outer, const char* op) {
  OF_CHECK(outer < (int64_t(1) << 31)) << op << ": too many rows for one CUDA launch";
}

void RowMoments(const Tensor& rows, int64_t outer, int64_t inner, double dof, bool take_sqrt, const Tensor& out,
                const Tensor& mean) {
  if (outer == 0) return;
  CheckRows(outer, "var/std");
  DeviceGuard guard(out.device().index);
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    MomentsKernel<T><<<static_cast<unsigned>(outer), kThreads, 0, static_cast<cudaStream_t>(Stream(out.device().index))>>>(
        rows.ptr<T>(), inner, dof, take_sqrt, out.ptr<T>(), mean.defined() ? mean.ptr<T>() : nullptr);
  });
  CheckLaunch("the var/std kernel");
}

void RowLogSumExp(const Tensor& rows, int64_t outer, int64_t inner, const Tensor& out) {
  if (outer == 0) return;
  CheckRows(outer, "logsumexp");
  DeviceGuard guard(out.device().index);
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    LogSumExpKernel<T><<<static_cast<unsigned>(outer), kThreads, 0, static_cast<cudaStream_t>(Stream(out.device().index))>>>(
        rows.ptr<T>(), inner, out.ptr<T>());
  });
  CheckLaunch("the logsumexp kernel");
}

void RowNorm(const Tensor& rows, int64_t outer, int64_t inner, double p, const Tensor& out) {
  if (outer == 0) return;
  CheckRows(outer, "linalg.vector_norm");
  DeviceGuard guard(out.device().index);
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    NormKernel<T><<<static_cast<unsigned>(outer), kThreads, 0, static_cast<cudaStream_t>(Stream(out.device().index))>>>(
        rows.ptr<T>(), inner, p, out.ptr<T>());
  });
  CheckLaunch("the vector norm kernel");
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterRowStatsKernels() {
  kernels::RegisterKernel<kernels::RowNormKernel>(DeviceType::kCUDA, &RowNorm);
  kernels::RegisterKernel<kernels::RowMomentsKernel>(DeviceType::kCUDA, &RowMoments);
  kernels::RegisterKernel<kernels::RowLogSumExpKernel>(DeviceType::kCUDA, &RowLogSumExp);
}

}  // namespace oneflow::cuda
