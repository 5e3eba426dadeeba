// Backward helper of fused_attention (src/ops/table/attention.yaml).
#pragma once
#include <array>
#include <vector>

#include "autograd/functional.h"

namespace oneflow::functional {

// Gradients of (query, key, value, attn_mask), undefined where grad_input_mask says unwanted (a
// bool mask never is). Without create_graph the fused fused_attention_backward kernel; with it
// the composition softmax(scale q k^T + mask) v of differentiable table ops, whose derivatives
// give the higher orders.
std::vector<Tensor> FusedAttentionGrads(const Tensor& grad, const Tensor& query, const Tensor& key,
                                        const Tensor& value, const Tensor& attn_mask, const Tensor& output,
                                        const Tensor& logsumexp, double scale, bool is_causal,
                                        const std::array<bool, 4>& grad_input_mask);

}  // namespace oneflow::functional
