// Fused masked softmax (src/ops/table/fused.yaml): fused_scale_mask_softmax, the kernel of
// fused_scale_mask_softmax_dropout / fused_scale_tril_softmax_mask_scale and their gradient.
// The input is viewed as rows of its last dim; each row is masked and scaled, exponentiated,
// normalised and dropped in loops over the row while it stays in L1 (the row reductions of
// kernels/row_math.h, the vectorisable exp of kernels/vec_math.h), so the data is read and
// written once. Threads split the rows; 16-bit floats compute in float buffers.
#include <vector>

#include "core/parallel.h"
#include "kernels/dropout_draws.h"
#include "kernels/row_math.h"
#include "kernels/vec_math.h"
#include "ops/copy.h"
#include "autograd/formulas/dropout.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/fused_masked_softmax_backward.h"
#include "decl/fused_scale_mask_softmax.h"
#include "decl/fused_scale_mask_softmax_dropout.h"
#include "decl/fused_scale_tril_softmax_mask_scale.h"
#include "decl/native_fused_masked_softmax_dropout.h"

namespace oneflow {

namespace {

// Rows per thread chunk: about kGrainSize elements, never fewer than one row.
int64_t RowGrain(int64_t n) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n)); }

// Which elements of row r keep their value: a bool mask broadcast over x's leading dims, the
// triangle j <= i + diagonal (i the row's index in dim -2), or all.
struct RowMask {
  const bool* data = nullptr;  // contiguous mask, null without one
  DimVector lead_sizes;        // x's sizes but the last
  DimVector lead_strides;      // the mask's element strides over them, 0 where it broadcasts
  std::optional<int64_t> diagonal;
  int64_t tril_rows = 1;       // x.size(-2) with a triangle

  const bool* Row(int64_t r) const {
    int64_t off = 0;
    for (int d = static_cast<int>(lead_sizes.size()) - 1; d >= 0 && r > 0; --d) {
      off += (r % lead_sizes[d]) * lead_strides[d];
      r /= lead_sizes[d];
    }
    return data + off;
  }
  // The triangle's kept prefix of row r: [0, Limit(r)).
  int64_t Limit(int64_t r, int64_t n) const {
    return std::clamp<int64_t>(r % tril_rows + *diagonal + 1, 0, n);
  }
};

void CheckCpu(const Tensor& x) {
  OF_CHECK(x.device().type == DeviceType::kCPU || x.device().type == DeviceType::kMeta)
      << "is implemented for CPU tensors only, got a tensor on " << x.device().str();
}

// Every check of the masked softmax ops, run under the public op's name by the composites too.
void CheckMaskArgs(const Tensor& x, const Tensor& mask, std::optional<int64_t> diagonal) {
  CheckCpu(x);
  OF_CHECK(IsFloating(x.dtype())) << "expected a floating point input, got " << DTypeName(x.dtype());
  OF_CHECK(x.dim() >= 1) << "expected an input with at least 1 dimension, got a 0-d tensor";
  const int nd = x.dim();
  if (diagonal) {
    OF_CHECK(!mask.defined()) << "takes a mask or a diagonal, not both";
    OF_CHECK(nd >= 2) << "the triangular mask needs an input with at least 2 dimensions, got "
                      << ShapeStr(x.sizes());
    return;
  }
  if (!mask.defined()) return;
  // bool, or integers with nonzero = keep: LiBai passes int8 masks (its GPT causal mask, BERT's
  // padding mask products) as upstream's kernels take them
  OF_CHECK(IsIntegral(mask.dtype(), true)) << "expected a bool or integer mask, got " << DTypeName(mask.dtype());
  CheckSameDevice(x, mask);
  OF_CHECK(mask.dim() >= 1 && mask.dim() <= nd)
      << "the mask of shape " << ShapeStr(mask.sizes()) << " does not broadcast to the input's shape "
      << ShapeStr(x.sizes());
  OF_CHECK(mask.sizes()[mask.dim() - 1] == x.sizes()[nd - 1])
      << "the last dim of the mask (" << mask.sizes()[mask.dim() - 1] << ") must equal the input's ("
      << x.sizes()[nd - 1] << ")";
  const int pad = nd - mask.dim();
  for (int d = 0; d < mask.dim() - 1; ++d)
    OF_CHECK(mask.sizes()[d] == 1 || mask.sizes()[d] == x.sizes()[pad + d])
        << "the mask of shape " << ShapeStr(mask.sizes()) << " does not broadcast to the input's shape "
        << ShapeStr(x.sizes());
}

void CheckDropoutP(double p) {
  OF_CHECK(p >= 0 && p <= 1) << "dropout probability has to be between 0 and 1, but got " << p;
}

// The row mask of checked operands; mask_holder keeps the contiguous mask alive.
RowMask MakeRowMask(const Tensor& x, const Tensor& mask, std::optional<int64_t> diagonal, Tensor& mask_holder) {
  CheckMaskArgs(x, mask, diagonal);
  RowMask rm;
  const int nd = x.dim();
  rm.lead_sizes = DimVector(x.sizes().data(), x.sizes().data() + nd - 1);
  if (diagonal) {
    rm.diagonal = diagonal;
    rm.tril_rows = std::max<int64_t>(1, x.sizes()[nd - 2]);
    return rm;
  }
  if (!mask.defined() || x.device().type == DeviceType::kMeta) return rm;
  mask_holder = Contiguous(mask.dtype() == DType::kBool ? mask : CastTo(mask, DType::kBool));
  rm.data = mask_holder.data<bool>();
  rm.lead_strides = DimVector(nd - 1, 0);
  const int pad = nd - mask.dim();
  int64_t stride = mask.sizes()[mask.dim() - 1];
  for (int d = mask.dim() - 2; d >= 0; --d) {
    if (mask.sizes()[d] != 1) rm.lead_strides[pad + d] = stride;
    stride *= mask.sizes()[d];
  }
  return rm;
}

// z[j] = keep ? x[j] * scale : fill for row r.
template <typename T, typename M>
void MaskScaleRow(const T* __restrict x, M* __restrict z, int64_t n, int64_t r, const RowMask& rm, M scale, M fill) {
  if (rm.data) {
    // (bytes compared with 0, not bools: GCC vectorises this select, a bool load it does not)
    const uint8_t* __restrict k = reinterpret_cast<const uint8_t*>(rm.Row(r));
    for (int64_t j = 0; j < n; ++j) z[j] = k[j] != 0 ? static_cast<M>(x[j]) * scale : fill;
  } else {
    const int64_t lim = rm.diagonal ? rm.Limit(r, n) : n;
    for (int64_t j = 0; j < lim; ++j) z[j] = static_cast<M>(x[j]) * scale;
    for (int64_t j = lim; j < n; ++j) z[j] = fill;
  }
}

struct Drop {
  bool active = false;
  PhiloxSeed key{};
  uint32_t bound = 0;
  double scale = 1.0;
};

// softmax rows of where(mask, x * scale, fill) into s, and dropped into y (y may be null: the
// softmax alone) with the keep mask into keep.
template <typename T>
void ForwardRows(const T* x, T* y, T* s, bool* keep, const RowMask& rm, int64_t rows, int64_t n, double scale,
                 double fill, const Drop& drop) {
  using M = OpMath<T>;
  constexpr bool kSame = std::is_same_v<T, M>;
  const M sc = static_cast<M>(scale), fl = static_cast<M>(fill), ds = static_cast<M>(drop.scale);
  ParallelFor(0, rows, RowGrain(n), [&](int64_t b, int64_t e) {
    std::vector<M> buf(kSame ? 0 : n);
    std::vector<uint32_t> words(drop.active ? 4 * (n / 4 + 2) : 0);
    for (int64_t r = b; r < e; ++r) {
      M* z = kSame ? reinterpret_cast<M*>(s + r * n) : buf.data();
      MaskScaleRow<T, M>(x + r * n, z, n, r, rm, sc, fl);
      const M m = RowMax(z, n);
      for (int64_t j = 0; j < n; ++j) z[j] = VecExpNonPositive<M>(z[j] - m);
      const M f = M(1) / RowSum(z, n);
      for (int64_t j = 0; j < n; ++j) z[j] *= f;
      if constexpr (!kSame) {
        for (int64_t j = 0; j < n; ++j) s[r * n + j] = static_cast<T>(z[j]);
      }
      if (!y) continue;
      T* __restrict yr = y + r * n;
      if (drop.active) {
        bool* k = keep + r * n;
        DropoutKeepRange(drop.key, drop.bound, r * n, n, words.data(), k);
        const uint8_t* __restrict kb = reinterpret_cast<const uint8_t*>(k);  // (as in MaskScaleRow)
        for (int64_t j = 0; j < n; ++j) yr[j] = static_cast<T>(kb[j] != 0 ? z[j] * ds : M(0));
      } else {
        for (int64_t j = 0; j < n; ++j) yr[j] = static_cast<T>(z[j]);
      }
    }
  });
}

// dx = where(mask, scale * s * (g - sum(g * s)), 0), g = gy * keep * dscale + gs.
template <typename T>
void BackwardRows(const T* gy, const T* gs, const T* s, const bool* keep, T* dx, const RowMask& rm, int64_t rows,
                  int64_t n, double scale, double dscale) {
  using M = OpMath<T>;
  const M sc = static_cast<M>(scale), ds = static_cast<M>(dscale);
  constexpr bool kSame = std::is_same_v<T, M>;
  ParallelFor(0, rows, RowGrain(n), [&](int64_t b, int64_t e) {
    std::vector<M> gbuf(n), sbuf(kSame ? 0 : n);
    M* __restrict g = gbuf.data();
    for (int64_t r = b; r < e; ++r) {
      const int64_t o = r * n;
      // s itself for float / double; 16-bit rows converted into a float buffer
      const M* __restrict sv;
      if constexpr (kSame) {
        sv = s + o;
      } else {
        for (int64_t j = 0; j < n; ++j) sbuf[j] = static_cast<M>(s[o + j]);
        sv = sbuf.data();
      }
      if (gy && keep) {
        const uint8_t* __restrict kb = reinterpret_cast<const uint8_t*>(keep + o);  // (as in MaskScaleRow)
        for (int64_t j = 0; j < n; ++j) g[j] = kb[j] != 0 ? static_cast<M>(gy[o + j]) * ds : M(0);
      } else if (gy) {
        for (int64_t j = 0; j < n; ++j) g[j] = static_cast<M>(gy[o + j]) * ds;
      } else {
        for (int64_t j = 0; j < n; ++j) g[j] = M(0);
      }
      if (gs) {
        for (int64_t j = 0; j < n; ++j) g[j] += static_cast<M>(gs[o + j]);
      }
      const M dot = RowDot(g, sv, n);
      T* __restrict out = dx + o;
      if (rm.data) {
        const uint8_t* __restrict k = reinterpret_cast<const uint8_t*>(rm.Row(r));
        for (int64_t j = 0; j < n; ++j) out[j] = static_cast<T>(k[j] != 0 ? sc * sv[j] * (g[j] - dot) : M(0));
      } else {
        const int64_t lim = rm.diagonal ? rm.Limit(r, n) : n;
        for (int64_t j = 0; j < lim; ++j) out[j] = static_cast<T>(sc * sv[j] * (g[j] - dot));
        for (int64_t j = lim; j < n; ++j) out[j] = static_cast<T>(M(0));
      }
    }
  });
}

// The forward of every masked softmax op; y / keep undefined for the softmax alone.
std::tuple<Tensor, Tensor, Tensor> MaskedSoftmax(const Tensor& x, const Tensor& mask, double fill_value, double scale,
                                                 std::optional<int64_t> diagonal, bool with_dropout, double p,
                                                 bool train, const GeneratorPtr& generator) {
  Tensor mask_holder;
  const RowMask rm = MakeRowMask(x, mask, diagonal, mask_holder);
  CheckDropoutP(p);
  Drop drop;
  drop.active = with_dropout && train && p > 0;
  Tensor s = Empty(x.sizes(), x.dtype(), x.device());
  Tensor y = with_dropout ? Empty(x.sizes(), x.dtype(), x.device()) : Tensor();
  Tensor keep = with_dropout ? Empty(drop.active ? x.sizes() : DimVector{0}, DType::kBool, x.device()) : Tensor();
  if (x.device().type == DeviceType::kMeta || x.numel() == 0) return {y, s, keep};
  const int64_t n = x.sizes()[x.dim() - 1], rows = x.numel() / n;
  if (drop.active) {
    drop.key = ReserveDropoutDraws(GeneratorFor(generator, x.device()), x.numel());
    drop.bound = DropoutKeepBound(p);
    drop.scale = functional::DropoutScale(p, true);
  }
  const Tensor xc = Contiguous(x);
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    ForwardRows<T>(xc.data<T>(), y.defined() ? y.data<T>() : nullptr, s.data<T>(),
                   drop.active ? keep.data<bool>() : nullptr, rm, rows, n, scale, fill_value, drop);
  });
  return {y, s, keep};
}

}  // namespace

Tensor FusedScaleMaskSoftmax(const Tensor& x, const Tensor& mask, double fill_value, double scale) {
  OpScope scope("fused_scale_mask_softmax");
  OF_CHECK(mask.defined()) << "expected a mask";
  return std::get<1>(MaskedSoftmax(x, mask, fill_value, scale, std::nullopt, false, 0.0, false, GeneratorPtr()));
}

std::tuple<Tensor, Tensor, Tensor> NativeFusedMaskedSoftmaxDropout(const Tensor& x, const Tensor& mask,
                                                                   double fill_value, double scale,
                                                                   std::optional<int64_t> diagonal, double p,
                                                                   bool train, const GeneratorPtr& generator) {
  OpScope scope("native_fused_masked_softmax_dropout");
  return MaskedSoftmax(x, mask, fill_value, scale, diagonal, true, p, train, generator);
}

Tensor FusedMaskedSoftmaxBackward(const Tensor& grad_y, const Tensor& grad_softmax_y, const Tensor& softmax_y,
                                  const Tensor& mask, const Tensor& dropout_mask, double scale, double dropout_scale,
                                  std::optional<int64_t> diagonal) {
  OpScope scope("fused_masked_softmax_backward");
  Tensor mask_holder;
  const RowMask rm = MakeRowMask(softmax_y, mask, diagonal, mask_holder);
  for (const Tensor* g : {&grad_y, &grad_softmax_y}) {
    if (!g->defined()) continue;
    OF_CHECK(g->sizes() == softmax_y.sizes()) << "expected gradients of shape " << ShapeStr(softmax_y.sizes())
                                              << ", got " << ShapeStr(g->sizes());
    CheckSameDevice(*g, softmax_y);
  }
  const bool dropped = dropout_mask.defined() && dropout_mask.numel() > 0;
  if (dropped)
    OF_CHECK(dropout_mask.dtype() == DType::kBool && dropout_mask.sizes() == softmax_y.sizes())
        << "expected a bool dropout mask of shape " << ShapeStr(softmax_y.sizes());
  Tensor dx = Empty(softmax_y.sizes(), softmax_y.dtype(), softmax_y.device());
  if (dx.device().type == DeviceType::kMeta || dx.numel() == 0) return dx;
  const int64_t n = dx.sizes()[dx.dim() - 1], rows = dx.numel() / n;
  const DType dt = softmax_y.dtype();
  const Tensor s = Contiguous(softmax_y);
  const Tensor gy = grad_y.defined() ? Contiguous(CastTo(grad_y, dt)) : Tensor();
  const Tensor gs = grad_softmax_y.defined() ? Contiguous(CastTo(grad_softmax_y, dt)) : Tensor();
  const Tensor keep = dropped ? Contiguous(dropout_mask) : Tensor();
  DispatchFloat(dt, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    BackwardRows<T>(gy.defined() ? gy.data<T>() : nullptr, gs.defined() ? gs.data<T>() : nullptr, s.data<T>(),
                    dropped ? keep.data<bool>() : nullptr, dx.data<T>(), rm, rows, n, scale, dropout_scale);
  });
  return dx;
}

namespace functional {

std::tuple<Tensor, Tensor> FusedScaleMaskSoftmaxDropout(const Tensor& x, const Tensor& mask, double fill_value,
                                                        double scale, double p, bool training,
                                                        const GeneratorPtr& generator) {
  OpScope scope("fused_scale_mask_softmax_dropout");
  OF_CHECK(mask.defined()) << "expected a mask";
  CheckMaskArgs(x, mask, std::nullopt);
  CheckDropoutP(p);
  auto [y, s, keep] = functional::NativeFusedMaskedSoftmaxDropout(x, mask, fill_value, scale, std::nullopt, p, training, generator);
  return {y, s};
}

std::tuple<Tensor, Tensor> FusedScaleTrilSoftmaxMaskScale(const Tensor& a, double p, int64_t diagonal,
                                                          double tril_scale_value, double tril_fill_value,
                                                          const GeneratorPtr& generator) {
  OpScope scope("fused_scale_tril_softmax_mask_scale");
  CheckMaskArgs(a, Tensor(), diagonal);
  CheckDropoutP(p);
  auto [y, s, keep] =
      functional::NativeFusedMaskedSoftmaxDropout(a, Tensor(), tril_fill_value, tril_scale_value, diagonal, p, true, generator);
  return {y, s};
}

}  // namespace functional

}  // namespace oneflow
