// fused_glu (src/ops/table/fused.yaml): the product [hidden | gate] = x @ [w; v]^T + [b; c] in
// one buffer (biases written first and accumulated by the GEMMs, kernels/gemm.h), then
// y = hidden * act(gate) in one pass over it.
#include <string>

#include "autograd/autocast.h"
#include "core/parallel.h"
#include "kernels/functors/activation.h"
#include "kernels/gemm.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/fused_glu.h"
#include "decl/fused_glu_gate_backward.h"
#include "decl/narrow.h"
#include "decl/native_fused_glu.h"
#include "decl/reshape.h"
#include "decl/sigmoid.h"
#include "decl/transpose.h"

namespace oneflow {

namespace {

enum class GluAct { kNone, kSigmoid, kRelu, kGelu, kFastGelu, kSilu };

GluAct ParseGluAct(const std::string& a) {
  if (a == "none") return GluAct::kNone;
  if (a == "sigmoid") return GluAct::kSigmoid;
  if (a == "relu") return GluAct::kRelu;
  if (a == "gelu") return GluAct::kGelu;
  if (a == "fast_gelu") return GluAct::kFastGelu;
  if (a == "silu") return GluAct::kSilu;
  OF_CHECK_VALUE(false) << "unsupported activation '" << a
                        << "' (expected none, sigmoid, relu, gelu, fast_gelu or silu)";
  return GluAct::kNone;
}

// (forced inline: a call left in GateRows' loop keeps it scalar, 4 ms of fused_glu's 14 at
// LiBai's shapes)
template <GluAct kAct, typename M>
inline __attribute__((always_inline)) M Activate(M g) {
  if constexpr (kAct == GluAct::kNone) return g;
  else if constexpr (kAct == GluAct::kSigmoid) return act::Sigmoid(g);
  else if constexpr (kAct == GluAct::kRelu) return g < M(0) ? M(0) : g;
  else if constexpr (kAct == GluAct::kGelu) return GeluFunctor{}(g);
  else if constexpr (kAct == GluAct::kFastGelu) return GeluTanhFunctor{}(g);
  else return SiluFunctor{}(g);
}

template <typename T, GluAct kAct>
void GateRows(const T* p, T* y, int64_t m, int64_t h) {
  using M = OpMath<T>;
  ParallelFor(0, m, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, 2 * h)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* __restrict hid = p + r * 2 * h;
      const T* __restrict gate = hid + h;
      T* __restrict out = y + r * h;
      for (int64_t j = 0; j < h; ++j)
        out[j] = static_cast<T>(static_cast<M>(hid[j]) * Activate<kAct>(static_cast<M>(gate[j])));
    }
  });
}

// d/dgate of hidden * act(gate) times g, given gh = g * hidden and a = act(gate); relu's is 0 at
// and below 0 (threshold_backward's, which the composition uses)
template <GluAct kAct, typename M>
inline __attribute__((always_inline)) M GateGrad(M gh, M gate, M a) {
  if constexpr (kAct == GluAct::kNone) return gh;
  else if constexpr (kAct == GluAct::kSigmoid) return gh * a * (M(1) - a);
  else if constexpr (kAct == GluAct::kRelu) return gate <= M(0) ? M(0) : gh;
  else if constexpr (kAct == GluAct::kGelu) return gh * act::GeluDerivative(gate);
  else if constexpr (kAct == GluAct::kFastGelu) return GeluTanhBackwardFunctor{}(gh, gate);
  else return SiluBackwardFunctor{}(gh, gate);
}

template <typename T, GluAct kAct>
void GateGradRows(const T* g, const T* p, const T* gp, T* dp, int64_t m, int64_t h) {
  using M = OpMath<T>;
  ParallelFor(0, m, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, 2 * h)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* __restrict gr = g + r * h;
      const T* __restrict hid = p + r * 2 * h;
      const T* __restrict gate = hid + h;
      T* __restrict dh = dp + r * 2 * h;
      T* __restrict dg = dh + h;
      for (int64_t j = 0; j < h; ++j) {
        const M gv = static_cast<M>(gr[j]), z = static_cast<M>(gate[j]), a = Activate<kAct>(z);
        dh[j] = static_cast<T>(gv * a);
        dg[j] = static_cast<T>(GateGrad<kAct>(gv * static_cast<M>(hid[j]), z, a));
      }
      if (gp) {  // the product's own gradient (fused_glu's second output used downstream)
        const T* __restrict pr = gp + r * 2 * h;
        for (int64_t j = 0; j < 2 * h; ++j) dh[j] = static_cast<T>(static_cast<M>(dh[j]) + static_cast<M>(pr[j]));
      }
    }
  });
}

// Runs f(std::integral_constant<GluAct, act>) for the runtime act.
template <typename F>
void DispatchGluAct(GluAct act, const F& f) {
  switch (act) {
    case GluAct::kNone: f(std::integral_constant<GluAct, GluAct::kNone>{}); break;
    case GluAct::kSigmoid: f(std::integral_constant<GluAct, GluAct::kSigmoid>{}); break;
    case GluAct::kRelu: f(std::integral_constant<GluAct, GluAct::kRelu>{}); break;
    case GluAct::kGelu: f(std::integral_constant<GluAct, GluAct::kGelu>{}); break;
    case GluAct::kFastGelu: f(std::integral_constant<GluAct, GluAct::kFastGelu>{}); break;
    case GluAct::kSilu: f(std::integral_constant<GluAct, GluAct::kSilu>{}); break;
  }
}

}  // namespace

namespace {

// Every check of fused_glu, run under the public op's name by the composite too; same_dtype = false
// leaves the dtypes to the native entry (under autocast it casts them to one first).
GluAct CheckGlu(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& v, const Tensor& c,
                const std::string& activation, bool same_dtype = true) {
  const GluAct act = ParseGluAct(activation);
  OF_CHECK(x.device().type == DeviceType::kCPU || x.device().type == DeviceType::kMeta)
      << "is implemented for CPU tensors only, got a tensor on " << x.device().str();
  OF_CHECK(IsFloating(x.dtype())) << "expected a floating point input, got " << DTypeName(x.dtype());
  OF_CHECK(x.dim() >= 2) << "expected an input with at least 2 dimensions, got shape " << ShapeStr(x.sizes());
  OF_CHECK(w.dim() == 2) << "expected a 2-D w, got shape " << ShapeStr(w.sizes());
  const int64_t k = x.sizes()[x.dim() - 1], nw = w.sizes()[0];
  OF_CHECK(w.sizes()[1] == k) << "w's second dim (" << w.sizes()[1] << ") must equal the input's last dim (" << k
                              << ")";
  const bool split = v.defined();
  OF_CHECK(split || !c.defined()) << "c is the bias of v: it needs v";
  OF_CHECK(!split || b.defined() == c.defined()) << "with v, give both biases b and c or neither";
  OF_CHECK(split || nw % 2 == 0) << "w's first dim (" << nw << ") must be even without v (it holds both halves)";
  if (split) OF_CHECK(v.sizes() == w.sizes()) << "v's shape " << ShapeStr(v.sizes()) << " must equal w's "
                                              << ShapeStr(w.sizes());
  for (const Tensor* t : {&b, &c})
    if (t->defined()) OF_CHECK(t->dim() == 1 && t->sizes()[0] == nw)
        << "expected a 1-D bias of size " << nw << ", got shape " << ShapeStr(t->sizes());
  for (const Tensor* t : {&w, &b, &v, &c}) {
    if (!t->defined()) continue;
    OF_CHECK(!same_dtype || t->dtype() == x.dtype()) << "expected w, b, v, c of the input's dtype " << DTypeName(x.dtype())
                                      << ", got " << DTypeName(t->dtype());
    CheckSameDevice(x, *t);
  }
  return act;
}

}  // namespace

std::tuple<Tensor, Tensor> NativeFusedGlu(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& v,
                                          const Tensor& c, const std::string& activation) {
  OpScope scope("native_fused_glu");
  const GluAct act = CheckGlu(x, w, b, v, c, activation);
  const bool split = v.defined();
  const int64_t k = x.sizes()[x.dim() - 1], nw = w.sizes()[0];
  const int64_t h = split ? nw : nw / 2;
  DimVector out_sizes(x.sizes().data(), x.sizes().data() + x.dim() - 1);
  out_sizes.push_back(h);
  int64_t m = 1;
  for (int i = 0; i + 1 < x.dim(); ++i) m *= x.sizes()[i];
  Tensor y = Empty(out_sizes, x.dtype(), x.device());
  Tensor p = Empty(DimVector{m, 2 * h}, x.dtype(), x.device());
  if (x.device().type == DeviceType::kMeta || p.numel() == 0) return {y, p};
  const bool bias = b.defined();
  const Tensor bc = bias ? Contiguous(b) : Tensor(), cc = c.defined() ? Contiguous(c) : Tensor();
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* pp = p.data<T>();
    const T* b0 = bias ? bc.data<T>() : nullptr;
    const T* b1 = !bias ? nullptr : split ? cc.data<T>() : b0 + h;
    ParallelFor(0, m, std::max<int64_t>(1, kGrainSize / (2 * h)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        T* row = pp + r * 2 * h;
        for (int64_t j = 0; j < h; ++j) row[j] = b0 ? b0[j] : T(0);
        for (int64_t j = 0; j < h; ++j) row[h + j] = b1 ? b1[j] : T(0);
      }
    });
  });
  if (k > 0) {
    const Tensor x2 = Reshape(Contiguous(x), DimVector{m, k});
    if (split) {
      Gemm(x2, Transpose(w, 0, 1), Narrow(p, 1, 0, h), Scalar(1.0), Scalar(1.0));
      Gemm(x2, Transpose(v, 0, 1), Narrow(p, 1, h, h), Scalar(1.0), Scalar(1.0));
    } else {
      Gemm(x2, Transpose(w, 0, 1), p, Scalar(1.0), Scalar(1.0));
    }
  }
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    DispatchGluAct(act, [&](auto act_tag) { GateRows<T, decltype(act_tag)::value>(p.data<T>(), y.data<T>(), m, h); });
  });
  return {y, p};
}

Tensor FusedGluGateBackward(const Tensor& grad, const Tensor& product, const Tensor& grad_product,
                            const std::string& activation) {
  OpScope scope("fused_glu_gate_backward");
  OF_CHECK(product.dim() == 2 && product.sizes()[1] % 2 == 0)
      << "expected a 2-D product with an even number of columns, got shape " << ShapeStr(product.sizes());
  const int64_t m = product.sizes()[0], h = product.sizes()[1] / 2;
  OF_CHECK(grad.dim() == 2 && grad.sizes()[0] == m && grad.sizes()[1] == h)
      << "expected grad of shape (" << m << ", " << h << "), got " << ShapeStr(grad.sizes());
  OF_CHECK(!grad_product.defined() || grad_product.sizes() == product.sizes())
      << "expected grad_product of the product's shape " << ShapeStr(product.sizes());
  OF_CHECK(IsFloating(product.dtype())) << "expected a floating point product, got " << DTypeName(product.dtype());
  CheckSameDevice(product, grad);
  const GluAct act = ParseGluAct(activation);
  Tensor dp = Empty(product.sizes(), product.dtype(), product.device());
  if (product.device().type == DeviceType::kMeta || dp.numel() == 0) return dp;
  const Tensor gc = Contiguous(CastTo(grad, product.dtype())), pc = Contiguous(product);
  const Tensor gpc = grad_product.defined() ? Contiguous(CastTo(grad_product, product.dtype())) : Tensor();
  DispatchFloat(product.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T* gp = gpc.defined() ? gpc.data<T>() : nullptr;
    DispatchGluAct(act, [&](auto act_tag) {
      GateGradRows<T, decltype(act_tag)::value>(gc.data<T>(), pc.data<T>(), gp, dp.data<T>(), m, h);
    });
  });
  return dp;
}

namespace functional {

Tensor FusedGlu(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& v, const Tensor& c,
                const std::string& activation) {
  OpScope scope("fused_glu");
  CheckGlu(x, w, b, v, c, activation, /*same_dtype=*/!autocast::IsActive());
  return std::get<0>(functional::NativeFusedGlu(x, w, b, v, c, activation));
}

}  // namespace functional

}  // namespace oneflow
