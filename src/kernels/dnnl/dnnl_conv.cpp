#include "kernels/dnnl/dnnl_conv.h"

#include "kernels/dnnl/dnnl_common.h"

namespace oneflow::dnnl_glue {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

enum Kind : int64_t { kFwd, kFwdBias, kBwdData, kBwdWeight };

struct Shapes {
  memory::dims x, y, w, strides, dilates, pad_l, pad_r;
};

Shapes MakeShapes(const ConvGeom& g) {
  Shapes s;
  s.x = {g.n, g.cx};
  s.y = {g.n, g.cy};
  if (g.groups == 1) s.w = {g.cy, g.cx};
  else s.w = {g.groups, g.cy / g.groups, g.cx / g.groups};
  for (int d = 3 - g.k; d < 3; ++d) {
    s.x.push_back(g.xs[d]);
    s.y.push_back(g.ys[d]);
    s.w.push_back(g.ks[d]);
    s.strides.push_back(g.stride[d]);
    s.dilates.push_back(g.dil[d] - 1);  // oneDNN counts the gaps
    s.pad_l.push_back(g.pad[d]);
    s.pad_r.push_back(g.PadR(d));
  }
  return s;
}

Key MakeKey(const ConvGeom& g, Kind kind, ConvLayout l) {
  Key key{{kind, static_cast<int64_t>(l), g.k, g.n, g.cx, g.cy, g.groups}};
  for (int d = 0; d < 3; ++d)
    for (int64_t v : {g.xs[d], g.ys[d], g.ks[d], g.stride[d], g.pad[d], g.dil[d]}) key.v.push_back(v);
  return key;
}

bool Expressible(const ConvGeom& g) {
  for (int d = 0; d < 3; ++d)
    if (g.PadR(d) < 0) return false;
  return g.n > 0 && g.cx > 0 && g.cy > 0;
}

// The plain descriptor of each argument, and what the primitive is asked to use.
struct Descs {
  memory::desc x, y, w, xq, yq, wq;
};

Descs MakeDescs(const Shapes& s, ConvLayout l) {
  Descs d{PlainDesc(s.x, kF32), PlainDesc(s.y, kF32), PlainDesc(s.w, kF32), {}, {}, {}};
  if (l == ConvLayout::kPlain) {
    d.xq = d.x, d.yq = d.y, d.wq = d.w;
  } else {
    d.xq = memory::desc(s.x, kF32, tag::any);
    d.yq = memory::desc(s.y, kF32, tag::any);
    d.wq = memory::desc(s.w, kF32, tag::any);
  }
  return d;
}

dnnl::convolution_forward::primitive_desc FwdPd(const Shapes& s, const Descs& d, bool bias) {
  using F = dnnl::convolution_forward;
  auto alg = dnnl::algorithm::convolution_direct;
  auto pk = dnnl::prop_kind::forward_training;
  if (bias) {
    memory::desc b = PlainDesc({s.y[1]}, kF32);
    return F::primitive_desc(F::desc(pk, alg, d.xq, d.wq, b, d.yq, s.strides, s.dilates, s.pad_l, s.pad_r), Engine());
  }
  return F::primitive_desc(F::desc(pk, alg, d.xq, d.wq, d.yq, s.strides, s.dilates, s.pad_l, s.pad_r), Engine());
}

struct Entry {
  dnnl::primitive prim;
  Reordered a, b, out;  // the two inputs and the output, in argument order of the kind
};

Cache<Entry>& TheCache() {
  static Cache<Entry> c;
  return c;
}

std::shared_ptr<Entry> Lookup(const ConvGeom& g, Kind kind, ConvLayout l) {
  if (!Expressible(g)) return nullptr;
  return TheCache().Get(MakeKey(g, kind, l), [&]() -> std::shared_ptr<Entry> {
    try {
      const Shapes s = MakeShapes(g);
      const Descs d = MakeDescs(s, l);
      auto e = std::make_shared<Entry>();
      auto fwd = FwdPd(s, d, kind == kFwdBias);
      const auto alg = dnnl::algorithm::convolution_direct;
      if (kind == kFwd || kind == kFwdBias) {
        e->prim = dnnl::convolution_forward(fwd);
        e->a.Init(d.x, fwd.src_desc(), true, false);
        e->b.Init(d.w, fwd.weights_desc(), true, false);
        e->out.Init(d.y, fwd.dst_desc(), false, true);
      } else if (kind == kBwdData) {
        using B = dnnl::convolution_backward_data;
        B::primitive_desc pd(B::desc(alg, d.xq, d.wq, d.yq, s.strides, s.dilates, s.pad_l, s.pad_r), Engine(), fwd);
        e->prim = B(pd);
        e->a.Init(d.y, pd.diff_dst_desc(), true, false);
        e->b.Init(d.w, pd.weights_desc(), true, false);
        e->out.Init(d.x, pd.diff_src_desc(), false, true);
      } else {
        using B = dnnl::convolution_backward_weights;
        B::primitive_desc pd(B::desc(alg, d.xq, d.wq, d.yq, s.strides, s.dilates, s.pad_l, s.pad_r), Engine(), fwd);
        e->prim = B(pd);
        e->a.Init(d.x, pd.src_desc(), true, false);
        e->b.Init(d.y, pd.diff_dst_desc(), true, false);
        e->out.Init(d.w, pd.diff_weights_desc(), false, true);
      }
      return e;
    } catch (const dnnl::error&) {
      return nullptr;  // not expressible in this oneDNN build: the caller uses im2col + gemm
    }
  });
}

}  // namespace

bool ConvForward(const ConvGeom& g, const float* x, const Tensor& w, const float* bias, float* y, ConvLayout l) {
  auto e = Lookup(g, bias ? kFwdBias : kFwd, l);
  if (!e) return false;
  std::vector<Tensor> keep;
  dnnl::memory xm = e->a.In(x, &keep), ym = e->out.OutBuffer(y, &keep);
  dnnl::memory wm = WeightIn(e->b, w, [&] { return w.raw_data(); }, &keep);
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}};
  if (bias) args.emplace(DNNL_ARG_BIAS, Wrap(PlainDesc({g.cy}, kF32), bias));
  e->prim.execute(Stream(), args);
  e->out.Out(ym, y);
  Stream().wait();
  return true;
}

bool ConvBackwardData(const ConvGeom& g, const float* dy, const Tensor& w, float* dx, ConvLayout l) {
  auto e = Lookup(g, kBwdData, l);
  if (!e) return false;
  std::vector<Tensor> keep;
  dnnl::memory dym = e->a.In(dy, &keep), dxm = e->out.OutBuffer(dx, &keep);
  dnnl::memory wm = WeightIn(e->b, w, [&] { return w.raw_data(); }, &keep);
  e->prim.execute(Stream(), {{DNNL_ARG_DIFF_DST, dym}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DIFF_SRC, dxm}});
  e->out.Out(dxm, dx);
  Stream().wait();
  return true;
}

bool ConvBackwardWeight(const ConvGeom& g, const float* x, const float* dy, float* dw, ConvLayout l) {
  auto e = Lookup(g, kBwdWeight, l);
  if (!e) return false;
  std::vector<Tensor> keep;
  dnnl::memory xm = e->a.In(x, &keep), dym = e->b.In(dy, &keep), dwm = e->out.OutBuffer(dw, &keep);
  e->prim.execute(Stream(), {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DIFF_DST, dym}, {DNNL_ARG_DIFF_WEIGHTS, dwm}});
  e->out.Out(dwm, dw);
  Stream().wait();
  return true;
}

}  // namespace oneflow::dnnl_glue
