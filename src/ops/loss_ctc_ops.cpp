// ctc_loss (Graves et al. 2006) and its backward (src/ops/table/loss.yaml): the forward (alpha)
// and backward (beta) recursions over the blank-extended target, in log space and double
// precision, one batch element per task.
// The gradient follows PyTorch's: exp(lp) - exp(log(sum alpha beta) + nll - lp), i.e. the
// gradient with respect to the logits under a log_softmax (what CTC is always fed with); the
// extra exp(lp) vanishes through log_softmax's backward.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"
#include "ops/loss_common.h"
#include "decl/contiguous.h"
#include "decl/ctc_loss.h"
#include "decl/ctc_loss_backward.h"
#include "decl/empty.h"
#include "decl/mul.h"
#include "decl/reshape.h"
#include "decl/sum.h"

#ifdef ONEFLOW_WITH_CUDA
#include "cuda/ops.h"
#endif

namespace oneflow {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double LogAdd(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = a > b ? a : b;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

struct CtcProblem {
  int64_t T = 0, N = 0, C = 0;
  bool batched = true;
  Tensor lp;  // [T, N, C] float64, contiguous
  std::vector<int64_t> in_len, tgt_len, tgt_off;  // per batch element
  Tensor targets;  // int64, contiguous (2-d padded or 1-d concatenated)
  int64_t tgt_stride = 0;  // row stride of the 2-d form (0 for 1-d)
  int64_t blank = 0;

  int64_t Label(int64_t b, int64_t s) const {  // s-th symbol of the extended target
    return s % 2 == 0 ? blank : targets.data<int64_t>()[tgt_off[b] + (s - 1) / 2];
  }
  double Lp(int64_t t, int64_t b, int64_t c) const { return lp.data<double>()[(t * N + b) * C + c]; }
};

std::vector<int64_t> Lengths(const Tensor& t, int64_t n, const char* what) {
  OF_CHECK(!IsFloating(t.dtype()) && t.dtype() != DType::kBool) << what << " must be integers";
  OF_CHECK(t.numel() == n) << what << " must have one entry per batch element (" << n << "), got "
                           << ShapeStr(t.sizes());
  Tensor c = Contiguous(CastTo(OnHost(t), DType::kInt64));  // CUDA lengths: a small host copy
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + n);
}

// Shape checks (meta inference) then, with data, the length and label checks.
CtcProblem Prepare(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                   const Tensor& target_lengths, int64_t blank, bool with_data) {
  CheckFloatingLossInput(log_probs, "log_probs");
  OF_CHECK(log_probs.dim() == 3 || log_probs.dim() == 2)
      << "log_probs must be 3-D (T, N, C) or 2-D (T, C), got " << ShapeStr(log_probs.sizes());
  // PyTorch refuses an empty batch, time axis or alphabet (no alignment to sum over).
  OF_CHECK(log_probs.numel() > 0) << "log_probs tensor must not be empty, got " << ShapeStr(log_probs.sizes());
  CheckClassIndexTarget(targets);
  CtcProblem p;
  p.batched = log_probs.dim() == 3;
  p.T = log_probs.sizes()[0];
  p.N = p.batched ? log_probs.sizes()[1] : 1;
  p.C = log_probs.sizes()[log_probs.dim() - 1];
  p.blank = blank;
  OF_CHECK(blank >= 0 && blank < p.C) << "blank must be in label range";
  const bool padded = p.batched ? targets.dim() == 2 : false;
  OF_CHECK(padded || targets.dim() == 1 || (!p.batched && targets.dim() == 1))
      << "targets must be 2-D (N, S) or 1-D (the concatenated targets), got " << ShapeStr(targets.sizes());
  if (padded) {
    OF_CHECK(targets.sizes()[0] == p.N) << "targets has " << targets.sizes()[0] << " rows for a batch of " << p.N;
  }
  if (!with_data) return p;
  CheckHasData(targets);
  p.in_len = Lengths(input_lengths, p.N, "input_lengths");
  p.tgt_len = Lengths(target_lengths, p.N, "target_lengths");
  p.targets = Contiguous(CastTo(OnHost(targets), DType::kInt64));  // checked (and offsets read) on the host
  p.tgt_off.resize(p.N);
  int64_t off = 0;
  for (int64_t b = 0; b < p.N; ++b) {
    OF_CHECK(p.in_len[b] >= 0 && p.in_len[b] <= p.T)
        << "Expected input_lengths to have value at most " << p.T << ", but got value " << p.in_len[b];
    OF_CHECK(p.tgt_len[b] >= 0) << "target_lengths must be non-negative, got " << p.tgt_len[b];
    if (padded) {
      OF_CHECK(p.tgt_len[b] <= targets.sizes()[1])
          << "Expected tensor to have size at least " << p.tgt_len[b] << " at dimension 1, but got size "
          << targets.sizes()[1] << " for argument #2 'targets'";
      p.tgt_off[b] = b * targets.sizes()[1];
    } else {
      p.tgt_off[b] = off;
      off += p.tgt_len[b];
    }
  }
  if (!padded) {
    OF_CHECK(off <= targets.numel()) << "Expected tensor to have size at least " << off
                                     << " at dimension 0, but got size " << targets.numel()
                                     << " for argument #2 'targets'";
  }
  for (int64_t b = 0; b < p.N; ++b)
    for (int64_t k = 0; k < p.tgt_len[b]; ++k) {
      const int64_t y = p.targets.data<int64_t>()[p.tgt_off[b] + k];
      OF_CHECK_INDEX(y >= 0 && y < p.C && y != blank) << "Target " << y << " is out of bounds (or the blank).";
    }
  p.lp = Contiguous(CastTo(log_probs, DType::kFloat64));  // on log_probs' device
  return p;
}

#ifdef ONEFLOW_WITH_CUDA
// The device side of a problem for the kernels of cuda/ctc.cu: log_probs as [T, N, C], the
// labels, the per-element rows, and the alpha buffer.
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
#endif

// log alpha [T, S] of batch element b; returns the negative log-likelihood.
double Alpha(const CtcProblem& p, int64_t b, std::vector<double>& la) {
  const int64_t T = p.in_len[b], S = 2 * p.tgt_len[b] + 1;
  la.assign(std::max<int64_t>(T, 1) * S, kNegInf);
  if (T == 0) return S == 1 ? 0.0 : std::numeric_limits<double>::infinity();
  la[0] = p.Lp(0, b, p.blank);
  if (S > 1) la[1] = p.Lp(0, b, p.Label(b, 1));
  for (int64_t t = 1; t < T; ++t) {
    for (int64_t s = 0; s < S; ++s) {
      const int64_t l = p.Label(b, s);
      double v = la[(t - 1) * S + s];
      if (s >= 1) v = LogAdd(v, la[(t - 1) * S + s - 1]);
      if (s >= 2 && l != p.blank && l != p.Label(b, s - 2)) v = LogAdd(v, la[(t - 1) * S + s - 2]);
      la[t * S + s] = v == kNegInf ? kNegInf : v + p.Lp(t, b, l);
    }
  }
  double ll = la[(T - 1) * S + S - 1];
  if (S > 1) ll = LogAdd(ll, la[(T - 1) * S + S - 2]);
  return -ll;
}

// The reduction's factor for element b: 1 (none, sum), 1 / (max(L_b, 1) N) for 'mean'.
double MeanFactor(const CtcProblem& p, int64_t b, Reduction r) {
  if (r != Reduction::kMean) return 1.0;
  return 1.0 / (static_cast<double>(std::max<int64_t>(p.tgt_len[b], 1)) * static_cast<double>(p.N));
}

#ifdef ONEFLOW_WITH_CUDA
// Every element's MeanFactor, as a float64 vector on `device`.
Tensor Factors(const CtcProblem& p, Reduction r, const Device& device) {
  std::vector<double> f(p.N);
  for (int64_t b = 0; b < p.N; ++b) f[b] = MeanFactor(p, b, r);
  return VectorTensor(f, device);
}
#endif

}  // namespace

Tensor CtcLoss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
               const Tensor& target_lengths, int64_t blank, const std::string& reduction, bool zero_infinity) {
  OpScope scope("ctc_loss");
  const Reduction r = ParseReduction(reduction);
  const bool meta = log_probs.device().type == DeviceType::kMeta;
  CtcProblem p = Prepare(log_probs, targets, input_lengths, target_lengths, blank, !meta);
  const DimVector out_sizes = r == Reduction::kNone && p.batched ? DimVector{p.N} : DimVector{};
  if (meta) return Empty(out_sizes, log_probs.dtype(), log_probs.device());
#ifdef ONEFLOW_WITH_CUDA
  if (log_probs.device().type == DeviceType::kCUDA) {  // cuda/ctc.cu; the reduction by table ops
    const CtcDevice d = OnDevice(p, log_probs.device());
    const Tensor nll = Empty(DimVector{p.N}, DType::kFloat64, log_probs.device());
    cuda::CtcAlpha(d.lp, d.targets, d.rows, p.blank, d.smax, zero_infinity, d.la, nll);
    if (r == Reduction::kNone) return CastTo(Reshape(nll, out_sizes), log_probs.dtype());
    return CastTo(Sum(Mul(nll, Factors(p, r, log_probs.device())), std::nullopt, false, std::nullopt),
                  log_probs.dtype());
  }
#endif
  std::vector<double> nll(p.N);
  ParallelFor(0, p.N, 1, [&](int64_t b0, int64_t b1) {
    std::vector<double> la;
    for (int64_t b = b0; b < b1; ++b) {
      nll[b] = Alpha(p, b, la);
      if (zero_infinity && std::isinf(nll[b])) nll[b] = 0;
    }
  });
  if (r == Reduction::kNone) {
    Tensor out = Empty(out_sizes, DType::kFloat64);
    std::copy(nll.begin(), nll.end(), out.data<double>());
    return CastTo(out, log_probs.dtype());
  }
  double total = 0;
  for (int64_t b = 0; b < p.N; ++b) total += nll[b] * MeanFactor(p, b, r);
  return ScalarToTensor(Scalar(total), log_probs.dtype());
}

Tensor CtcLossBackward(const Tensor& grad_output, const Tensor& log_probs, const Tensor& targets,
                       const Tensor& input_lengths, const Tensor& target_lengths, int64_t blank,
                       const std::string& reduction, bool zero_infinity) {
  OpScope scope("ctc_loss_backward");
  const Reduction r = ParseReduction(reduction);
  const bool meta = log_probs.device().type == DeviceType::kMeta;
  CtcProblem p = Prepare(log_probs, targets, input_lengths, target_lengths, blank, !meta);
  if (meta) return Empty(log_probs.sizes(), log_probs.dtype(), log_probs.device());
  Tensor g = Contiguous(CastTo(grad_output, DType::kFloat64));
#ifdef ONEFLOW_WITH_CUDA
  if (log_probs.device().type == DeviceType::kCUDA) {  // cuda/ctc.cu
    const Device& dev = log_probs.device();
    const CtcDevice d = OnDevice(p, dev);
    const Tensor nll = Empty(DimVector{p.N}, DType::kFloat64, dev);
    cuda::CtcAlpha(d.lp, d.targets, d.rows, p.blank, d.smax, false, d.la, nll);
    // Each element's incoming gradient (its own under 'none', else the one number) x its factor.
    const Tensor gflat = Reshape(MovedTo(g, dev), DimVector{g.numel()});
    const Tensor gsel = r == Reduction::kNone && g.numel() == p.N
                            ? gflat
                            : MakeView(gflat, DimVector{1}, DimVector{1}, gflat.offset());
    const Tensor scale = Contiguous(Mul(gsel, Factors(p, r, dev)));
    Tensor grad = Empty(DimVector{p.T, p.N, p.C}, DType::kFloat64, dev);
    FillWith(grad, Scalar(-std::numeric_limits<double>::infinity()));
    const Tensor lb = Empty(DimVector{p.N, p.T, d.smax}, DType::kFloat64, dev);
    cuda::CtcGrad(d.lp, d.targets, d.rows, p.blank, d.smax, d.la, nll, scale, zero_infinity, lb, grad);
    return CastTo(p.batched ? grad : Reshape(grad, DimVector{p.T, p.C}), log_probs.dtype());
  }
#endif
  Tensor grad = Empty(DimVector{p.T, p.N, p.C}, DType::kFloat64);
  double* gp = grad.data<double>();
  ParallelFor(0, p.N, 1, [&](int64_t b0, int64_t b1) {
    std::vector<double> la, lb, lcab(p.C);
    for (int64_t b = b0; b < b1; ++b) {
      const double nll = Alpha(p, b, la);
      const int64_t T = p.in_len[b], S = 2 * p.tgt_len[b] + 1;
      const double scale = g.data<double>()[r == Reduction::kNone && g.numel() == p.N ? b : 0] *
                           MeanFactor(p, b, r);
      const bool zero = std::isinf(nll) && zero_infinity;
      for (int64_t t = 0; t < p.T; ++t)
        for (int64_t c = 0; c < p.C; ++c) gp[(t * p.N + b) * p.C + c] = 0.0;
      if (zero || T == 0) continue;
      // log beta [T, S], from the end.
      lb.assign(T * S, kNegInf);
      lb[(T - 1) * S + S - 1] = p.Lp(T - 1, b, p.Label(b, S - 1));
      if (S > 1) lb[(T - 1) * S + S - 2] = p.Lp(T - 1, b, p.Label(b, S - 2));
      for (int64_t t = T - 2; t >= 0; --t) {
        for (int64_t s = 0; s < S; ++s) {
          const int64_t l = p.Label(b, s);
          double v = lb[(t + 1) * S + s];
          if (s + 1 < S) v = LogAdd(v, lb[(t + 1) * S + s + 1]);
          if (s + 2 < S && l != p.blank && l != p.Label(b, s + 2)) v = LogAdd(v, lb[(t + 1) * S + s + 2]);
          lb[t * S + s] = v == kNegInf ? kNegInf : v + p.Lp(t, b, l);
        }
      }
      for (int64_t t = 0; t < T; ++t) {
        std::fill(lcab.begin(), lcab.end(), kNegInf);
        for (int64_t s = 0; s < S; ++s) {
          const int64_t l = p.Label(b, s);
          lcab[l] = LogAdd(lcab[l], la[t * S + s] + lb[t * S + s]);
        }
        for (int64_t c = 0; c < p.C; ++c) {
          const double lpc = p.Lp(t, b, c);
          gp[(t * p.N + b) * p.C + c] = (std::exp(lpc) - std::exp(lcab[c] + nll - lpc)) * scale;
        }
      }
    }
  });
  Tensor out = p.batched ? grad : Reshape(grad, DimVector{p.T, p.C});
  return CastTo(out, log_probs.dtype());
}

}  // namespace oneflow
