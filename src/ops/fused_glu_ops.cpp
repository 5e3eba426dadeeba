// fused_glu (src/ops/table/fused.yaml): the product [hidden | gate] = x @ [w; v]^T + [b; c] in
// one buffer (biases written first and accumulated by the GEMMs, kernels/gemm.h), then
// y = hidden * act(gate) in one pass over it.
#include <string>

#include "core/parallel.h"
#include "kernels/functors/activation.h"
#include "kernels/gemm.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/fused_glu.h"
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

}  // namespace

namespace {

// Every check of fused_glu, run under the public op's name by the composite too.
GluAct CheckGlu(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& v, const Tensor& c,
                const std::string& activation) {
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
    OF_CHECK(t->dtype() == x.dtype()) << "expected w, b, v, c of the input's dtype " << DTypeName(x.dtype())
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
    auto run = [&](auto act_tag) { GateRows<T, decltype(act_tag)::value>(p.data<T>(), y.data<T>(), m, h); };
    switch (act) {
      case GluAct::kNone: run(std::integral_constant<GluAct, GluAct::kNone>{}); break;
      case GluAct::kSigmoid: run(std::integral_constant<GluAct, GluAct::kSigmoid>{}); break;
      case GluAct::kRelu: run(std::integral_constant<GluAct, GluAct::kRelu>{}); break;
      case GluAct::kGelu: run(std::integral_constant<GluAct, GluAct::kGelu>{}); break;
      case GluAct::kFastGelu: run(std::integral_constant<GluAct, GluAct::kFastGelu>{}); break;
      case GluAct::kSilu: run(std::integral_constant<GluAct, GluAct::kSilu>{}); break;
    }
  });
  return {y, p};
}

namespace functional {

Tensor FusedGlu(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& v, const Tensor& c,
                const std::string& activation) {
  OpScope scope("fused_glu");
  CheckGlu(x, w, b, v, c, activation);
  return std::get<0>(functional::NativeFusedGlu(x, w, b, v, c, activation));
}

}  // namespace functional

}  // namespace oneflow
