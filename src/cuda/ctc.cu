// ctc_loss and its backward on CUDA (kernels/ctc.h; kernels/ctc.cpp has the CPU loops):
// the same recursions in log space and float64. alpha and beta run one block per batch element,
// its threads over the extended target's positions s, one time step after the other (a barrier
// between steps: step t reads step t -/+ 1). The gradient collects, per (t, b), the sum over the
// positions of each label in one thread, in the CPU's order of s, then maps every element.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cuda/launch.cuh"
#include "cuda/ops.h"
#include "cuda/runtime.h"
#include "decl/empty.h"
#include "decl/reshape.h"
#include "kernels/ctc.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

constexpr int kCtcThreads = 256;

__device__ inline double CtcLogAdd(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  const double m = a > b ? a : b;
  return m + log1p(exp(-fabs(a - b)));
}

// Per batch element: input length, target length, offset of its labels in `targets`.
struct CtcRows {
  const int64_t* in_len;
  const int64_t* tgt_len;
  const int64_t* tgt_off;
};

// s-th symbol of the extended target (blank, y1, blank, y2, ..., blank).
__device__ inline int64_t CtcLabel(const int64_t* targets, int64_t off, int64_t s, int64_t blank) {
  return s % 2 == 0 ? blank : targets[off + (s - 1) / 2];
}

// la [N, Tmax, smax]: log alpha of element b at (t, s) for t < T_b, s < S_b; nll [N].
__global__ void __launch_bounds__(kCtcThreads) CtcAlphaKernel(const double* lp, const int64_t* targets, CtcRows r,
                                                              int64_t n, int64_t c, int64_t tmax, int64_t smax,
                                                              int64_t blank, bool zero_infinity, double* la,
                                                              double* nll) {
  const int64_t b = blockIdx.x;
  const int64_t T = r.in_len[b], S = 2 * r.tgt_len[b] + 1, off = r.tgt_off[b];
  double* a = la + b * tmax * smax;
  if (T == 0) {
    if (threadIdx.x == 0) nll[b] = S == 1 ? 0.0 : (zero_infinity ? 0.0 : INFINITY);
    return;
  }
  for (int64_t s = threadIdx.x; s < S; s += blockDim.x)
    a[s] = s < 2 ? lp[b * c + CtcLabel(targets, off, s, blank)] : -INFINITY;
  __syncthreads();
  for (int64_t t = 1; t < T; ++t) {
    const double* prev = a + (t - 1) * smax;
    double* cur = a + t * smax;
    const double* lpt = lp + (t * n + b) * c;
    for (int64_t s = threadIdx.x; s < S; s += blockDim.x) {
      const int64_t l = CtcLabel(targets, off, s, blank);
      double v = prev[s];
      if (s >= 1) v = CtcLogAdd(v, prev[s - 1]);
      if (s >= 2 && l != blank && l != CtcLabel(targets, off, s - 2, blank)) v = CtcLogAdd(v, prev[s - 2]);
      cur[s] = v == -INFINITY ? -INFINITY : v + lpt[l];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    double ll = a[(T - 1) * smax + S - 1];
    if (S > 1) ll = CtcLogAdd(ll, a[(T - 1) * smax + S - 2]);
    nll[b] = zero_infinity && ll == -INFINITY ? 0.0 : -ll;
  }
}

// lb [N, Tmax, smax]: log beta, from the last step back.
__global__ void __launch_bounds__(kCtcThreads) CtcBetaKernel(const double* lp, const int64_t* targets, CtcRows r,
                                                             int64_t n, int64_t c, int64_t tmax, int64_t smax,
                                                             int64_t blank, double* lb) {
  const int64_t b = blockIdx.x;
  const int64_t T = r.in_len[b], S = 2 * r.tgt_len[b] + 1, off = r.tgt_off[b];
  if (T == 0) return;
  double* bt = lb + b * tmax * smax;
  const double* lpl = lp + ((T - 1) * n + b) * c;
  for (int64_t s = threadIdx.x; s < S; s += blockDim.x)
    bt[(T - 1) * smax + s] = s >= S - 2 ? lpl[CtcLabel(targets, off, s, blank)] : -INFINITY;
  __syncthreads();
  for (int64_t t = T - 2; t >= 0; --t) {
    const double* next = bt + (t + 1) * smax;
    double* cur = bt + t * smax;
    const double* lpt = lp + (t * n + b) * c;
    for (int64_t s = threadIdx.x; s < S; s += blockDim.x) {
      const int64_t l = CtcLabel(targets, off, s, blank);
      double v = next[s];
      if (s + 1 < S) v = CtcLogAdd(v, next[s + 1]);
      if (s + 2 < S && l != blank && l != CtcLabel(targets, off, s + 2, blank)) v = CtcLogAdd(v, next[s + 2]);
      cur[s] = v == -INFINITY ? -INFINITY : v + lpt[l];
    }
    __syncthreads();
  }
}

// grad [Tmax, N, C] (filled with -inf before): per (t, b) with t < T_b, the log of the sum of
// alpha * beta over the positions of each label, in order of s (one thread per (t, b)).
__global__ void CtcCollectKernel(const int64_t* targets, CtcRows r, int64_t n, int64_t c, int64_t tmax,
                                 int64_t smax, int64_t blank, const double* la, const double* lb, double* grad) {
  OF_GRID_LOOP(e, tmax * n) {
    const int64_t t = e / n, b = e % n;
    if (t >= r.in_len[b]) continue;
    const int64_t S = 2 * r.tgt_len[b] + 1, off = r.tgt_off[b];
    const double* a = la + (b * tmax + t) * smax;
    const double* be = lb + (b * tmax + t) * smax;
    double* lc = grad + e * c;
    for (int64_t s = 0; s < S; ++s) {
      const int64_t l = CtcLabel(targets, off, s, blank);
      lc[l] = CtcLogAdd(lc[l], a[s] + be[s]);
    }
  }
}

// grad = (exp(lp) - exp(lcab + nll - lp)) * scale[b]; 0 past T_b and where zero_infinity zeroes
// an infinite loss.
__global__ void CtcGradKernel(const double* lp, CtcRows r, int64_t n, int64_t c, int64_t total, const double* nll,
                              const double* scale, bool zero_infinity, double* grad) {
  OF_GRID_LOOP(e, total) {
    const int64_t t = e / (n * c), b = (e / c) % n;
    const double l = nll[b];
    if (t >= r.in_len[b] || (zero_infinity && isinf(l))) {
      grad[e] = 0.0;
      continue;
    }
    const double lpc = lp[e];
    grad[e] = (exp(lpc) - exp(grad[e] + l - lpc)) * scale[b];
  }
}

CtcRows RowsOf(const Tensor& rows) {  // [3, N] int64: input lengths, target lengths, offsets
  const int64_t n = rows.numel() / 3;
  const int64_t* p = rows.ptr<int64_t>();
  return CtcRows{p, p + n, p + 2 * n};
}

cudaStream_t StreamFor(const Tensor& t) { return static_cast<cudaStream_t>(Stream(t.device().index)); }

}  // namespace

void CtcAlpha(const Tensor& lp, const Tensor& targets, const Tensor& rows, int64_t blank, int64_t smax,
              bool zero_infinity, const Tensor& la, const Tensor& nll) {
  const int64_t tmax = lp.sizes()[0], n = lp.sizes()[1], c = lp.sizes()[2];
  if (n == 0) return;
  DeviceGuard guard(lp.device().index);
  CtcAlphaKernel<<<static_cast<unsigned>(n), kCtcThreads, 0, StreamFor(lp)>>>(
      lp.ptr<double>(), targets.ptr<int64_t>(), RowsOf(rows), n, c, tmax, smax, blank, zero_infinity,
      la.ptr<double>(), nll.ptr<double>());
  CheckLaunch("the ctc_loss alpha kernel");
}

void CtcGrad(const Tensor& lp, const Tensor& targets, const Tensor& rows, int64_t blank, int64_t smax,
             const Tensor& la, const Tensor& nll, const Tensor& scale, bool zero_infinity, const Tensor& lb,
             const Tensor& grad) {
  const int64_t tmax = lp.sizes()[0], n = lp.sizes()[1], c = lp.sizes()[2];
  if (grad.numel() == 0) return;
  DeviceGuard guard(lp.device().index);
  const cudaStream_t st = StreamFor(lp);
  const CtcRows r = RowsOf(rows);
  CtcBetaKernel<<<static_cast<unsigned>(n), kCtcThreads, 0, st>>>(lp.ptr<double>(), targets.ptr<int64_t>(), r, n, c,
                                                                 tmax, smax, blank, lb.ptr<double>());
  CtcCollectKernel<<<GridFor(tmax * n), kGridThreads, 0, st>>>(targets.ptr<int64_t>(), r, n, c, tmax, smax, blank,
                                                               la.ptr<double>(), lb.ptr<double>(), grad.ptr<double>());
  CtcGradKernel<<<GridFor(grad.numel()), kGridThreads, 0, st>>>(lp.ptr<double>(), r, n, c, grad.numel(),
                                                               nll.ptr<double>(), scale.ptr<double>(), zero_infinity,
                                                               grad.ptr<double>());
  CheckLaunch("the ctc_loss backward kernels");
}

}  // namespace oneflow::cuda

// The registry's entries (kernels/ctc.h): the problem's tables uploaded, then the kernels above.
namespace oneflow::cuda {

namespace {

// The device side of a problem: log_probs as [T, N, C], the labels, the per-element rows, and
// the alpha buffer.
struct CtcDevice {
  Tensor lp, targets, rows, la;
  int64_t smax = 1;
};

CtcDevice OnDevice(const CtcProblem& p, const Device& device) {
  CtcDevice d;
  d.lp = Reshape(p.lp, DimVector{p.T, p.N, p.C});
  d.targets = MovedTo(p.targets, device);
  std::vector<int64_t> rows(p.in_len);
  rows.insert(rows.end(), p.tgt_len.begin(), p.tgt_len.end());
  rows.insert(rows.end(), p.tgt_off.begin(), p.tgt_off.end());
  d.rows = VectorTensor(rows, device);
  for (int64_t l : p.tgt_len) d.smax = std::max(d.smax, 2 * l + 1);
  d.la = Empty(DimVector{p.N, p.T, d.smax}, DType::kFloat64, device);
  return d;
}

void Nll(const CtcProblem& p, bool zero_infinity, const Tensor& nll) {
  const CtcDevice d = OnDevice(p, nll.device());
  CtcAlpha(d.lp, d.targets, d.rows, p.blank, d.smax, zero_infinity, d.la, nll);
}

void Grad(const CtcProblem& p, const Tensor& scale, bool zero_infinity, const Tensor& grad) {
  const CtcDevice d = OnDevice(p, grad.device());
  const Tensor nll = Empty(DimVector{p.N}, DType::kFloat64, grad.device());
  CtcAlpha(d.lp, d.targets, d.rows, p.blank, d.smax, false, d.la, nll);
  FillWith(grad, Scalar(-std::numeric_limits<double>::infinity()));  // CtcGrad's precondition
  const Tensor lb = Empty(DimVector{p.N, p.T, d.smax}, DType::kFloat64, grad.device());
  CtcGrad(d.lp, d.targets, d.rows, p.blank, d.smax, d.la, nll, scale, zero_infinity, lb, grad);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterCtcKernels() {
  kernels::RegisterKernel<kernels::CtcNllKernel>(DeviceType::kCUDA, &Nll);
  kernels::RegisterKernel<kernels::CtcGradKernel>(DeviceType::kCUDA, &Grad);
}

}  // namespace oneflow::cuda
