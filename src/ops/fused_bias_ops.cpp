// Bias-add fusions (src/ops/table/fused.yaml): fused_bias_add_gelu, its gradient kernel and the
// dropout kernel of fused_bias_add_dropout. a is viewed as [outer, C, inner] with C its dim
// `axis` and the 1-D bias b along it; the loops run over segments sharing one bias pattern (rows
// of C when axis is the last dim, runs of `inner` equal bias values otherwise), each read and
// written once with the bias added in the same loop (vectorised over the segment).
#include <vector>

#include "core/parallel.h"
#include "kernels/dropout_draws.h"
#include "kernels/functors/activation.h"
#include "autograd/autocast.h"
#include "autograd/formulas/dropout.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/fused_bias_add_dropout.h"
#include "decl/fused_bias_add_gelu.h"
#include "decl/fused_bias_add_gelu_grad.h"
#include "decl/native_fused_bias_add_dropout.h"
#include "decl/native_fused_bias_add_gelu_backward.h"

namespace oneflow {

namespace {

// The element lambdas of the loops below are forced inline: with several kernels and dtypes in
// this file, GCC's inliner budget otherwise leaves a call in the loop, which does not vectorise
// (the bias-add gelu loops ran 15x slower that way).
#define OF_LOOP_INLINE __attribute__((always_inline))

struct BiasGeom {
  int64_t outer = 1, C = 1, inner = 1;
};

// Checks a and its bias b along dim axis (negative dims wrap) and returns the [outer, C, inner] view.
// same_dtype = false leaves the dtypes to the entry called next (a composite under autocast).
BiasGeom CheckBias(const Tensor& a, const Tensor& b, int64_t axis, bool same_dtype = true) {
  OF_CHECK(a.device().type == DeviceType::kCPU || a.device().type == DeviceType::kMeta)
      << "is implemented for CPU tensors only, got a tensor on " << a.device().str();
  OF_CHECK(IsFloating(a.dtype())) << "expected a floating point input, got " << DTypeName(a.dtype());
  OF_CHECK(!same_dtype || b.dtype() == a.dtype()) << "expected the bias of the input's dtype " << DTypeName(a.dtype())
                                                  << ", got " << DTypeName(b.dtype());
  CheckSameDevice(a, b);
  OF_CHECK(a.dim() >= 1) << "expected an input with at least 1 dimension, got a 0-d tensor";
  const int d = WrapDim(axis, a.dim());
  OF_CHECK(b.dim() == 1 && b.sizes()[0] == a.sizes()[d])
      << "expected a 1-D bias of size " << a.sizes()[d] << " (the input's dim " << d << "), got shape "
      << ShapeStr(b.sizes());
  BiasGeom g;
  for (int i = 0; i < a.dim(); ++i) {
    if (i < d) g.outer *= a.sizes()[i];
    else if (i == d) g.C = a.sizes()[i];
    else g.inner *= a.sizes()[i];
  }
  return g;
}

// body(start, len, c, tag) over the segments of a [outer, C, inner] tensor, in parallel: with
// tag std::false_type, elements [start, start + len) take bias[0..len) (a row of C, inner == 1);
// with std::true_type, they all take bias[c].
template <typename Body>
void ForBiasSegments(const BiasGeom& g, const Body& body) {
  if (g.inner == 1) {
    ParallelFor(0, g.outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.C)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) body(r * g.C, g.C, int64_t(0), std::false_type{});
    });
  } else {
    ParallelFor(0, g.outer * g.C, std::max<int64_t>(1, kGrainSize / g.inner), [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) body(t * g.inner, g.inner, t % g.C, std::true_type{});
    });
  }
}

// out[i] = f(a[i] + bias, extra[i]) over the segments; f on the compute type, extra may be null.
template <typename T, typename F>
void BiasMap(const BiasGeom& g, const T* a, const T* bias, const T* extra, T* out, const F& f) {
  using M = OpMath<T>;
  ForBiasSegments(g, [&](int64_t start, int64_t len, int64_t c, auto tag) {
    const T* __restrict x = a + start;
    const T* __restrict ex = extra ? extra + start : nullptr;
    T* __restrict y = out + start;
    // (the extra operand's test hoisted out of the loops, which then vectorise)
    auto run = [&](auto bias_at) {
      if (ex) {
        for (int64_t j = 0; j < len; ++j) y[j] = static_cast<T>(f(static_cast<M>(x[j]) + bias_at(j), static_cast<M>(ex[j])));
      } else {
        for (int64_t j = 0; j < len; ++j) y[j] = static_cast<T>(f(static_cast<M>(x[j]) + bias_at(j), M(0)));
      }
    };
    if constexpr (decltype(tag)::value) {
      const M bc = static_cast<M>(bias[c]);
      run([bc](int64_t) OF_LOOP_INLINE { return bc; });
    } else {
      const T* __restrict bb = bias;
      run([bb](int64_t j) OF_LOOP_INLINE { return static_cast<M>(bb[j]); });
    }
  });
}

}  // namespace

Tensor FusedBiasAddGelu(const Tensor& a, const Tensor& b, int64_t axis) {
  OpScope scope("fused_bias_add_gelu");
  const BiasGeom g = CheckBias(a, b, axis);
  Tensor out = Empty(a.sizes(), a.dtype(), a.device());
  if (a.device().type == DeviceType::kMeta || a.numel() == 0) return out;
  const Tensor x = Contiguous(a), bc = Contiguous(b);
  DispatchFloat(a.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    BiasMap<T>(g, x.data<T>(), bc.data<T>(), nullptr, out.data<T>(), [](auto v, auto) OF_LOOP_INLINE { return GeluFunctor{}(v); });
  });
  return out;
}

Tensor FusedBiasAddGeluGrad(const Tensor& a, const Tensor& b, const Tensor& dy, int64_t axis) {
  OpScope scope("fused_bias_add_gelu_grad");
  const BiasGeom g = CheckBias(a, b, axis);
  OF_CHECK(dy.sizes() == a.sizes()) << "expected dy of shape " << ShapeStr(a.sizes()) << ", got "
                                    << ShapeStr(dy.sizes());
  CheckSameDevice(a, dy);
  Tensor out = Empty(a.sizes(), a.dtype(), a.device());
  if (a.device().type == DeviceType::kMeta || a.numel() == 0) return out;
  const Tensor x = Contiguous(a), bc = Contiguous(b), gc = Contiguous(CastTo(dy, a.dtype()));
  DispatchFloat(a.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    BiasMap<T>(g, x.data<T>(), bc.data<T>(), gc.data<T>(), out.data<T>(),
               [](auto v, auto grad) OF_LOOP_INLINE { return GeluBackwardFunctor{}(grad, v); });
  });
  return out;
}

// da = dy * gelu'(a + b) and, with bias_grad, db = da summed over every dim but axis, in one pass:
// the bias reduction is accumulated while da is written instead of re-reading da afterwards.
// The partial sums go to fixed blocks (of rows, or one per segment) whose size does not depend on
// the thread count, and are added in block order: the result is the same for every thread count.
std::tuple<Tensor, Tensor> NativeFusedBiasAddGeluBackward(const Tensor& a, const Tensor& b, const Tensor& dy,
                                                          int64_t axis, bool bias_grad) {
  OpScope scope("native_fused_bias_add_gelu_backward");
  const BiasGeom g = CheckBias(a, b, axis);
  OF_CHECK(dy.sizes() == a.sizes()) << "expected dy of shape " << ShapeStr(a.sizes()) << ", got "
                                    << ShapeStr(dy.sizes());
  CheckSameDevice(a, dy);
  Tensor da = Empty(a.sizes(), a.dtype(), a.device());
  Tensor db = Empty(bias_grad ? b.sizes() : DimVector{0}, a.dtype(), a.device());
  if (a.device().type == DeviceType::kMeta) return {da, db};
  const Tensor x = Contiguous(a), bc = Contiguous(b), gc = Contiguous(CastTo(dy, a.dtype()));
  DispatchFloat(a.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* xp = x.data<T>();
    const T* bp = bc.data<T>();
    const T* gp = gc.data<T>();
    T* op = da.data<T>();
    T* dbp = bias_grad ? db.data<T>() : nullptr;
    // one element of da, on the compute type
    auto grad_at = [](T xv, M bias, T gv) OF_LOOP_INLINE {
      return static_cast<M>(gv) * act::GeluDerivative(static_cast<M>(xv) + bias);
    };
    if (a.numel() == 0) {  // (the sum over no elements)
      for (int64_t c = 0; bias_grad && c < g.C; ++c) dbp[c] = T(0);
      return;
    }
    if (!bias_grad) {
      BiasMap<T>(g, xp, bp, gp, op, [](auto v, auto grad) OF_LOOP_INLINE { return grad * act::GeluDerivative(v); });
      return;
    }
    if (g.inner == 1) {
      // rows of C: block k holds the column sums of rows [k * rows, (k + 1) * rows)
      const int64_t C = g.C, rows = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(1, C));
      const int64_t nblk = (g.outer + rows - 1) / rows;
      std::vector<M> part(static_cast<size_t>(nblk * C), M(0));
      M* pp = part.data();
      ParallelFor(0, nblk, 1, [&](int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k) {
          M* __restrict acc = pp + k * C;
          const T* __restrict bb = bp;
          for (int64_t r = k * rows; r < std::min(g.outer, (k + 1) * rows); ++r) {
            const T* __restrict xr = xp + r * C;
            const T* __restrict gr = gp + r * C;
            T* __restrict yr = op + r * C;
            // the row's sum read back while it is in L1 (measured: as fast as accumulating in the
            // first loop, which GCC versions for aliasing with its extra load and store)
            for (int64_t j = 0; j < C; ++j) yr[j] = static_cast<T>(grad_at(xr[j], static_cast<M>(bb[j]), gr[j]));
            for (int64_t j = 0; j < C; ++j) acc[j] += static_cast<M>(yr[j]);
          }
        }
      });
      // the blocks added row by row (contiguous, vectorises; a column walk would stride by C)
      for (int64_t k = 1; k < nblk; ++k) {
        M* __restrict s = pp;
        const M* __restrict pk = pp + k * C;
        for (int64_t j = 0; j < C; ++j) s[j] += pk[j];
      }
      for (int64_t j = 0; j < C; ++j) dbp[j] = static_cast<T>(pp[j]);
      return;
    }
    // runs of `inner` elements sharing bias[t % C]: one sum per run, then the runs of each c
    // added in order; the run's sum over kLanes interleaved accumulators (vectorises)
    constexpr int64_t kLanes = 16;
    const int64_t nseg = g.outer * g.C;
    std::vector<M> seg(static_cast<size_t>(nseg), M(0));
    ParallelFor(0, nseg, std::max<int64_t>(1, kGrainSize / g.inner), [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const M bv = static_cast<M>(bp[t % g.C]);
        const T* __restrict xs = xp + t * g.inner;
        const T* __restrict gs = gp + t * g.inner;
        T* __restrict ys = op + t * g.inner;
        M lanes[kLanes] = {};
        int64_t j = 0;
        for (; j + kLanes <= g.inner; j += kLanes) {
          for (int64_t l = 0; l < kLanes; ++l) {
            const M d = grad_at(xs[j + l], bv, gs[j + l]);
            ys[j + l] = static_cast<T>(d);
            lanes[l] += d;
          }
        }
        for (; j < g.inner; ++j) {
          const M d = grad_at(xs[j], bv, gs[j]);
          ys[j] = static_cast<T>(d);
          lanes[0] += d;
        }
        M s = M(0);
        for (int64_t l = 0; l < kLanes; ++l) s += lanes[l];
        seg[t] = s;
      }
    });
    for (int64_t c = 0; c < g.C; ++c) {
      M s = M(0);
      for (int64_t o = 0; o < g.outer; ++o) s += seg[o * g.C + c];
      dbp[c] = static_cast<T>(s);
    }
  });
  return {da, db};
}

// (dropout(a + b), keep mask); the mask is an empty tensor when p == 0 (nothing dropped).
std::tuple<Tensor, Tensor> NativeFusedBiasAddDropout(const Tensor& a, const Tensor& b, double p, int64_t axis,
                                                     const GeneratorPtr& generator) {
  OpScope scope("native_fused_bias_add_dropout");
  const BiasGeom g = CheckBias(a, b, axis);
  OF_CHECK(p >= 0 && p <= 1) << "dropout probability has to be between 0 and 1, but got " << p;
  const bool drop = p > 0;
  Tensor out = Empty(a.sizes(), a.dtype(), a.device());
  Tensor keep = Empty(drop ? a.sizes() : DimVector{0}, DType::kBool, a.device());
  if (a.device().type == DeviceType::kMeta || a.numel() == 0) return {out, keep};
  const Tensor x = Contiguous(a), bc = Contiguous(b);
  if (!drop) {
    DispatchFloat(a.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      BiasMap<T>(g, x.data<T>(), bc.data<T>(), nullptr, out.data<T>(), [](auto v, auto) OF_LOOP_INLINE { return v; });
    });
    return {out, keep};
  }
  const PhiloxSeed key = ReserveDropoutDraws(GeneratorFor(generator, a.device()), a.numel());
  const uint32_t bound = DropoutKeepBound(p);
  const double scale = functional::DropoutScale(p, true);
  const int64_t seg = g.inner == 1 ? g.C : g.inner;
  DispatchFloat(a.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* xp = x.data<T>();
    const T* bp = bc.data<T>();
    T* op = out.data<T>();
    bool* kp = keep.data<bool>();
    const M sc = static_cast<M>(scale);
    ForBiasSegments(g, [&](int64_t start, int64_t len, int64_t c, auto seg_tag) {
      thread_local std::vector<uint32_t> words;
      words.resize(4 * (seg / 4 + 2));
      bool* kw = kp + start;
      DropoutKeepRange(key, bound, start, len, words.data(), kw);
      // bytes compared with 0, not bools: GCC vectorises this select, a bool load it does not
      const uint8_t* __restrict k = reinterpret_cast<const uint8_t*>(kw);
      const T* __restrict xs = xp + start;
      T* __restrict y = op + start;
      if constexpr (decltype(seg_tag)::value) {
        const M bv = static_cast<M>(bp[c]);
        for (int64_t j = 0; j < len; ++j) y[j] = static_cast<T>(k[j] != 0 ? (static_cast<M>(xs[j]) + bv) * sc : M(0));
      } else {
        for (int64_t j = 0; j < len; ++j)
          y[j] = static_cast<T>(k[j] != 0 ? (static_cast<M>(xs[j]) + static_cast<M>(bp[j])) * sc : M(0));
      }
    });
  });
  return {out, keep};
}

namespace functional {

Tensor FusedBiasAddDropout(const Tensor& a, const Tensor& b, double p, int64_t axis, const GeneratorPtr& generator) {
  OpScope scope("fused_bias_add_dropout");
  // Under autocast the native op casts a half input and its float bias to one dtype first
  // (fused.yaml `autocast:`), and checks the dtypes after.
  CheckBias(a, b, axis, /*same_dtype=*/!autocast::IsActive());
  OF_CHECK(p >= 0 && p <= 1) << "dropout probability has to be between 0 and 1, but got " << p;
  return std::get<0>(functional::NativeFusedBiasAddDropout(a, b, p, axis, generator));
}

}  // namespace functional

}  // namespace oneflow
