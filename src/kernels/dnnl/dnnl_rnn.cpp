#include "kernels/dnnl/dnnl_rnn.h"

#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/dnnl/dnnl_common.h"

namespace oneflow::dnnl_glue {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

int64_t Gates(const RnnShape& s) { return s.cell == RnnCell::kLstm ? 4 : 3; }

// Our buffers in oneDNN's terms: the rows of a time-major sequence are `tnc`, a state is one
// layer-direction of `ldnc`, weights (G*H, in) in oneDNN's gate order `ldgoi`, the bias `ldgo`
// (four gates for both cells).
struct Plain {
  memory::desc x, y, state, w_ih, w_hh, bias;
  explicit Plain(const RnnShape& s)
      : x({s.T, s.B, s.I}, kF32, tag::tnc),
        y({s.T, s.B, s.H}, kF32, tag::tnc),
        state({1, 1, s.B, s.H}, kF32, tag::ldnc),
        w_ih({1, 1, s.I, Gates(s), s.H}, kF32, tag::ldgoi),
        w_hh({1, 1, s.H, Gates(s), s.H}, kF32, tag::ldgoi),
        bias({1, 1, 4, s.H}, kF32, tag::ldgo) {}
};

memory::desc Any(const memory::desc& d) { return memory::desc(d.dims(), kF32, tag::any); }

dnnl::rnn_direction Direction(const RnnShape& s) {
  return s.reverse ? dnnl::rnn_direction::unidirectional_right2left
                   : dnnl::rnn_direction::unidirectional_left2right;
}

// The forward primitive descriptor of one cell: forward_training, or forward_inference when
// !s.train.
template <typename F>
typename F::primitive_desc FwdPd(const RnnShape& s) {
  const Plain p(s);
  const auto prop = s.train ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
  if constexpr (std::is_same_v<F, dnnl::lstm_forward>)
    return {typename F::desc(prop, Direction(s), p.x, p.state, p.state, Any(p.w_ih), Any(p.w_hh), p.bias, p.y,
                             p.state, p.state),
            Engine()};
  else
    return {typename F::desc(prop, Direction(s), p.x, p.state, Any(p.w_ih), Any(p.w_hh), p.bias, p.y, p.state),
            Engine()};
}

// The backward primitive descriptor of one cell, given its training forward's.
template <typename F, typename B>
typename B::primitive_desc BwdPd(const RnnShape& s, const typename F::primitive_desc& fwd) {
  const Plain p(s);
  const auto dir = Direction(s);
  if constexpr (std::is_same_v<F, dnnl::lstm_forward>) {
    typename B::primitive_desc bwd(
        typename B::desc(dnnl::prop_kind::backward, dir, p.x, p.state, p.state, Any(p.w_ih), Any(p.w_hh), p.bias,
                         p.y, p.state, p.state, p.x, p.state, p.state, Any(p.w_ih), Any(p.w_hh), p.bias, p.y,
                         p.state, p.state),
        Engine(), fwd);
    return bwd;
  } else {
    typename B::primitive_desc bwd(
        typename B::desc(dnnl::prop_kind::backward, dir, p.x, p.state, Any(p.w_ih), Any(p.w_hh), p.bias, p.y,
                         p.state, p.x, p.state, Any(p.w_ih), Any(p.w_hh), p.bias, p.y, p.state),
        Engine(), fwd);
    return bwd;
  }
}

struct Entry {
  dnnl::primitive fwd, bwd;    // bwd: training entries only
  memory::desc ws;
  Reordered w_ih, w_hh;        // the forward's weights
  Reordered bw_ih, bw_hh;      // the backward's weights
  Reordered dw_ih, dw_hh;      // the backward's weight gradients
};

template <typename F, typename B>
void Fill(const RnnShape& s, Entry* e) {
  const Plain p(s);
  const auto fwd = FwdPd<F>(s);
  e->fwd = F(fwd);
  e->ws = fwd.workspace_desc();
  e->w_ih.Init(p.w_ih, fwd.weights_layer_desc(), true, false);
  e->w_hh.Init(p.w_hh, fwd.weights_iter_desc(), true, false);
  if (!s.train) return;
  const auto bwd = BwdPd<F, B>(s, fwd);
  e->bwd = B(bwd);
  e->bw_ih.Init(p.w_ih, bwd.weights_layer_desc(), true, false);
  e->bw_hh.Init(p.w_hh, bwd.weights_iter_desc(), true, false);
  e->dw_ih.Init(p.w_ih, bwd.diff_weights_layer_desc(), false, true);
  e->dw_hh.Init(p.w_hh, bwd.diff_weights_iter_desc(), false, true);
}

std::shared_ptr<Entry> Lookup(const RnnShape& s) {
  static Cache<Entry> cache;
  if (s.T <= 0 || s.B <= 0 || s.I <= 0 || s.H <= 0) return nullptr;
  Key key{{static_cast<int64_t>(s.cell), s.T, s.B, s.I, s.H, s.reverse, s.train}};
  return cache.Get(key, [&]() -> std::shared_ptr<Entry> {
    try {
      auto e = std::make_shared<Entry>();
      if (s.cell == RnnCell::kLstm) Fill<dnnl::lstm_forward, dnnl::lstm_backward>(s, e.get());
      else Fill<dnnl::lbr_gru_forward, dnnl::lbr_gru_backward>(s, e.get());
      return e;
    } catch (const dnnl::error&) {
      return nullptr;  // not expressible in this oneDNN build: our kernel runs the layer
    }
  });
}

// A weight (G*H, in) in oneDNN's gate order: GRU's r and z blocks swapped (a copy), LSTM's as is.
const float* GateOrder(const RnnShape& s, const float* w, int64_t cols, std::vector<float>* buf) {
  if (s.cell == RnnCell::kLstm) return w;
  const int64_t block = s.H * cols;
  buf->resize(3 * block);
  std::memcpy(buf->data(), w + block, block * sizeof(float));
  std::memcpy(buf->data() + block, w, block * sizeof(float));
  std::memcpy(buf->data() + 2 * block, w + 2 * block, block * sizeof(float));
  return buf->data();
}

// The same swap back, from oneDNN's order into `w`.
void FromGateOrder(const RnnShape& s, const std::vector<float>& src, int64_t cols, float* w) {
  const int64_t block = s.H * cols;
  std::memcpy(w, src.data() + block, block * sizeof(float));
  std::memcpy(w + block, src.data(), block * sizeof(float));
  std::memcpy(w + 2 * block, src.data() + 2 * block, block * sizeof(float));
}

// oneDNN's bias (4, H): LSTM b_ih + b_hh; GRU (b_z, b_r summed over both, b_in, b_hn).
std::vector<float> Bias(const RnnShape& s, const float* b_ih, const float* b_hh) {
  const int64_t H = s.H;
  std::vector<float> b(4 * H, 0.0f);
  if (!b_ih) return b;
  if (s.cell == RnnCell::kLstm) {
    for (int64_t j = 0; j < 4 * H; ++j) b[j] = b_ih[j] + b_hh[j];
    return b;
  }
  for (int64_t j = 0; j < H; ++j) {
    b[j] = b_ih[H + j] + b_hh[H + j];  // z
    b[H + j] = b_ih[j] + b_hh[j];      // r
    b[2 * H + j] = b_ih[2 * H + j];
    b[3 * H + j] = b_hh[2 * H + j];
  }
  return b;
}

// A state argument: `p`, or zeros.
memory State(const Plain& pl, const float* p, std::vector<float>* zeros) {
  if (p) return Wrap(pl.state, p);
  zeros->assign(pl.state.get_size() / sizeof(float), 0.0f);
  return Wrap(pl.state, zeros->data());
}

// The primitive accumulates into its weight gradients: they start at zero.
memory ZeroedOut(const Reordered& r, void* data, std::vector<Tensor>* keep) {
  memory m = r.OutBuffer(data, keep);
  std::memset(m.get_data_handle(), 0, m.get_desc().get_size());
  return m;
}

}  // namespace

int64_t RnnWorkspaceBytes(const RnnShape& s) {
  auto e = Lookup(s);
  return e ? static_cast<int64_t>(e->ws.get_size()) : -1;
}

bool RnnForward(const RnnShape& s, const RnnArgs& a) {
  auto e = Lookup(s);
  if (!e) return false;
  const Plain p(s);
  std::vector<Tensor> keep;
  std::vector<float> wi, wh, z0, z1, cn_sink;
  const std::vector<float> bias = Bias(s, a.b_ih, a.b_hh);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC_LAYER, Wrap(p.x, a.x)},
      {DNNL_ARG_SRC_ITER, State(p, a.h0, &z0)},
      {DNNL_ARG_WEIGHTS_LAYER, WeightIn(e->w_ih, a.weight_ih, [&] { return GateOrder(s, a.w_ih, s.I, &wi); }, &keep)},
      {DNNL_ARG_WEIGHTS_ITER, WeightIn(e->w_hh, a.weight_hh, [&] { return GateOrder(s, a.w_hh, s.H, &wh); }, &keep)},
      {DNNL_ARG_BIAS, Wrap(p.bias, bias.data())},
      {DNNL_ARG_DST_LAYER, Wrap(p.y, a.out)},
      {DNNL_ARG_DST_ITER, Wrap(p.state, a.hn)}};
  if (s.train) args.emplace(DNNL_ARG_WORKSPACE, Wrap(e->ws, a.ws));
  if (s.cell == RnnCell::kLstm) {
    args.emplace(DNNL_ARG_SRC_ITER_C, State(p, a.c0, &z1));
    args.emplace(DNNL_ARG_DST_ITER_C, Wrap(p.state, a.cn));
  }
  e->fwd.execute(Stream(), args);
  Stream().wait();
  return true;
}

bool RnnBackward(const RnnShape& s, const RnnArgs& a, const RnnGrads& g) {
  auto e = Lookup(s);
  if (!e || !s.train) return false;
  const Plain p(s);
  const bool gru = s.cell == RnnCell::kGru;
  std::vector<Tensor> keep;
  std::vector<float> wi, wh, z0, z1, dx_sink(g.dx ? 0 : s.T * s.B * s.I), dbias(4 * s.H, 0.0f);
  std::vector<float> dwi_buf(gru ? 3 * s.H * s.I : 0), dwh_buf(gru ? 3 * s.H * s.H : 0);
  float* dwi_dst = gru ? dwi_buf.data() : g.dw_ih;
  float* dwh_dst = gru ? dwh_buf.data() : g.dw_hh;
  const std::vector<float> bias = Bias(s, a.b_ih, a.b_hh);
  memory dwi = ZeroedOut(e->dw_ih, dwi_dst, &keep), dwh = ZeroedOut(e->dw_hh, dwh_dst, &keep);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC_LAYER, Wrap(p.x, a.x)},
      {DNNL_ARG_SRC_ITER, State(p, a.h0, &z0)},
      {DNNL_ARG_WEIGHTS_LAYER, WeightIn(e->bw_ih, a.weight_ih, [&] { return GateOrder(s, a.w_ih, s.I, &wi); }, &keep)},
      {DNNL_ARG_WEIGHTS_ITER, WeightIn(e->bw_hh, a.weight_hh, [&] { return GateOrder(s, a.w_hh, s.H, &wh); }, &keep)},
      {DNNL_ARG_BIAS, Wrap(p.bias, bias.data())},
      {DNNL_ARG_DST_LAYER, Wrap(p.y, a.out)},
      {DNNL_ARG_DST_ITER, Wrap(p.state, a.hn)},
      {DNNL_ARG_WORKSPACE, Wrap(e->ws, a.ws)},
      {DNNL_ARG_DIFF_DST_LAYER, Wrap(p.y, g.d_out)},
      {DNNL_ARG_DIFF_DST_ITER, Wrap(p.state, g.d_hn)},
      {DNNL_ARG_DIFF_SRC_LAYER, Wrap(p.x, g.dx ? g.dx : dx_sink.data())},
      {DNNL_ARG_DIFF_SRC_ITER, Wrap(p.state, g.dh0)},
      {DNNL_ARG_DIFF_WEIGHTS_LAYER, dwi},
      {DNNL_ARG_DIFF_WEIGHTS_ITER, dwh},
      {DNNL_ARG_DIFF_BIAS, Wrap(p.bias, dbias.data())}};
  if (!gru) {
    args.emplace(DNNL_ARG_SRC_ITER_C, State(p, a.c0, &z1));
    args.emplace(DNNL_ARG_DST_ITER_C, Wrap(p.state, a.cn));
    args.emplace(DNNL_ARG_DIFF_DST_ITER_C, Wrap(p.state, g.d_cn));
    args.emplace(DNNL_ARG_DIFF_SRC_ITER_C, Wrap(p.state, g.dc0));
  }
  e->bwd.execute(Stream(), args);
  e->dw_ih.Out(dwi, dwi_dst);
  e->dw_hh.Out(dwh, dwh_dst);
  Stream().wait();
  const int64_t H = s.H;
  if (!gru) {
    std::memcpy(g.db_ih, dbias.data(), 4 * H * sizeof(float));
    return true;
  }
  FromGateOrder(s, dwi_buf, s.I, g.dw_ih);
  FromGateOrder(s, dwh_buf, s.H, g.dw_hh);
  for (int64_t j = 0; j < H; ++j) {  // (z, r, in, hn) back to (r, z, n) of each bias
    g.db_ih[j] = g.db_hh[j] = dbias[H + j];
    g.db_ih[H + j] = g.db_hh[H + j] = dbias[j];
    g.db_ih[2 * H + j] = dbias[2 * H + j];
    g.db_hh[2 * H + j] = dbias[3 * H + j];
  }
  return true;
}

}  // namespace oneflow::dnnl_glue
