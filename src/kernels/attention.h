// Fused scaled-dot-product attention kernels (float, double) behind the fused_attention ops
// (src/ops/attention_ops.cpp). Operands are 3-D [batch, rows, cols] with unit-stride columns
// and any batch / row strides (the head views of multi-head attention are used in place).
#pragma once
#include <cstdint>

namespace oneflow {

template <typename T>
struct AttentionArgs {
  int64_t B = 0, L = 0, S = 0, E = 0, Ev = 0;
  const T *q = nullptr, *k = nullptr, *v = nullptr;
  int64_t qb = 0, qr = 0, kb = 0, kr = 0, vb = 0, vr = 0;  // batch and row strides
  // Optional mask, element (b, i, j) at mask[b * mb + i * mi + j * mj] (0 strides broadcast):
  // bool (true = attend) or additive T.
  const void* mask = nullptr;
  bool mask_bool = false;
  int64_t mb = 0, mi = 0, mj = 0;
  T scale = 1;
  bool causal = false;  // query i attends keys 0..i
};

// out [B, L, Ev] and lse [B, L] contiguous: out = softmax(scale q k^T + mask) v, lse = the rows'
// logsumexp; a row with every key masked gets lse = -inf and out = 0.
template <typename T>
void AttentionForward(const AttentionArgs<T>& a, T* out, T* lse);

// Gradients from dout, out, lse (contiguous, as the forward wrote them): dq [B, L, E],
// dk [B, S, E], dv [B, S, Ev] contiguous; dmask [B, L, S] (the scores' gradient) when not null.
template <typename T>
void AttentionBackward(const AttentionArgs<T>& a, const T* dout, const T* out, const T* lse, T* dq, T* dk, T* dv,
                       T* dmask);

}  // namespace oneflow
