// ctc_loss (Graves et al. 2006) and its backward (src/ops/table/loss.yaml): the inputs checked and
// the problem made here, the recursions in kernels/ctc.h, the reductions by table ops.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"
#include "ops/loss_common.h"
#include "kernels/ctc.h"
#include "decl/contiguous.h"
#include "decl/ctc_loss.h"
#include "decl/ctc_loss_backward.h"
#include "decl/empty.h"
#include "decl/mul.h"
#include "decl/reshape.h"
#include "decl/sum.h"

namespace oneflow {

namespace {

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
  p.lp = Contiguous(CastTo(log_probs, DType::kFloat64));  // on log_probs' device, [T, N, C] or [T, C]
  return p;
}

// The reduction's factor for element b: 1 (none, sum), 1 / (max(L_b, 1) N) for 'mean'.
double MeanFactor(const CtcProblem& p, int64_t b, Reduction r) {
  if (r != Reduction::kMean) return 1.0;
  return 1.0 / (static_cast<double>(std::max<int64_t>(p.tgt_len[b], 1)) * static_cast<double>(p.N));
}

// Every element's MeanFactor, as a float64 vector on `device`.
Tensor Factors(const CtcProblem& p, Reduction r, const Device& device) {
  std::vector<double> f(p.N);
  for (int64_t b = 0; b < p.N; ++b) f[b] = MeanFactor(p, b, r);
  return VectorTensor(f, device);
}

}  // namespace

Tensor CtcLoss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
               const Tensor& target_lengths, int64_t blank, const std::string& reduction, bool zero_infinity) {
  OpScope scope("ctc_loss");
  const Reduction r = ParseReduction(reduction);
  const bool meta = log_probs.device().type == DeviceType::kMeta;
  CtcProblem p = Prepare(log_probs, targets, input_lengths, target_lengths, blank, !meta);
  const DimVector out_sizes = r == Reduction::kNone && p.batched ? DimVector{p.N} : DimVector{};
  if (meta) return Empty(out_sizes, log_probs.dtype(), log_probs.device());
  const Tensor nll = Empty(DimVector{p.N}, DType::kFloat64, log_probs.device());
  CtcLossNll(p, zero_infinity, nll);
  if (r == Reduction::kNone) return CastTo(Reshape(nll, out_sizes), log_probs.dtype());
  return CastTo(Sum(Mul(nll, Factors(p, r, log_probs.device())), std::nullopt, false, std::nullopt),
                log_probs.dtype());
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
  const Device& dev = log_probs.device();
  // Each element's incoming gradient (its own under 'none', else the one number) x its factor.
  const Tensor gflat = Reshape(MovedTo(g, dev), DimVector{g.numel()});
  const Tensor gsel = r == Reduction::kNone && g.numel() == p.N
                          ? gflat
                          : MakeView(gflat, DimVector{1}, DimVector{1}, gflat.offset());
  const Tensor scale = Contiguous(Mul(gsel, Factors(p, r, dev)));
  Tensor grad = Empty(DimVector{p.T, p.N, p.C}, DType::kFloat64, dev);
  CtcLossGrad(p, scale, zero_infinity, grad);
  Tensor out = p.batched ? grad : Reshape(grad, DimVector{p.T, p.C});
  return CastTo(out, log_probs.dtype());
}

}  // namespace oneflow
