// CPU kernels of the nll_loss / cross_entropy rows (kernels/nll.h): positions over threads, one
// pass per row for the log-sum-exp and one more for the loss or the gradient, in the math type
// with double accumulation of the weighted terms.
#include "kernels/nll.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/dtype.h"
#include "core/parallel.h"
#include "kernels/row_math.h"
#include "kernels/vec_math.h"

namespace oneflow {

namespace {

// A row's log-sum-exp kept as max + log(sum(exp(x - max))): -log softmax(x)_c is then
// (max - x_c) + logsum, as PyTorch's log_softmax forms it ((x - max) - log(sum)); max + logsum
// first would round away the log term of large logits (1e30, or 1e4 in float32). A row with a
// +inf logit gets NaN (inf - inf, as PyTorch); an all -inf row too (its max counts as 0).
template <typename M>
struct RowLse {
  M max, logsum;
  double NegLogP(double xc) const { return (static_cast<double>(max) - xc) + static_cast<double>(logsum); }
  M LogP(M xc) const { return (xc - max) - logsum; }
};

// RowLse over `n` classes at stride `st`.
template <typename T, typename M = OpMath<T>>
RowLse<M> RowLogSumExp(const T* x, int64_t n, int64_t st) {
  if constexpr (std::is_same_v<T, M>) {
    // Contiguous float / double rows with a finite max (every real logit row): the softmax
    // kernels' row loops (kernels/row_math.h: one vector register of lanes) and their exp for
    // x - max <= 0; the general loops below serve the rest (strided, 16-bit, inf rows).
    if (st == 1) {
      const M m = RowMax(x, n);
      if (std::isfinite(m)) {
        constexpr int L = kRowLanes<M>;
        M acc[L] = {};
        int64_t i = 0;
        for (; i + L <= n; i += L) {
#pragma omp simd
          for (int l = 0; l < L; ++l) acc[l] += VecExpNonPositive<M>(x[i + l] - m);
        }
        M sum = RowSum(acc, L);
        for (; i < n; ++i) sum += VecExpNonPositive<M>(x[i] - m);
        return {m, std::log(sum)};
      }
    }
  }
  M mx = -INFINITY;
  for (int64_t c = 0; c < n; ++c) {
    const M v = static_cast<M>(x[c * st]);
    mx = v > mx ? v : mx;
  }
  if (mx == -INFINITY) mx = 0;  // all -inf (or NaN) rows: logsum = -inf or NaN, NaN losses
  M sum = 0;
  for (int64_t c = 0; c < n; ++c) sum += VecExp(static_cast<M>(x[c * st]) - mx);
  return {mx, std::log(sum)};
}

// e[c] = exp(x[c] - max(x)) for a contiguous row of n >= 1 values (T = its own OpMath: float or
// double); returns sum(e). A finite max (every real logit row) takes the vectorised exp for
// x - max <= 0; otherwise an all -inf row uses 0 as the max (the sum is then 0: NaN gradients)
// and a +inf logit makes the row NaN (inf - inf), both as PyTorch.
template <typename T>
T SoftmaxNumerators(const T* x, T* e, int64_t n) {
  const T m = RowMax(x, n);
  if (std::isfinite(m)) {
    for (int64_t c = 0; c < n; ++c) e[c] = VecExpNonPositive<T>(x[c] - m);
  } else {
    const T mx = m == -INFINITY ? T(0) : m;
    for (int64_t c = 0; c < n; ++c) e[c] = VecExp(x[c] - mx);
  }
  return RowSum(e, n);
}

int64_t RowGrain(const ClassRows& g) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.classes)); }

void LossesCpu(const Tensor& x, const Tensor& t, const Tensor& q, const Tensor& w, const ClassRows& g,
               const Tensor& loss) {
  const double* wp = w.data<double>();
  double* lp = loss.data<double>();
  const double eps = g.smoothing, C = static_cast<double>(g.classes);
  const int64_t positions = g.outer * g.inner;
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* xp = x.data<T>();
    if (!t.defined()) {  // probability targets (cross_entropy): -sum_c w_c q'_c log p_c
      const double* qp = q.data<double>();
      ParallelFor(0, positions, RowGrain(g), [&](int64_t b, int64_t e) {
        for (int64_t pos = b; pos < e; ++pos) {
          const int64_t base = (pos / g.inner) * g.classes * g.inner + pos % g.inner;
          const RowLse<M> lse = RowLogSumExp<T>(xp + base, g.classes, g.inner);
          double l = 0;
          for (int64_t c = 0; c < g.classes; ++c) {
            const double qc = (1 - eps) * qp[base + c * g.inner] + eps / C;
            l += wp[c] * qc * lse.NegLogP(static_cast<M>(xp[base + c * g.inner]));
          }
          lp[pos] = l;
        }
      });
      return;
    }
    const int64_t* tp = t.data<int64_t>();
    ParallelFor(0, positions, RowGrain(g), [&](int64_t b, int64_t e) {
      for (int64_t pos = b; pos < e; ++pos) {
        const int64_t o = pos / g.inner, k = pos % g.inner, y = tp[pos];
        if (y == g.ignore_index) {
          lp[pos] = 0;
          continue;
        }
        const T* row = xp + o * g.classes * g.inner + k;
        // -log p_c: from the row's log-sum-exp (cross_entropy), or -x_c (nll_loss on log-probabilities)
        const RowLse<M> lse = g.log_softmax ? RowLogSumExp<T>(row, g.classes, g.inner) : RowLse<M>{0, 0};
        double l = wp[y] * lse.NegLogP(static_cast<M>(row[y * g.inner]));
        if (eps > 0) {
          double smooth = 0;
          for (int64_t c = 0; c < g.classes; ++c) smooth += wp[c] * lse.NegLogP(static_cast<M>(row[c * g.inner]));
          l = (1 - eps) * l + eps / C * smooth;
        }
        lp[pos] = l;
      }
    });
  });
}

void CrossEntropyGradsCpu(const Tensor& x, const Tensor& t, const Tensor& q, const Tensor& w, const Tensor& s,
                          const ClassRows& g, double wall, const Tensor& out) {
  const bool prob = !t.defined();
  const double* wp = w.data<double>();
  const double* sp = s.data<double>();
  const int64_t* tp = prob ? nullptr : t.data<int64_t>();
  const double eps = g.smoothing, C = static_cast<double>(g.classes);
  // No weight (all 1): the common rows skip the per-class multiply (the same values either way).
  const bool unit_weights = std::all_of(wp, wp + g.classes, [](double v) { return v == 1.0; });
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    ParallelFor(0, g.outer * g.inner, RowGrain(g), [&](int64_t b, int64_t e) {
      for (int64_t pos = b; pos < e; ++pos) {
        const int64_t base = (pos / g.inner) * g.classes * g.inner + pos % g.inner, st = g.inner;
        const T* row = xp + base;
        T* orow = op + base;
        if (sp[pos] == 0) {
          for (int64_t c = 0; c < g.classes; ++c) orow[c * st] = static_cast<T>(M(0));
          continue;
        }
        if constexpr (std::is_same_v<T, M>) {
          if (!prob && st == 1) {
            // The common case: contiguous float/double rows. softmax = e / sum(e) with
            // e = exp(x - max) written into the output row, then scaled in place: one exp per
            // class (the row stays in L1 between the passes).
            const int64_t y = tp[pos];
            const M sa = static_cast<M>(sp[pos] * ((1 - eps) * wp[y] + eps / C * wall));
            const M sb = static_cast<M>(sp[pos] * eps / C);
            const M k = sa / SoftmaxNumerators(row, orow, g.classes);
            if (unit_weights) {
              for (int64_t c = 0; c < g.classes; ++c) orow[c] = static_cast<T>(k * orow[c] - sb);
            } else {
              for (int64_t c = 0; c < g.classes; ++c) orow[c] = static_cast<T>(k * orow[c] - sb * static_cast<M>(wp[c]));
            }
            orow[y] = static_cast<T>(static_cast<M>(orow[y]) - static_cast<M>(sp[pos] * (1 - eps) * wp[y]));
            continue;
          }
        }
        const RowLse<M> lse = RowLogSumExp<T>(row, g.classes, st);
        if (!prob) {
          const int64_t y = tp[pos];
          const M sa = static_cast<M>(sp[pos] * ((1 - eps) * wp[y] + eps / C * wall));
          const M sb = static_cast<M>(sp[pos] * eps / C);
          for (int64_t c = 0; c < g.classes; ++c)
            orow[c * st] = static_cast<T>(sa * VecExp(lse.LogP(static_cast<M>(row[c * st]))) -
                                          sb * static_cast<M>(wp[c]));
          const M fix = static_cast<M>(orow[y * st]) - static_cast<M>(sp[pos] * (1 - eps) * wp[y]);
          orow[y * st] = static_cast<T>(fix);
        } else {
          const double* qp = q.data<double>() + base;
          double a = 0;
          for (int64_t c = 0; c < g.classes; ++c) a += wp[c] * ((1 - eps) * qp[c * st] + eps / C);
          for (int64_t c = 0; c < g.classes; ++c) {
            const double qc = (1 - eps) * qp[c * st] + eps / C;
            const double p = std::exp(-lse.NegLogP(static_cast<M>(row[c * st])));
            orow[c * st] = static_cast<T>(static_cast<M>(sp[pos] * (a * p - wp[c] * qc)));
          }
        }
      }
    });
  });
}

void GradScalesCpu(const Tensor& g, const Tensor& t, int64_t ignore_index, bool per_position, double divisor,
                   const Tensor& s) {
  const double* gp = g.data<double>();
  const int64_t* tp = t.defined() ? t.data<int64_t>() : nullptr;
  double* sp = s.data<double>();
  for (int64_t i = 0; i < s.numel(); ++i) {
    const double gi = per_position ? gp[i] : gp[0];
    sp[i] = tp != nullptr && tp[i] == ignore_index ? 0.0 : (divisor == 1.0 ? gi : gi / divisor);
  }
}

void NllGradsCpu(const Tensor& t, const Tensor& w, const Tensor& s, const ClassRows& g, const Tensor& out) {
  const int64_t* tp = t.data<int64_t>();
  const double* wp = w.data<double>();
  const double* sp = s.data<double>();
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* op = out.data<T>();
    for (int64_t pos = 0; pos < g.outer * g.inner; ++pos) {
      if (tp[pos] == g.ignore_index) continue;
      const int64_t o = pos / g.inner, k = pos % g.inner;
      op[(o * g.classes + tp[pos]) * g.inner + k] = static_cast<T>(static_cast<OpMath<T>>(-wp[tp[pos]] * sp[pos]));
    }
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::ClassRowLossesKernel>(DeviceType::kCPU, &LossesCpu);
  kernels::RegisterKernel<kernels::CrossEntropyRowGradsKernel>(DeviceType::kCPU, &CrossEntropyGradsCpu);
  kernels::RegisterKernel<kernels::NllGradScalesKernel>(DeviceType::kCPU, &GradScalesCpu);
  kernels::RegisterKernel<kernels::NllRowGradsKernel>(DeviceType::kCPU, &NllGradsCpu);
  return true;
}();

}  // namespace

void ClassRowLosses(const Tensor& x, const Tensor& t, const Tensor& q, const Tensor& w, const ClassRows& g,
                    const Tensor& loss) {
  kernels::CallKernel<kernels::ClassRowLossesKernel>(loss.device(), x, t, q, w, g, loss);
}

void CrossEntropyRowGrads(const Tensor& x, const Tensor& t, const Tensor& q, const Tensor& w, const Tensor& s,
                          const ClassRows& g, double wall, const Tensor& out) {
  kernels::CallKernel<kernels::CrossEntropyRowGradsKernel>(out.device(), x, t, q, w, s, g, wall, out);
}

void NllGradScales(const Tensor& g, const Tensor& t, int64_t ignore_index, bool per_position, double divisor,
                   const Tensor& s) {
  kernels::CallKernel<kernels::NllGradScalesKernel>(s.device(), g, t, ignore_index, per_position, divisor, s);
}

void NllRowGrads(const Tensor& t, const Tensor& w, const Tensor& s, const ClassRows& g, const Tensor& out) {
  kernels::CallKernel<kernels::NllRowGradsKernel>(out.device(), t, w, s, g, out);
}

}  // namespace oneflow
