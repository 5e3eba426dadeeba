// fused_multi_head_attention_inference and fused_self_attention (src/ops/table/fused.yaml):
// compositions over the attention kernel and batched GEMMs. The first maps OneFlow's BM(HK) layout
// onto the fused attention kernel (src/kernels/attention.cpp), the heads as its batch.
#include <cmath>
#include "decl/add.h"
#include "decl/contiguous.h"
#include "decl/expand.h"
#include "decl/fused_attention.h"
#include "decl/fused_multi_head_attention_inference.h"
#include "decl/fused_self_attention.h"
#include "decl/log.h"
#include "decl/matmul.h"
#include "decl/mul.h"
#include "decl/narrow.h"
#include "decl/ones.h"
#include "decl/permute.h"
#include "decl/reshape.h"
#include "decl/transpose.h"
#include "decl/tril.h"


namespace oneflow::functional {

namespace {

// (B, M, H*K) -> (B*H, M, K)
Tensor HeadsAsBatch(const Tensor& t, int64_t heads) {
  const int64_t b = t.sizes()[0], m = t.sizes()[1], k = t.sizes()[2] / heads;
  return functional::Reshape(functional::Permute(functional::Reshape(t, DimVector{b, m, heads, k}), DimVector{0, 2, 1, 3}), DimVector{b * heads, m, k});
}

}  // namespace

Tensor FusedMultiHeadAttentionInference(const Tensor& query, const Tensor& key, const Tensor& value, int64_t num_heads,
                                        bool causal, int64_t query_hidden_slice_start, int64_t query_hidden_slice_end,
                                        int64_t key_hidden_slice_start, int64_t key_hidden_slice_end,
                                        int64_t value_hidden_slice_start, int64_t value_hidden_slice_end,
                                        const Tensor& attn_bias, int64_t causal_diagonal_offset) {
  OpScope scope("fused_multi_head_attention_inference");
  OF_CHECK(query_hidden_slice_start == 0 && key_hidden_slice_start == 0 && value_hidden_slice_start == 0 &&
           query_hidden_slice_end == -1 && key_hidden_slice_end == -1 && value_hidden_slice_end == -1)
      << "the hidden slice arguments are deprecated (upstream OneFlow refuses them too)";
  OF_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3)
      << "expected query, key and value of shape (B, M, H*K), got " << ShapeStr(query.sizes()) << ", "
      << ShapeStr(key.sizes()) << " and " << ShapeStr(value.sizes());
  OF_CHECK(num_heads > 0) << "num_heads must be positive, got " << num_heads;
  for (const Tensor* t : {&query, &key, &value})
    OF_CHECK(t->sizes()[2] % num_heads == 0)
        << "the hidden size " << t->sizes()[2] << " is not a multiple of num_heads " << num_heads;
  OF_CHECK(key.sizes()[0] == query.sizes()[0] && value.sizes()[0] == query.sizes()[0])
      << "query, key and value must have the same batch size";
  OF_CHECK(key.sizes()[2] == query.sizes()[2]) << "query and key must have the same hidden size, got "
                                               << query.sizes()[2] << " and " << key.sizes()[2];
  OF_CHECK(value.sizes()[1] == key.sizes()[1]) << "key and value must have the same sequence length, got "
                                               << key.sizes()[1] << " and " << value.sizes()[1];
  OF_CHECK(causal_diagonal_offset >= 0) << "causal_diagonal_offset must be >= 0, got " << causal_diagonal_offset;
  const int64_t b = query.sizes()[0], m = query.sizes()[1], n = key.sizes()[1], h = num_heads;
  const int64_t kq = query.sizes()[2] / h, kv = value.sizes()[2] / h;
  Tensor mask;
  if (attn_bias.defined()) {
    OF_CHECK(attn_bias.dim() <= 4) << "attn_bias must broadcast to (B, H, M, N), got " << ShapeStr(attn_bias.sizes());
    mask = functional::Reshape(functional::Expand(attn_bias, DimVector{b, h, m, n}), DimVector{b * h, m, n});
  }
  const bool plain_causal = causal && causal_diagonal_offset == 0 && !mask.defined();
  if (causal && !plain_causal) {  // the triangle with an offset, or together with a bias: -inf above it
    const Tensor keep = functional::Tril(oneflow::Ones(DimVector{m, n}, DType::kBool, query.device(), false), causal_diagonal_offset);
    if (!mask.defined()) {
      mask = keep;
    } else {
      const Tensor neg = oneflow::Ones(DimVector{m, n}, mask.dtype(), query.device(), false);
      // bias where kept, -inf elsewhere: bias + log(keep) with log(0) = -inf
      mask = functional::Add(mask, functional::Log(functional::Mul(neg, keep)), Scalar(1));
    }
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(kq));
  Tensor out = std::get<0>(
      functional::FusedAttention(HeadsAsBatch(query, h), HeadsAsBatch(key, h), HeadsAsBatch(value, h), mask, scale, plain_causal));
  // (B*H, M, Kv) -> (B, M, H*Kv)
  return functional::Reshape(functional::Contiguous(functional::Permute(functional::Reshape(out, DimVector{b, h, m, kv}), DimVector{0, 2, 1, 3})),
                 DimVector{b, m, h * kv});
}

}  // namespace oneflow::functional

namespace oneflow::functional {

std::tuple<Tensor, Tensor> FusedSelfAttention(const Tensor& hidden_states, int64_t head_size, double alpha) {
  OpScope scope("fused_self_attention");
  OF_CHECK(hidden_states.dim() == 3) << "expected hidden_states of shape (S, B, H * 3 * head_size), got "
                                     << ShapeStr(hidden_states.sizes());
  OF_CHECK(head_size > 0 && hidden_states.sizes()[2] % (3 * head_size) == 0)
      << "the hidden size " << hidden_states.sizes()[2] << " is not a multiple of 3 * head_size (head_size "
      << head_size << ")";
  const int64_t s = hidden_states.sizes()[0], b = hidden_states.sizes()[1];
  const int64_t h = hidden_states.sizes()[2] / (3 * head_size);
  // (S, B, H, 3D) -> per part (B, H, S, D)
  const Tensor x = functional::Reshape(hidden_states, DimVector{s, b, h, 3 * head_size});
  auto part = [&](int64_t i) {
    return functional::Permute(functional::Narrow(x, 3, i * head_size, head_size), DimVector{1, 2, 0, 3});
  };
  const Tensor q = functional::Mul(part(0), WrappedNumber(Scalar(alpha)));
  const Tensor qk = functional::Matmul(q, functional::Transpose(part(1), 2, 3));
  return {qk, part(2)};
}

}  // namespace oneflow::functional
