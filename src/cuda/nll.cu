// The rows of nll_loss / cross_entropy on CUDA (kernels/nll.h). The host side (ops/loss_nll*.cpp)
// range-checks the targets, derives the class weights and the per-position gradient scales as
// on the CPU, and reduces the per-position losses; these kernels do the work over the classes:
// one warp per position, lanes striding its row of classes (stride inner).
#include <cuda_runtime.h>

#include "cuda/runtime.h"
#include "cuda/warp.cuh"
#include "kernels/nll.h"

namespace oneflow::cuda {

namespace {

// A row's log-sum-exp as the CPU's RowLse (kernels/nll.cpp): max and log(sum(exp(x - max))) kept
// apart, -log p_c = (max - x_c) + logsum (large logits keep their log term); an all -inf row's
// max counts as 0, a +inf logit makes the row NaN (as PyTorch).
template <typename M>
struct DevRowLse {
  M max, logsum;
  __device__ double NegLogP(double xc) const { return (static_cast<double>(max) - xc) + static_cast<double>(logsum); }
  __device__ M LogP(M xc) const { return (xc - max) - logsum; }
};

template <typename T, typename M = OpMath<T>>
__device__ DevRowLse<M> WarpLogSumExp(const T* row, int64_t n, int64_t st, int lane) {
  M mx = -INFINITY;
  for (int64_t c = lane; c < n; c += kWarpThreads) {
    const M v = static_cast<M>(row[c * st]);
    mx = v > mx ? v : mx;
  }
  mx = WarpMax(mx);
  if (mx == -INFINITY) mx = 0;
  M s = 0;
  for (int64_t c = lane; c < n; c += kWarpThreads) s += DevExp(static_cast<M>(row[c * st]) - mx);
  return {mx, DevLog(WarpSum(s))};
}

template <typename T>
__global__ void __launch_bounds__(kWarpThreads * kRowWarps) LossKernel(const T* x, const int64_t* t, const double* q,
                                                                        const double* w, ClassRows g, double* loss) {
  using M = OpMath<T>;
  const int64_t pos = static_cast<int64_t>(blockIdx.x) * kRowWarps + threadIdx.x / kWarpThreads;
  if (pos >= g.outer * g.inner) return;
  const int lane = threadIdx.x % kWarpThreads;
  if (t != nullptr && t[pos] == g.ignore_index) {
    if (lane == 0) loss[pos] = 0;
    return;
  }
  const int64_t base = (pos / g.inner) * g.classes * g.inner + pos % g.inner, st = g.inner;
  const T* row = x + base;
  const DevRowLse<M> lse = g.log_softmax ? WarpLogSumExp(row, g.classes, st, lane) : DevRowLse<M>{0, 0};
  const double eps = g.smoothing, C = static_cast<double>(g.classes);
  double l;
  if (t != nullptr) {
    const int64_t y = t[pos];
    l = w[y] * lse.NegLogP(static_cast<M>(row[y * st]));
    if (eps > 0) {
      double smooth = 0;
      for (int64_t c = lane; c < g.classes; c += kWarpThreads)
        smooth += w[c] * lse.NegLogP(static_cast<M>(row[c * st]));
      l = (1 - eps) * l + eps / C * WarpSum(smooth);
    }
  } else {
    double acc = 0;
    for (int64_t c = lane; c < g.classes; c += kWarpThreads) {
      const double qc = (1 - eps) * q[base + c * st] + eps / C;
      acc += w[c] * qc * lse.NegLogP(static_cast<M>(row[c * st]));
    }
    l = WarpSum(acc);
  }
  if (lane == 0) loss[pos] = l;
}

template <typename T>
__global__ void __launch_bounds__(kWarpThreads * kRowWarps) CrossEntropyGradKernel(
    const T* x, const int64_t* t, const double* q, const double* w, const double* s, ClassRows g, double wall, T* out) {
  using M = OpMath<T>;
  const int64_t pos = static_cast<int64_t>(blockIdx.x) * kRowWarps + threadIdx.x / kWarpThreads;
  if (pos >= g.outer * g.inner) return;
  const int lane = threadIdx.x % kWarpThreads;
  const int64_t base = (pos / g.inner) * g.classes * g.inner + pos % g.inner, st = g.inner;
  const T* row = x + base;
  T* orow = out + base;
  const double sp = s[pos];
  if (sp == 0) {
    for (int64_t c = lane; c < g.classes; c += kWarpThreads) orow[c * st] = static_cast<T>(M(0));
    return;
  }
  const DevRowLse<M> lse = WarpLogSumExp(row, g.classes, st, lane);
  const double eps = g.smoothing, C = static_cast<double>(g.classes);
  if (t != nullptr) {
    const int64_t y = t[pos];
    const M sa = static_cast<M>(sp * ((1 - eps) * w[y] + eps / C * wall));
    const M sb = static_cast<M>(sp * eps / C);
    const M fix = static_cast<M>(sp * (1 - eps) * w[y]);
    for (int64_t c = lane; c < g.classes; c += kWarpThreads) {
      const M v = sa * DevExp(lse.LogP(static_cast<M>(row[c * st]))) - sb * static_cast<M>(w[c]);
      // The target's class: rounded to T first, then corrected, as the CPU loop does.
      orow[c * st] = c == y ? static_cast<T>(static_cast<M>(static_cast<T>(v)) - fix) : static_cast<T>(v);
    }
  } else {
    double a = 0;
    for (int64_t c = lane; c < g.classes; c += kWarpThreads) a += w[c] * ((1 - eps) * q[base + c * st] + eps / C);
    a = WarpSum(a);
    for (int64_t c = lane; c < g.classes; c += kWarpThreads) {
      const double qc = (1 - eps) * q[base + c * st] + eps / C;
      const double p = exp(-lse.NegLogP(static_cast<M>(row[c * st])));
      orow[c * st] = static_cast<T>(static_cast<M>(sp * (a * p - w[c] * qc)));
    }
  }
}

template <typename T>
__global__ void NllGradKernel(const int64_t* t, const double* w, const double* s, ClassRows g, T* out) {
  using M = OpMath<T>;
  const int64_t pos = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pos >= g.outer * g.inner) return;
  const int64_t y = t[pos];
  if (y == g.ignore_index) return;
  const int64_t o = pos / g.inner, k = pos % g.inner;
  out[(o * g.classes + y) * g.inner + k] = static_cast<T>(static_cast<M>(-w[y] * s[pos]));
}

const int64_t* TargetsOrNull(const Tensor& t) { return t.defined() ? t.ptr<int64_t>() : nullptr; }
const double* ProbsOrNull(const Tensor& q) { return q.defined() ? q.ptr<double>() : nullptr; }

}  // namespace

void ClassRowLosses(const Tensor& x, const Tensor& t, const Tensor& q, const Tensor& w, const ClassRows& g,
                    const Tensor& loss) {
  const int64_t positions = g.outer * g.inner;
  if (positions == 0) return;
  const int dev = x.device().index;
  DeviceGuard guard(dev);
  const unsigned blocks = RowBlocks(positions, "nll_loss");
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    LossKernel<T><<<blocks, kWarpThreads * kRowWarps, 0, static_cast<cudaStream_t>(Stream(dev))>>>(
        x.ptr<T>(), TargetsOrNull(t), ProbsOrNull(q), w.ptr<double>(), g, loss.ptr<double>());
  });
  CheckLaunch("the nll_loss / cross_entropy kernel");
}

void CrossEntropyRowGrads(const Tensor& x, const Tensor& t, const Tensor& q, const Tensor& w, const Tensor& s,
                          const ClassRows& g, double wall, const Tensor& out) {
  const int64_t positions = g.outer * g.inner;
  if (positions == 0) return;
  const int dev = x.device().index;
  DeviceGuard guard(dev);
  const unsigned blocks = RowBlocks(positions, "cross_entropy_backward");
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    CrossEntropyGradKernel<T><<<blocks, kWarpThreads * kRowWarps, 0, static_cast<cudaStream_t>(Stream(dev))>>>(
        x.ptr<T>(), TargetsOrNull(t), ProbsOrNull(q), w.ptr<double>(), s.ptr<double>(), g, wall, out.ptr<T>());
  });
  CheckLaunch("the cross_entropy backward kernel");
}

void NllRowGrads(const Tensor& t, const Tensor& w, const Tensor& s, const ClassRows& g, const Tensor& out) {
  const int64_t positions = g.outer * g.inner;
  if (positions == 0) return;
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  constexpr int kThreads = 256;
  const int64_t blocks = (positions + kThreads - 1) / kThreads;
  OF_CHECK(blocks < (int64_t(1) << 31)) << "nll_loss_backward(): too many positions for one CUDA launch";
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    NllGradKernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, static_cast<cudaStream_t>(Stream(dev))>>>(
        t.ptr<int64_t>(), w.ptr<double>(), s.ptr<double>(), g, out.ptr<T>());
  });
  CheckLaunch("the nll_loss backward kernel");
}

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterNllKernels() {
  kernels::RegisterKernel<kernels::ClassRowLossesKernel>(DeviceType::kCUDA, &ClassRowLosses);
  kernels::RegisterKernel<kernels::CrossEntropyRowGradsKernel>(DeviceType::kCUDA, &CrossEntropyRowGrads);
  kernels::RegisterKernel<kernels::NllRowGradsKernel>(DeviceType::kCUDA, &NllRowGrads);
}

}  // namespace oneflow::cuda
