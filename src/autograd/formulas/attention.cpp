#include "autograd/formulas/attention.h"

#include <limits>

#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "decl/bmm.h"
#include "decl/full.h"
#include "decl/fused_attention_backward.h"
#include "decl/isneginf.h"
#include "decl/logical_not.h"
#include "decl/masked_fill.h"
#include "decl/softmax.h"
#include "decl/sum.h"
#include "decl/transpose.h"
#include "decl/triu.h"
#include "decl/unsqueeze.h"

namespace oneflow::functional {

std::vector<Tensor> FusedAttentionGrads(const Tensor& grad, const Tensor& query, const Tensor& key,
                                        const Tensor& value, const Tensor& attn_mask, const Tensor& output,
                                        const Tensor& logsumexp, double scale, bool is_causal,
                                        const std::array<bool, 4>& m) {
  const bool float_mask = attn_mask.defined() && attn_mask.dtype() != DType::kBool;
  const bool mask_grad = m[3] && float_mask;
  std::vector<Tensor> r(4);
  if (!grad.defined()) return r;  // only logsumexp was used: it carries no gradient
  if (!GradMode::is_enabled()) {
    auto [dq, dk, dv, dmask] = functional::FusedAttentionBackward(grad, query, key, value, attn_mask, output,
                                                                  logsumexp, scale, is_causal, mask_grad);
    if (m[0]) r[0] = dq;
    if (m[1]) r[1] = dk;
    if (m[2]) r[2] = dv;
    if (mask_grad) r[3] = SumTo(dmask, attn_mask.sizes());
    return r;
  }
  // The composition, as nn.functional's unfused path computes it (Note [Fully masked rows] in
  // python/oneflow/nn/_functional_attention.py: such rows get finite scores and zero weights).
  const double inf = std::numeric_limits<double>::infinity();
  Tensor s = functional::Bmm(query, functional::Transpose(key, 1, 2)) * scale;
  if (float_mask) s = s + attn_mask;
  else if (attn_mask.defined()) s = functional::MaskedFill(s, oneflow::LogicalNot(attn_mask), S(-inf));
  if (is_causal) {
    const int64_t L = query.sizes()[1], Sk = key.sizes()[1];
    const Tensor cut =
        oneflow::Triu(oneflow::Full(DimVector{L, Sk}, Scalar(-inf), query.dtype(), query.device(), false), 1);
    s = s + cut;
  }
  const Tensor empty_rows = functional::Unsqueeze(oneflow::Isneginf(logsumexp), -1);
  s = functional::MaskedFill(s, empty_rows, S(0.0));
  const Tensor p = functional::MaskedFill(functional::Softmax(s, -1, std::nullopt), empty_rows, S(0.0));
  if (m[2]) r[2] = functional::Bmm(functional::Transpose(p, 1, 2), grad);
  if (!(m[0] || m[1] || mask_grad)) return r;
  const Tensor dp = functional::Bmm(grad, functional::Transpose(value, 1, 2));
  const Tensor ds = p * (dp - functional::Sum(dp * p, DimVector{-1}, true, std::nullopt));
  if (m[0]) r[0] = functional::Bmm(ds, key) * scale;
  if (m[1]) r[1] = functional::Bmm(functional::Transpose(ds, 1, 2), query) * scale;
  if (mask_grad) r[3] = SumTo(ds, attn_mask.sizes());
  return r;
}

}  // namespace oneflow::functional
