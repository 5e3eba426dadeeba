// CPU kernels of ctc_loss (kernels/ctc.h): the forward (alpha) and backward (beta) recursions over
// the blank-extended target, one batch element per task.
// The gradient follows PyTorch's: exp(lp) - exp(log(sum alpha beta) + nll - lp), i.e. the
// gradient with respect to the logits under a log_softmax (what CTC is always fed with); the
// extra exp(lp) vanishes through log_softmax's backward.
#include "kernels/ctc.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.h"

namespace oneflow {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double LogAdd(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = a > b ? a : b;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

// The host view of a problem: labels of the extended target and log-probabilities.
struct Host {
  const CtcProblem& p;
  const int64_t* tg = p.targets.data<int64_t>();
  const double* lp = p.lp.data<double>();
  int64_t Label(int64_t b, int64_t s) const {  // s-th symbol of the extended target
    return s % 2 == 0 ? p.blank : tg[p.tgt_off[b] + (s - 1) / 2];
  }
  double Lp(int64_t t, int64_t b, int64_t c) const { return lp[(t * p.N + b) * p.C + c]; }
};

// log alpha [T, S] of batch element b; returns the negative log-likelihood.
double Alpha(const Host& h, int64_t b, std::vector<double>& la) {
  const CtcProblem& p = h.p;
  const int64_t T = p.in_len[b], S = 2 * p.tgt_len[b] + 1;
  la.assign(std::max<int64_t>(T, 1) * S, kNegInf);
  if (T == 0) return S == 1 ? 0.0 : std::numeric_limits<double>::infinity();
  la[0] = h.Lp(0, b, p.blank);
  if (S > 1) la[1] = h.Lp(0, b, h.Label(b, 1));
  for (int64_t t = 1; t < T; ++t) {
    for (int64_t s = 0; s < S; ++s) {
      const int64_t l = h.Label(b, s);
      double v = la[(t - 1) * S + s];
      if (s >= 1) v = LogAdd(v, la[(t - 1) * S + s - 1]);
      if (s >= 2 && l != p.blank && l != h.Label(b, s - 2)) v = LogAdd(v, la[(t - 1) * S + s - 2]);
      la[t * S + s] = v == kNegInf ? kNegInf : v + h.Lp(t, b, l);
    }
  }
  double ll = la[(T - 1) * S + S - 1];
  if (S > 1) ll = LogAdd(ll, la[(T - 1) * S + S - 2]);
  return -ll;
}

void NllCpu(const CtcProblem& p, bool zero_infinity, const Tensor& nll) {
  const Host h{p};
  double* out = nll.data<double>();
  ParallelFor(0, p.N, 1, [&](int64_t b0, int64_t b1) {
    std::vector<double> la;
    for (int64_t b = b0; b < b1; ++b) {
      out[b] = Alpha(h, b, la);
      if (zero_infinity && std::isinf(out[b])) out[b] = 0;
    }
  });
}

void GradCpu(const CtcProblem& p, const Tensor& scale, bool zero_infinity, const Tensor& grad) {
  const Host h{p};
  double* gp = grad.data<double>();
  const double* sp = scale.data<double>();
  ParallelFor(0, p.N, 1, [&](int64_t b0, int64_t b1) {
    std::vector<double> la, lb, lcab(p.C);
    for (int64_t b = b0; b < b1; ++b) {
      const double nll = Alpha(h, b, la);
      const int64_t T = p.in_len[b], S = 2 * p.tgt_len[b] + 1;
      const bool zero = std::isinf(nll) && zero_infinity;
      for (int64_t t = 0; t < p.T; ++t)
        for (int64_t c = 0; c < p.C; ++c) gp[(t * p.N + b) * p.C + c] = 0.0;
      if (zero || T == 0) continue;
      // log beta [T, S], from the end.
      lb.assign(T * S, kNegInf);
      lb[(T - 1) * S + S - 1] = h.Lp(T - 1, b, h.Label(b, S - 1));
      if (S > 1) lb[(T - 1) * S + S - 2] = h.Lp(T - 1, b, h.Label(b, S - 2));
      for (int64_t t = T - 2; t >= 0; --t) {
        for (int64_t s = 0; s < S; ++s) {
          const int64_t l = h.Label(b, s);
          double v = lb[(t + 1) * S + s];
          if (s + 1 < S) v = LogAdd(v, lb[(t + 1) * S + s + 1]);
          if (s + 2 < S && l != p.blank && l != h.Label(b, s + 2)) v = LogAdd(v, lb[(t + 1) * S + s + 2]);
          lb[t * S + s] = v == kNegInf ? kNegInf : v + h.Lp(t, b, l);
        }
      }
      for (int64_t t = 0; t < T; ++t) {
        std::fill(lcab.begin(), lcab.end(), kNegInf);
        for (int64_t s = 0; s < S; ++s) {
          const int64_t l = h.Label(b, s);
          lcab[l] = LogAdd(lcab[l], la[t * S + s] + lb[t * S + s]);
        }
        for (int64_t c = 0; c < p.C; ++c) {
          const double lpc = h.Lp(t, b, c);
          gp[(t * p.N + b) * p.C + c] = (std::exp(lpc) - std::exp(lcab[c] + nll - lpc)) * sp[b];
        }
      }
    }
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::CtcNllKernel>(DeviceType::kCPU, &NllCpu);
  kernels::RegisterKernel<kernels::CtcGradKernel>(DeviceType::kCPU, &GradCpu);
  return true;
}();

}  // namespace

void CtcLossNll(const CtcProblem& p, bool zero_infinity, const Tensor& nll) {
  kernels::CallKernel<kernels::CtcNllKernel>(nll.device(), p, zero_infinity, nll);
}

void CtcLossGrad(const CtcProblem& p, const Tensor& scale, bool zero_infinity, const Tensor& grad) {
  kernels::CallKernel<kernels::CtcGradKernel>(grad.device(), p, scale, zero_infinity, grad);
}

}  // namespace oneflow
