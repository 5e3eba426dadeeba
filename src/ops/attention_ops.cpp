// Fused attention entries (src/ops/table/attention.yaml): every check on the shapes, dtypes and
// mask first, then the kernels of kernels/attention.h. The operands are used in place when
// their last dim is unit-stride (the head views of multi-head attention are); the mask is read
// through its broadcast strides, never expanded into memory.
#include "kernels/attention.h"

#include <array>
#include <tuple>

#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/fused_attention.h"
#include "decl/fused_attention_backward.h"

namespace oneflow {

namespace {

void CheckOperand(const Tensor& t, const char* name) {
  OF_CHECK(t.dim() == 3) << "expected " << name << " to be 3-D (batch, sequence, features), got "
                         << ShapeStr(t.sizes());
}

// The 3-D operands and the mask checked against each other; returns {B, L, S, E, Ev}.
std::array<int64_t, 5> CheckInputs(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  CheckOperand(q, "query");
  CheckOperand(k, "key");
  CheckOperand(v, "value");
  OF_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype())
      << "Expected query, key, and value to have the same dtype, but got query.dtype: " << DTypeName(q.dtype())
      << " key.dtype: " << DTypeName(k.dtype()) << " and value.dtype: " << DTypeName(v.dtype()) << " instead.";
  OF_CHECK(q.dtype() == DType::kFloat32 || q.dtype() == DType::kFloat64)
      << "expected float32 or float64 inputs, got " << DTypeName(q.dtype());
  OF_CHECK(q.device() == k.device() && q.device() == v.device())
      << "Expected query, key, and value to have the same device";
  const int64_t B = q.sizes()[0], L = q.sizes()[1], E = q.sizes()[2];
  const int64_t S = k.sizes()[1], Ev = v.sizes()[2];
  OF_CHECK(k.sizes()[0] == B && v.sizes()[0] == B)
      << "expected query, key and value with the same batch size, got " << ShapeStr(q.sizes()) << ", "
      << ShapeStr(k.sizes()) << " and " << ShapeStr(v.sizes());
  OF_CHECK(k.sizes()[2] == E) << "expected key's last dim to equal query's (" << E << "), got "
                              << ShapeStr(k.sizes());
  OF_CHECK(v.sizes()[1] == S) << "expected value with as many rows as key (" << S << "), got "
                              << ShapeStr(v.sizes());
  if (mask.defined()) {
    OF_CHECK(mask.dtype() == DType::kBool || mask.dtype() == q.dtype())
        << "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
        << DTypeName(mask.dtype()) << " and  query.dtype: " << DTypeName(q.dtype()) << " instead.";
    OF_CHECK(mask.device() == q.device()) << "expected attn_mask on the device of query";
    const DimVector want{B, L, S};
    bool ok = mask.dim() <= 3;
    for (int d = 0; ok && d < mask.dim(); ++d) {
      const int64_t m = mask.sizes()[mask.dim() - 1 - d];
      ok = m == 1 || m == want[2 - d];
    }
    OF_CHECK(ok) << "attn_mask of shape " << ShapeStr(mask.sizes()) << " is not broadcastable to the scores' "
                 << ShapeStr(want);
  }
  return {B, L, S, E, Ev};
}

// t itself when its rows are unit-stride and do not overlap (BLAS reads rows by their
// stride), else a copy.
Tensor UnitCols(const Tensor& t) {
  const bool rows_ok = (t.strides()[2] == 1 || t.sizes()[2] <= 1) &&
                       (t.strides()[1] >= t.sizes()[2] || t.sizes()[1] <= 1);
  return rows_ok ? t : Contiguous(t);
}

template <typename T>
AttentionArgs<T> ArgsOf(const std::array<int64_t, 5>& g, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& mask, double scale, bool causal) {
  AttentionArgs<T> a;
  a.B = g[0], a.L = g[1], a.S = g[2], a.E = g[3], a.Ev = g[4];
  a.q = q.data<T>(), a.qb = q.strides()[0], a.qr = q.strides()[1];
  a.k = k.data<T>(), a.kb = k.strides()[0], a.kr = k.strides()[1];
  a.v = v.data<T>(), a.vb = v.strides()[0], a.vr = v.strides()[1];
  if (mask.defined()) {
    const Tensor m = Expand(mask, DimVector{a.B, a.L, a.S});  // a view: 0 strides where broadcast
    a.mask = m.raw_data(), a.mask_bool = m.dtype() == DType::kBool;
    a.mb = m.strides()[0], a.mi = m.strides()[1], a.mj = m.strides()[2];
  }
  a.scale = static_cast<T>(scale), a.causal = causal;
  return a;
}

template <typename F>
void DispatchAttention(DType dt, const F& f) {
  if (dt == DType::kFloat32) f(float{});
  else f(double{});
}

}  // namespace

std::tuple<Tensor, Tensor> FusedAttention(const Tensor& query, const Tensor& key, const Tensor& value,
                                          const Tensor& attn_mask, double scale, bool is_causal) {
  OpScope scope("fused_attention");
  const auto g = CheckInputs(query, key, value, attn_mask);
  Tensor out = Empty(DimVector{g[0], g[1], g[4]}, query.dtype(), query.device());
  Tensor lse = Empty(DimVector{g[0], g[1]}, query.dtype(), query.device());
  if (query.device().type == DeviceType::kMeta || (out.numel() == 0 && lse.numel() == 0)) return {out, lse};
  const Tensor q = UnitCols(query), k = UnitCols(key), v = UnitCols(value);
  DispatchAttention(query.dtype(), [&](auto tag) {
    using T = decltype(tag);
    AttentionForward(ArgsOf<T>(g, q, k, v, attn_mask, scale, is_causal), out.data<T>(), lse.data<T>());
  });
  return {out, lse};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> FusedAttentionBackward(const Tensor& grad_output, const Tensor& query,
                                                                  const Tensor& key, const Tensor& value,
                                                                  const Tensor& attn_mask, const Tensor& output,
                                                                  const Tensor& logsumexp, double scale,
                                                                  bool is_causal, bool mask_grad) {
  OpScope scope("fused_attention_backward");
  const auto g = CheckInputs(query, key, value, attn_mask);
  const DimVector out_shape{g[0], g[1], g[4]};
  OF_CHECK(grad_output.sizes() == out_shape && output.sizes() == out_shape)
      << "expected grad_output and output of shape " << ShapeStr(out_shape) << ", got "
      << ShapeStr(grad_output.sizes()) << " and " << ShapeStr(output.sizes());
  OF_CHECK(logsumexp.sizes() == DimVector({g[0], g[1]}))
      << "expected logsumexp of shape " << ShapeStr(DimVector{g[0], g[1]}) << ", got "
      << ShapeStr(logsumexp.sizes());
  for (const Tensor* t : {&grad_output, &output, &logsumexp})
    OF_CHECK(t->dtype() == query.dtype()) << "expected " << DTypeName(query.dtype()) << " gradients and outputs, got "
                                          << DTypeName(t->dtype());
  const DType dt = query.dtype();
  const Device dev = query.device();
  Tensor dq = Empty(query.sizes(), dt, dev), dk = Empty(key.sizes(), dt, dev), dv = Empty(value.sizes(), dt, dev);
  Tensor dmask = mask_grad ? Empty(DimVector{g[0], g[1], g[2]}, dt, dev) : Tensor();
  if (dev.type == DeviceType::kMeta) return {dq, dk, dv, dmask};
  if (g[0] == 0) return {dq, dk, dv, dmask};
  const Tensor q = UnitCols(query), k = UnitCols(key), v = UnitCols(value);
  const Tensor go = Contiguous(grad_output), o = Contiguous(output), lse = Contiguous(logsumexp);
  DispatchAttention(dt, [&](auto tag) {
    using T = decltype(tag);
    AttentionBackward(ArgsOf<T>(g, q, k, v, attn_mask, scale, is_causal), go.data<T>(), o.data<T>(),
                      lse.data<T>(), dq.data<T>(), dk.data<T>(), dv.data<T>(),
                      mask_grad ? dmask.data<T>() : nullptr);
  });
  return {dq, dk, dv, dmask};
}

}  // namespace oneflow
