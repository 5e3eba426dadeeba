// lstm_layer, gru_layer and their backward kernels (src/ops/table/rnn.yaml): one LSTM or GRU
// layer-direction over a whole (padded or packed) sequence. Checks first, then the kernels on
// contiguous operands: LSTM's below, GRU's in kernels/rnn_gru.cpp; gemms on OpenBLAS (BlasGemm,
// writing into blocks of larger buffers) and one fused loop per step for the cell's pointwise
// math (threaded over rows).
//
// Schedule: the state buffers hold the whole batch (B = batch_sizes[0] rows); step t updates
// their first batch_sizes[t] rows. Forward in time the batch shrinks, so a sequence that ended
// keeps its final state in its row; in reverse it grows, so a sequence that starts late reads
// its initial state from its row. The backward walks the steps in the opposite order with the
// same buffers for the state gradients, which by the same argument end as the gradients of
// the initial states.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/parallel.h"
#include "kernels/dnnl/dnnl_rnn.h"
#include "kernels/rnn.h"
#include "kernels/vec_math.h"
#include "ops/copy.h"
#include "decl/add.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/gru_layer.h"
#include "decl/gru_layer_backward.h"
#include "decl/lstm_layer.h"
#include "decl/lstm_layer_backward.h"
#include "decl/zeros.h"

namespace oneflow {

namespace {

struct LstmGeometry : rnn::Schedule {
  int64_t I = 0, H = 0, P = 0;
  bool proj = false;
  int64_t width() const { return 6 * H + P; }  // workspace row: act 4H | c_prev H | tanh(c) H | h_prev P
};

void CheckFloatCpu(const Tensor& t, const Tensor& like, const char* name) {
  OF_CHECK(t.dtype() == like.dtype()) << "expected " << name << " of dtype " << DTypeName(like.dtype()) << ", got "
                                      << DTypeName(t.dtype());
  OF_CHECK(t.device() == like.device()) << "expected " << name << " on the device of input";
}

void CheckShape(const Tensor& t, const DimVector& want, const char* name) {
  OF_CHECK(t.sizes() == want) << "expected " << name << " of shape " << ShapeStr(want) << ", got "
                              << ShapeStr(t.sizes());
}

// The input rows: the kernels' dtypes and device.
void CheckRows(const Tensor& input) {
  OF_CHECK(input.dtype() == DType::kFloat32 || input.dtype() == DType::kFloat64)
      << "expected float32 or float64 input, got " << DTypeName(input.dtype());
  OF_CHECK(input.device().type == DeviceType::kCPU || input.device().type == DeviceType::kMeta)
      << "expected CPU tensors (the recurrent layer kernels are CPU-only)";
  OF_CHECK(input.dim() == 2) << "expected input of shape (rows, input_size), got " << ShapeStr(input.sizes());
}

// The steps of batch_sizes (whole, non-increasing, at least one) over `rows` input rows.
rnn::Schedule CheckSchedule(const std::vector<double>& batch_sizes, int64_t rows, bool reverse) {
  OF_CHECK(!batch_sizes.empty()) << "expected at least one step (batch_sizes is empty)";
  rnn::Schedule s;
  s.reverse = reverse;
  for (size_t t = 0; t < batch_sizes.size(); ++t) {
    const int64_t n = static_cast<int64_t>(batch_sizes[t]);
    OF_CHECK(static_cast<double>(n) == batch_sizes[t])
        << "expected whole numbers in batch_sizes, got " << batch_sizes[t] << " at step " << t;
    OF_CHECK(n >= 0 && (t == 0 || n <= s.alive.back()))
        << "expected non-negative, non-increasing batch_sizes, got " << n << " at step " << t;
    s.offset.push_back(s.N);
    s.alive.push_back(n);
    s.N += n;
  }
  OF_CHECK(s.N == rows) << "expected input with sum(batch_sizes) = " << s.N << " rows, got " << rows;
  s.B = s.alive[0];
  return s;
}

LstmGeometry CheckLstm(const Tensor& input, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                       const Tensor& b_hh, const Tensor& w_hr, const Tensor& hx, const Tensor& cx,
                       const std::vector<double>& batch_sizes, bool reverse) {
  CheckRows(input);
  OF_CHECK(w_ih.dim() == 2 && w_ih.sizes()[0] % 4 == 0)
      << "expected weight_ih of shape (4 * hidden_size, input_size), got " << ShapeStr(w_ih.sizes());
  LstmGeometry g;
  const int64_t N = input.sizes()[0];
  g.I = input.sizes()[1], g.H = w_ih.sizes()[0] / 4;
  g.proj = w_hr.defined();
  CheckFloatCpu(w_ih, input, "weight_ih");
  CheckShape(w_ih, {4 * g.H, g.I}, "weight_ih");
  if (g.proj) {
    CheckFloatCpu(w_hr, input, "weight_hr");
    OF_CHECK(w_hr.dim() == 2 && w_hr.sizes()[1] == g.H)
        << "expected weight_hr of shape (proj_size, " << g.H << "), got " << ShapeStr(w_hr.sizes());
    g.P = w_hr.sizes()[0];
  } else {
    g.P = g.H;
  }
  CheckFloatCpu(w_hh, input, "weight_hh");
  CheckShape(w_hh, {4 * g.H, g.P}, "weight_hh");
  OF_CHECK(b_ih.defined() == b_hh.defined()) << "expected both biases or neither";
  if (b_ih.defined()) {
    CheckFloatCpu(b_ih, input, "bias_ih");
    CheckFloatCpu(b_hh, input, "bias_hh");
    CheckShape(b_ih, {4 * g.H}, "bias_ih");
    CheckShape(b_hh, {4 * g.H}, "bias_hh");
  }
  static_cast<rnn::Schedule&>(g) = CheckSchedule(batch_sizes, N, reverse);
  if (hx.defined()) {
    CheckFloatCpu(hx, input, "hx");
    CheckShape(hx, {g.B, g.P}, "hx");
  }
  if (cx.defined()) {
    CheckFloatCpu(cx, input, "cx");
    CheckShape(cx, {g.B, g.H}, "cx");
  }
  return g;
}

struct GruGeometry : rnn::Schedule {
  int64_t I = 0, H = 0;
};

GruGeometry CheckGru(const Tensor& input, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh, const Tensor& hx, const std::vector<double>& batch_sizes, bool reverse) {
  CheckRows(input);
  OF_CHECK(w_ih.dim() == 2 && w_ih.sizes()[0] % 3 == 0)
      << "expected weight_ih of shape (3 * hidden_size, input_size), got " << ShapeStr(w_ih.sizes());
  GruGeometry g;
  g.I = input.sizes()[1], g.H = w_ih.sizes()[0] / 3;
  CheckFloatCpu(w_ih, input, "weight_ih");
  CheckShape(w_ih, {3 * g.H, g.I}, "weight_ih");
  CheckFloatCpu(w_hh, input, "weight_hh");
  CheckShape(w_hh, {3 * g.H, g.H}, "weight_hh");
  const Tensor* biases[2] = {&b_ih, &b_hh};
  const char* names[2] = {"bias_ih", "bias_hh"};
  for (int k = 0; k < 2; ++k) {
    if (!biases[k]->defined()) continue;
    CheckFloatCpu(*biases[k], input, names[k]);
    CheckShape(*biases[k], {3 * g.H}, names[k]);
  }
  static_cast<rnn::Schedule&>(g) = CheckSchedule(batch_sizes, input.sizes()[0], reverse);
  if (hx.defined()) {
    CheckFloatCpu(hx, input, "hx");
    CheckShape(hx, {g.B, g.H}, "hx");
  }
  return g;
}

using rnn::RowGemm;
using rnn::RowGrain;
using rnn::Sigm;

template <typename T>
void LstmForwardKernel(const LstmGeometry& g, const T* x, const T* w_ih, const T* w_hh, const T* w_hr,
                       const T* bias, T* out, T* h, T* c, T* ws) {
  const int64_t H = g.H, P = g.P, W = g.width(), T_ = static_cast<int64_t>(g.alive.size());
  RowGemm<T>(false, true, g.N, 4 * H, g.I, x, g.I, w_ih, g.I, T(0), ws, W);  // x W_ih^T, all steps
  std::vector<T> hh(g.proj ? g.B * H : 0);
  for (int64_t k = 0; k < T_; ++k) {
    const int64_t t = g.step_at(k, false), n = g.alive[t];
    T* rows = ws + g.offset[t] * W;
    for (int64_t r = 0; r < n; ++r) {
      std::memcpy(rows + r * W + 4 * H, c + r * H, H * sizeof(T));
      std::memcpy(rows + r * W + 6 * H, h + r * P, P * sizeof(T));
    }
    RowGemm<T>(false, true, n, 4 * H, P, h, P, w_hh, P, T(1), rows, W);  // + h W_hh^T
    T* h_cell = g.proj ? hh.data() : h;  // o * tanh(c): the state, or what the projection reads
    ParallelFor(0, n, RowGrain(H), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        T* a = rows + r * W;
        T* tc = a + 5 * H;
        T* cr = c + r * H;
        T* hr = h_cell + r * H;
        for (int64_t j = 0; j < H; ++j) {
          const T zi = a[j] + (bias ? bias[j] : T(0)), zf = a[H + j] + (bias ? bias[H + j] : T(0));
          const T zg = a[2 * H + j] + (bias ? bias[2 * H + j] : T(0));
          const T zo = a[3 * H + j] + (bias ? bias[3 * H + j] : T(0));
          const T i = Sigm(zi), f = Sigm(zf), gg = VecTanh(zg), o = Sigm(zo);
          a[j] = i, a[H + j] = f, a[2 * H + j] = gg, a[3 * H + j] = o;
          const T cn = f * cr[j] + i * gg;
          const T t_c = VecTanh(cn);
          cr[j] = cn, tc[j] = t_c, hr[j] = o * t_c;
        }
      }
    });
    if (g.proj) RowGemm<T>(false, true, n, P, H, hh.data(), H, w_hr, H, T(0), h, P);
    std::memcpy(out + g.offset[t] * P, h, n * P * sizeof(T));
  }
}

template <typename T>
void LstmBackwardKernel(const LstmGeometry& g, const T* d_out, const T* x, const T* w_ih, const T* w_hh,
                        const T* w_hr, const T* ws, T* dh, T* dc, T* dx, T* dw_ih, T* dw_hh, T* db, T* dw_hr) {
  const int64_t H = g.H, P = g.P, W = g.width(), T_ = static_cast<int64_t>(g.alive.size());
  std::vector<T> dgates(g.N * 4 * H), dh_rows(g.proj ? g.N * P : 0), dcell(g.proj ? g.B * H : 0);
  for (int64_t k = 0; k < T_; ++k) {
    const int64_t t = g.step_at(k, true), n = g.alive[t], off = g.offset[t];
    if (d_out)
      for (int64_t e = 0; e < n * P; ++e) dh[e] += d_out[off * P + e];
    const T* dcell_in = dh;  // the gradient of o * tanh(c)
    if (g.proj) {
      std::memcpy(dh_rows.data() + off * P, dh, n * P * sizeof(T));
      RowGemm<T>(false, false, n, H, P, dh, P, w_hr, H, T(0), dcell.data(), H);
      dcell_in = dcell.data();
    }
    T* dg = dgates.data() + off * 4 * H;
    ParallelFor(0, n, RowGrain(H), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* a = ws + (off + r) * W;
        const T* cp = a + 4 * H;
        const T* tc = a + 5 * H;
        const T* dhr = dcell_in + r * H;
        T* dcr = dc + r * H;
        T* d = dg + r * 4 * H;
        for (int64_t j = 0; j < H; ++j) {
          const T i = a[j], f = a[H + j], gg = a[2 * H + j], o = a[3 * H + j], t_c = tc[j];
          const T dct = dcr[j] + dhr[j] * o * (T(1) - t_c * t_c);
          d[j] = dct * gg * i * (T(1) - i);
          d[H + j] = dct * cp[j] * f * (T(1) - f);
          d[2 * H + j] = dct * i * (T(1) - gg * gg);
          d[3 * H + j] = dhr[j] * t_c * o * (T(1) - o);
          dcr[j] = dct * f;
        }
      }
    });
    RowGemm<T>(false, false, n, P, 4 * H, dg, 4 * H, w_hh, P, T(0), dh, P);  // dh_{t-1} = dG W_hh
  }
  const T* dG = dgates.data();
  if (dx) RowGemm<T>(false, false, g.N, g.I, 4 * H, dG, 4 * H, w_ih, g.I, T(0), dx, g.I);
  RowGemm<T>(true, false, 4 * H, g.I, g.N, dG, 4 * H, x, g.I, T(0), dw_ih, g.I);
  RowGemm<T>(true, false, 4 * H, P, g.N, dG, 4 * H, ws + 6 * H, W, T(0), dw_hh, P);
  std::fill(db, db + 4 * H, T(0));
  for (int64_t r = 0; r < g.N; ++r)
    for (int64_t j = 0; j < 4 * H; ++j) db[j] += dG[r * 4 * H + j];
  if (g.proj) {
    std::vector<T> hcell(g.N * H);  // o * tanh(c) of every row
    for (int64_t r = 0; r < g.N; ++r)
      for (int64_t j = 0; j < H; ++j) hcell[r * H + j] = ws[r * W + 3 * H + j] * ws[r * W + 5 * H + j];
    RowGemm<T>(true, false, P, H, g.N, dh_rows.data(), P, hcell.data(), H, T(0), dw_hr, H);
  }
}

template <typename F>
void DispatchReal(DType dt, const F& f) {
  if (dt == DType::kFloat32) f(float{});
  else f(double{});
}

// t as a contiguous tensor; an undefined t stays undefined.
Tensor Dense(const Tensor& t) { return t.defined() ? Contiguous(t) : t; }

// A (rows, cols) buffer holding `init` (copied), or zeros when `init` is undefined.
Tensor StateBuffer(const Tensor& init, int64_t rows, int64_t cols, const Tensor& like) {
  if (init.defined()) {
    Tensor b = Empty(DimVector{rows, cols}, like.dtype(), like.device(), false);
    CopyInto(b, init);
    return b;
  }
  return Zeros(DimVector{rows, cols}, like.dtype(), like.device(), false);
}

// Which kernel runs an LSTM or GRU layer: oneDNN's primitives for float32 padded batches (and
// no LSTM projection: oneDNN has no packed sequences or float64), else ours. ONEFLOW_RNN_IMPL (read
// on every call, docs/env.md) forces ours ("native") for benchmarking.
bool UseNativeOnly() {
  const char* v = std::getenv("ONEFLOW_RNN_IMPL");
  if (!v || !*v || !std::strcmp(v, "auto")) return false;
  if (!std::strcmp(v, "native")) return true;
  OF_THROW(kValue) << "ONEFLOW_RNN_IMPL must be auto or native, got '" << v << "'";
}

// The oneDNN shape of a layer, or nullopt when our kernel runs it: float32, a padded batch.
// Note [RNN inference forward]: a layer's train= says whether a backward may follow. nn.LSTM /
// nn.GRU pass False when none can (grad mode off, or neither the input, the initial state nor a
// weight requires grad): oneDNN then runs its forward_inference primitive, which saves nothing
// (the workspace output is empty; the backward refuses it) and is faster. Our kernel writes the
// workspace as part of its step either way. The argument is explicit, not read from grad mode
// inside the op, because the op's body runs with recording off and because nn.Graph traces it.
std::optional<dnnl_glue::RnnShape> DnnlRnn(dnnl_glue::RnnCell cell, const rnn::Schedule& g, int64_t I, int64_t H,
                                           DType dt, bool train = true) {
  if (dt != DType::kFloat32 || UseNativeOnly()) return std::nullopt;
  for (int64_t n : g.alive)
    if (n != g.B) return std::nullopt;  // packed
  dnnl_glue::RnnShape s{cell, g.steps(), g.B, I, H, g.reverse, train};
  if (dnnl_glue::RnnWorkspaceBytes(s) < 0) return std::nullopt;
  return s;
}

std::optional<dnnl_glue::RnnShape> DnnlLstm(const LstmGeometry& g, DType dt, bool train = true) {
  if (g.proj) return std::nullopt;
  return DnnlRnn(dnnl_glue::RnnCell::kLstm, g, g.I, g.H, dt, train);
}

// oneDNN's workspace as a float32 vector (its bytes rounded up).
int64_t DnnlWorkspaceElems(const dnnl_glue::RnnShape& s) { return (dnnl_glue::RnnWorkspaceBytes(s) + 3) / 4; }

// Checks of the backward's arguments that oneDNN's backward reads besides the workspace.
void CheckDnnlBackward(const Tensor& workspace, const std::optional<dnnl_glue::RnnShape>& dnnl,
                       const DimVector& native_ws, const std::vector<std::pair<const Tensor*, const char*>>& results,
                       const DimVector& state) {
  OF_CHECK(dnnl) << "expected the workspace of shape " << ShapeStr(native_ws)
                 << " (oneDNN's 1-D workspace only comes with float32 padded batches), got "
                 << ShapeStr(workspace.sizes());
  OF_CHECK(workspace.numel() > 0 || DnnlWorkspaceElems(*dnnl) == 0)
      << (dnnl->cell == dnnl_glue::RnnCell::kLstm ? "lstm_layer" : "gru_layer")
      << "_backward: the forward ran with train=False, which saves no workspace for a backward (Note [RNN "
         "inference forward]): run it with train=True to differentiate it";
  CheckShape(workspace, {DnnlWorkspaceElems(*dnnl)}, "workspace");
  for (const auto& [t, name] : results) {
    OF_CHECK(t->defined()) << "expected the forward's " << name << " with oneDNN's workspace";
    CheckShape(*t, name == std::string("output") ? DimVector{dnnl->T * dnnl->B, dnnl->H} : state, name);
  }
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> LstmLayer(const Tensor& input, const Tensor& weight_ih,
                                                     const Tensor& weight_hh, const Tensor& bias_ih,
                                                     const Tensor& bias_hh, const Tensor& weight_hr,
                                                     const Tensor& hx, const Tensor& cx, const std::vector<double>& batch_sizes,
                                                     bool reverse, bool train) {
  OpScope scope("lstm_layer");
  const LstmGeometry g = CheckLstm(input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx, batch_sizes,
                                   reverse);
  const DType dt = input.dtype();
  const Device dev = input.device();
  const auto dnnl = DnnlLstm(g, dt, train);
  Tensor out = Empty(DimVector{g.N, g.P}, dt, dev, false);
  Tensor ws = dnnl ? Empty(DimVector{DnnlWorkspaceElems(*dnnl)}, dt, dev, false)
                   : Empty(DimVector{g.N, g.width()}, dt, dev, false);
  if (dev.type == DeviceType::kMeta)
    return {out, Empty(DimVector{g.B, g.P}, dt, dev, false), Empty(DimVector{g.B, g.H}, dt, dev, false), ws};
  Tensor h = StateBuffer(hx, g.B, g.P, input), c = StateBuffer(cx, g.B, g.H, input);
  const Tensor x = Contiguous(input), w_ih = Contiguous(weight_ih), w_hh = Contiguous(weight_hh);
  const Tensor w_hr = Dense(weight_hr);
  if (dnnl) {
    Tensor hn = Empty(DimVector{g.B, g.H}, dt, dev, false), cn = Empty(DimVector{g.B, g.H}, dt, dev, false);
    const Tensor b_ih = Dense(bias_ih), b_hh = Dense(bias_hh);
    dnnl_glue::RnnArgs a;
    a.weight_ih = w_ih, a.weight_hh = w_hh;
    a.x = x.data<float>(), a.w_ih = w_ih.data<float>(), a.w_hh = w_hh.data<float>();
    a.b_ih = b_ih.defined() ? b_ih.data<float>() : nullptr, a.b_hh = b_hh.defined() ? b_hh.data<float>() : nullptr;
    a.h0 = h.data<float>(), a.c0 = c.data<float>();
    a.out = out.data<float>(), a.hn = hn.data<float>(), a.cn = cn.data<float>(), a.ws = ws.raw_data();
    OF_CHECK(dnnl_glue::RnnForward(*dnnl, a)) << "oneDNN could not run the layer it accepted";
    return {out, hn, cn, ws};
  }
  const Tensor bias = bias_ih.defined() ? Add(bias_ih, bias_hh, Scalar(1)) : Tensor();
  DispatchReal(dt, [&](auto tag) {
    using T = decltype(tag);
    LstmForwardKernel<T>(g, x.data<T>(), w_ih.data<T>(), w_hh.data<T>(), g.proj ? w_hr.data<T>() : nullptr,
                         bias.defined() ? bias.data<T>() : nullptr, out.data<T>(), h.data<T>(), c.data<T>(),
                         ws.data<T>());
  });
  return {out, h, c, ws};
}

std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor> LstmLayerBackward(
    const Tensor& grad_output, const Tensor& grad_hn, const Tensor& grad_cn, const Tensor& input,
    const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& weight_hr, const Tensor& workspace,
    const Tensor& bias_ih, const Tensor& bias_hh, const Tensor& hx, const Tensor& cx, const Tensor& output,
    const Tensor& h_n, const Tensor& c_n, const std::vector<double>& batch_sizes, bool reverse, bool input_grad) {
  OpScope scope("lstm_layer_backward");
  const LstmGeometry g = CheckLstm(input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, grad_hn, grad_cn,
                                   batch_sizes, reverse);
  CheckFloatCpu(workspace, input, "workspace");
  // The workspace says which kernel ran the forward: oneDNN's is 1-D.
  const auto dnnl = workspace.dim() == 1 ? DnnlLstm(g, input.dtype()) : std::nullopt;
  if (workspace.dim() == 1) {
    CheckDnnlBackward(workspace, dnnl, {g.N, g.width()}, {{&output, "output"}, {&h_n, "h_n"}, {&c_n, "c_n"}},
                      {g.B, g.H});
    if (hx.defined()) CheckShape(hx, {g.B, g.H}, "hx");
    if (cx.defined()) CheckShape(cx, {g.B, g.H}, "cx");
  } else {
    CheckShape(workspace, {g.N, g.width()}, "workspace");
  }
  if (grad_output.defined()) {
    CheckFloatCpu(grad_output, input, "grad_output");
    CheckShape(grad_output, {g.N, g.P}, "grad_output");
  }
  const DType dt = input.dtype();
  const Device dev = input.device();
  Tensor dx = input_grad ? Empty(input.sizes(), dt, dev, false) : Tensor();
  Tensor dw_ih = Empty(weight_ih.sizes(), dt, dev, false), dw_hh = Empty(weight_hh.sizes(), dt, dev, false);
  Tensor db = Empty(DimVector{4 * g.H}, dt, dev, false);
  Tensor dw_hr = g.proj ? Empty(weight_hr.sizes(), dt, dev, false) : Tensor();
  if (dev.type == DeviceType::kMeta)
    return {dx, dw_ih, dw_hh, db, dw_hr, Empty(DimVector{g.B, g.P}, dt, dev, false),
            Empty(DimVector{g.B, g.H}, dt, dev, false)};
  Tensor dh = StateBuffer(grad_hn, g.B, g.P, input), dc = StateBuffer(grad_cn, g.B, g.H, input);
  const Tensor go = Dense(grad_output), x = Contiguous(input), w_ih = Contiguous(weight_ih);
  const Tensor w_hh = Contiguous(weight_hh), w_hr = Dense(weight_hr), ws = Contiguous(workspace);
  if (dnnl) {
    const Tensor d_out = go.defined() ? go : Zeros(DimVector{g.N, g.H}, dt, dev, false);
    const Tensor h0 = Dense(hx), c0 = Dense(cx), b_ih = Dense(bias_ih), b_hh = Dense(bias_hh);
    const Tensor y = Contiguous(output), hn = Contiguous(h_n), cn = Contiguous(c_n);
    Tensor dh0 = Empty(DimVector{g.B, g.H}, dt, dev, false), dc0 = Empty(DimVector{g.B, g.H}, dt, dev, false);
    dnnl_glue::RnnArgs a;
    a.weight_ih = w_ih, a.weight_hh = w_hh;
    a.x = x.data<float>(), a.w_ih = w_ih.data<float>(), a.w_hh = w_hh.data<float>();
    a.b_ih = b_ih.defined() ? b_ih.data<float>() : nullptr, a.b_hh = b_hh.defined() ? b_hh.data<float>() : nullptr;
    a.h0 = h0.defined() ? h0.data<float>() : nullptr, a.c0 = c0.defined() ? c0.data<float>() : nullptr;
    a.out = y.data<float>(), a.hn = hn.data<float>(), a.cn = cn.data<float>(), a.ws = ws.raw_data();
    dnnl_glue::RnnGrads d;
    d.d_out = d_out.data<float>(), d.d_hn = dh.data<float>(), d.d_cn = dc.data<float>();
    d.dx = input_grad ? dx.data<float>() : nullptr, d.dh0 = dh0.data<float>(), d.dc0 = dc0.data<float>();
    d.dw_ih = dw_ih.data<float>(), d.dw_hh = dw_hh.data<float>(), d.db_ih = db.data<float>();
    OF_CHECK(dnnl_glue::RnnBackward(*dnnl, a, d)) << "oneDNN could not run the layer it accepted";
    return {dx, dw_ih, dw_hh, db, dw_hr, dh0, dc0};
  }
  DispatchReal(dt, [&](auto tag) {
    using T = decltype(tag);
    LstmBackwardKernel<T>(g, go.defined() ? go.data<T>() : nullptr, x.data<T>(), w_ih.data<T>(), w_hh.data<T>(),
                          g.proj ? w_hr.data<T>() : nullptr, ws.data<T>(), dh.data<T>(), dc.data<T>(),
                          input_grad ? dx.data<T>() : nullptr, dw_ih.data<T>(), dw_hh.data<T>(), db.data<T>(),
                          g.proj ? dw_hr.data<T>() : nullptr);
  });
  return {dx, dw_ih, dw_hh, db, dw_hr, dh, dc};
}

std::tuple<Tensor, Tensor, Tensor> GruLayer(const Tensor& input, const Tensor& weight_ih, const Tensor& weight_hh,
                                            const Tensor& bias_ih, const Tensor& bias_hh, const Tensor& hx,
                                            const std::vector<double>& batch_sizes, bool reverse, bool train) {
  OpScope scope("gru_layer");
  const GruGeometry g = CheckGru(input, weight_ih, weight_hh, bias_ih, bias_hh, hx, batch_sizes, reverse);
  const DType dt = input.dtype();
  const Device dev = input.device();
  const auto dnnl = DnnlRnn(dnnl_glue::RnnCell::kGru, g, g.I, g.H, dt, train);
  Tensor out = Empty(DimVector{g.N, g.H}, dt, dev, false);
  Tensor ws = dnnl ? Empty(DimVector{DnnlWorkspaceElems(*dnnl)}, dt, dev, false)
                   : Empty(DimVector{g.N, rnn::GruWorkspaceWidth(g.H)}, dt, dev, false);
  if (dev.type == DeviceType::kMeta) return {out, Empty(DimVector{g.B, g.H}, dt, dev, false), ws};
  const Tensor x = Contiguous(input), w_ih = Contiguous(weight_ih), w_hh = Contiguous(weight_hh);
  const Tensor b_ih = Dense(bias_ih), b_hh = Dense(bias_hh);
  if (dnnl) {
    const Tensor h0 = Dense(hx);
    Tensor hn = Empty(DimVector{g.B, g.H}, dt, dev, false);
    dnnl_glue::RnnArgs a;
    a.weight_ih = w_ih, a.weight_hh = w_hh;
    a.x = x.data<float>(), a.w_ih = w_ih.data<float>(), a.w_hh = w_hh.data<float>();
    a.b_ih = b_ih.defined() ? b_ih.data<float>() : nullptr, a.b_hh = b_hh.defined() ? b_hh.data<float>() : nullptr;
    a.h0 = h0.defined() ? h0.data<float>() : nullptr;
    a.out = out.data<float>(), a.hn = hn.data<float>(), a.ws = ws.raw_data();
    OF_CHECK(dnnl_glue::RnnForward(*dnnl, a)) << "oneDNN could not run the layer it accepted";
    return {out, hn, ws};
  }
  Tensor h = StateBuffer(hx, g.B, g.H, input);
  DispatchReal(dt, [&](auto tag) {
    using T = decltype(tag);
    rnn::GruForward<T>(g, g.I, g.H, x.data<T>(), w_ih.data<T>(), w_hh.data<T>(),
                       b_ih.defined() ? b_ih.data<T>() : nullptr, b_hh.defined() ? b_hh.data<T>() : nullptr,
                       out.data<T>(), h.data<T>(), ws.data<T>());
  });
  return {out, h, ws};
}

std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor, Tensor> GruLayerBackward(
    const Tensor& grad_output, const Tensor& grad_hn, const Tensor& input, const Tensor& weight_ih,
    const Tensor& weight_hh, const Tensor& workspace, const Tensor& bias_ih, const Tensor& bias_hh, const Tensor& hx,
    const Tensor& output, const Tensor& h_n, const std::vector<double>& batch_sizes, bool reverse, bool input_grad) {
  OpScope scope("gru_layer_backward");
  const GruGeometry g = CheckGru(input, weight_ih, weight_hh, bias_ih, bias_hh, grad_hn, batch_sizes, reverse);
  CheckFloatCpu(workspace, input, "workspace");
  // The workspace says which kernel ran the forward: oneDNN's is 1-D.
  const auto dnnl =
      workspace.dim() == 1 ? DnnlRnn(dnnl_glue::RnnCell::kGru, g, g.I, g.H, input.dtype()) : std::nullopt;
  if (workspace.dim() == 1) {
    CheckDnnlBackward(workspace, dnnl, {g.N, rnn::GruWorkspaceWidth(g.H)}, {{&output, "output"}, {&h_n, "h_n"}},
                      {g.B, g.H});
    if (hx.defined()) CheckShape(hx, {g.B, g.H}, "hx");
  } else {
    CheckShape(workspace, {g.N, rnn::GruWorkspaceWidth(g.H)}, "workspace");
  }
  if (grad_output.defined()) {
    CheckFloatCpu(grad_output, input, "grad_output");
    CheckShape(grad_output, {g.N, g.H}, "grad_output");
  }
  const DType dt = input.dtype();
  const Device dev = input.device();
  Tensor dx = input_grad ? Empty(input.sizes(), dt, dev, false) : Tensor();
  Tensor dw_ih = Empty(weight_ih.sizes(), dt, dev, false), dw_hh = Empty(weight_hh.sizes(), dt, dev, false);
  Tensor db_ih = Empty(DimVector{3 * g.H}, dt, dev, false), db_hh = Empty(DimVector{3 * g.H}, dt, dev, false);
  if (dev.type == DeviceType::kMeta)
    return {dx, dw_ih, dw_hh, db_ih, db_hh, Empty(DimVector{g.B, g.H}, dt, dev, false)};
  Tensor dh = StateBuffer(grad_hn, g.B, g.H, input);
  const Tensor go = Dense(grad_output), x = Contiguous(input), w_ih = Contiguous(weight_ih);
  const Tensor w_hh = Contiguous(weight_hh), ws = Contiguous(workspace);
  if (dnnl) {
    const Tensor d_out = go.defined() ? go : Zeros(DimVector{g.N, g.H}, dt, dev, false);
    const Tensor h0 = Dense(hx), b_ih = Dense(bias_ih), b_hh = Dense(bias_hh);
    const Tensor y = Contiguous(output), hn = Contiguous(h_n);
    Tensor dh0 = Empty(DimVector{g.B, g.H}, dt, dev, false);
    dnnl_glue::RnnArgs a;
    a.weight_ih = w_ih, a.weight_hh = w_hh;
    a.x = x.data<float>(), a.w_ih = w_ih.data<float>(), a.w_hh = w_hh.data<float>();
    a.b_ih = b_ih.defined() ? b_ih.data<float>() : nullptr, a.b_hh = b_hh.defined() ? b_hh.data<float>() : nullptr;
    a.h0 = h0.defined() ? h0.data<float>() : nullptr;
    a.out = y.data<float>(), a.hn = hn.data<float>(), a.ws = ws.raw_data();
    dnnl_glue::RnnGrads d;
    d.d_out = d_out.data<float>(), d.d_hn = dh.data<float>();
    d.dx = input_grad ? dx.data<float>() : nullptr, d.dh0 = dh0.data<float>();
    d.dw_ih = dw_ih.data<float>(), d.dw_hh = dw_hh.data<float>();
    d.db_ih = db_ih.data<float>(), d.db_hh = db_hh.data<float>();
    OF_CHECK(dnnl_glue::RnnBackward(*dnnl, a, d)) << "oneDNN could not run the layer it accepted";
    return {dx, dw_ih, dw_hh, db_ih, db_hh, dh0};
  }
  DispatchReal(dt, [&](auto tag) {
    using T = decltype(tag);
    rnn::GruBackward<T>(g, g.I, g.H, go.defined() ? go.data<T>() : nullptr, x.data<T>(), w_ih.data<T>(),
                        w_hh.data<T>(), ws.data<T>(), dh.data<T>(), input_grad ? dx.data<T>() : nullptr,
                        dw_ih.data<T>(), dw_hh.data<T>(), db_ih.data<T>(), db_hh.data<T>());
  });
  return {dx, dw_ih, dw_hh, db_ih, db_hh, dh};
}

}  // namespace oneflow
