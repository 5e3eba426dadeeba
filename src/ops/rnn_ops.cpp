// lstm_layer and lstm_layer_backward (src/ops/table/rnn.yaml): one LSTM layer-direction over a
// whole (padded or packed) sequence. Checks first, then the kernels below on contiguous
// operands: gemms on OpenBLAS (BlasGemm, writing into blocks of larger buffers) and one fused
// loop per step for the cell's pointwise math (threaded over rows).
//
// Schedule: the state buffers hold the whole batch (B = batch_sizes[0] rows); step t updates
// their first batch_sizes[t] rows. Forward in time the batch shrinks, so a sequence that ended
// keeps its final state in its row; in reverse it grows, so a sequence that starts late reads
// its initial state from its row. The backward walks the steps in the opposite order with the
// same buffers for the state gradients, which by the same argument end as the gradients of
// hx and cx.
#include <algorithm>
#include <cstring>
#include <tuple>
#include <vector>

#include "core/parallel.h"
#include "kernels/gemm.h"
#include "kernels/vec_math.h"
#include "ops/copy.h"
#include "decl/add.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/lstm_layer.h"
#include "decl/lstm_layer_backward.h"
#include "decl/zeros.h"

namespace oneflow {

namespace {

struct LstmGeometry {
  int64_t N = 0, I = 0, H = 0, P = 0, B = 0;
  bool proj = false, reverse = false;
  std::vector<int64_t> alive, offset;  // rows per step, first row of each step
  int64_t width() const { return 6 * H + P; }  // workspace row: act 4H | c_prev H | tanh(c) H | h_prev P
  int64_t step_at(int64_t k, bool backward) const {  // the k-th step processed
    const int64_t T = static_cast<int64_t>(alive.size());
    return (reverse != backward) ? T - 1 - k : k;
  }
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

LstmGeometry CheckLstm(const Tensor& input, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                       const Tensor& b_hh, const Tensor& w_hr, const Tensor& hx, const Tensor& cx,
                       const std::vector<double>& batch_sizes, bool reverse) {
  OF_CHECK(input.dtype() == DType::kFloat32 || input.dtype() == DType::kFloat64)
      << "expected float32 or float64 input, got " << DTypeName(input.dtype());
  OF_CHECK(input.device().type == DeviceType::kCPU || input.device().type == DeviceType::kMeta)
      << "expected CPU tensors (the LSTM layer kernel is CPU-only)";
  OF_CHECK(input.dim() == 2) << "expected input of shape (rows, input_size), got " << ShapeStr(input.sizes());
  OF_CHECK(w_ih.dim() == 2 && w_ih.sizes()[0] % 4 == 0)
      << "expected weight_ih of shape (4 * hidden_size, input_size), got " << ShapeStr(w_ih.sizes());
  LstmGeometry g;
  g.N = input.sizes()[0], g.I = input.sizes()[1], g.H = w_ih.sizes()[0] / 4, g.reverse = reverse;
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
  OF_CHECK(!batch_sizes.empty()) << "expected at least one step (batch_sizes is empty)";
  int64_t rows = 0;
  for (size_t t = 0; t < batch_sizes.size(); ++t) {
    const int64_t n = static_cast<int64_t>(batch_sizes[t]);
    OF_CHECK(static_cast<double>(n) == batch_sizes[t])
        << "expected whole numbers in batch_sizes, got " << batch_sizes[t] << " at step " << t;
    OF_CHECK(n >= 0 && (t == 0 || n <= g.alive.back()))
        << "expected non-negative, non-increasing batch_sizes, got " << n << " at step " << t;
    g.offset.push_back(rows);
    g.alive.push_back(n);
    rows += n;
  }
  OF_CHECK(rows == g.N) << "expected input with sum(batch_sizes) = " << rows << " rows, got " << g.N;
  g.B = g.alive[0];
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

// c = alpha op(a) op(b) + beta c (row-major, see BlasGemm); empty products give beta * c.
template <typename T>
void RowGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
         T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  BlasGemm<T>(ta, tb, m, n, k, T(1), a, std::max<int64_t>(lda, 1), b, std::max<int64_t>(ldb, 1), beta, c,
              std::max<int64_t>(ldc, 1));
}

template <typename T> inline T Sigm(T x) { return T(1) / (T(1) + VecExp(-x)); }

int64_t RowGrain(int64_t H) { return std::max<int64_t>(1, 8192 / std::max<int64_t>(H, 1)); }

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
void DispatchLstm(DType dt, const F& f) {
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

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> LstmLayer(const Tensor& input, const Tensor& weight_ih,
                                                     const Tensor& weight_hh, const Tensor& bias_ih,
                                                     const Tensor& bias_hh, const Tensor& weight_hr,
                                                     const Tensor& hx, const Tensor& cx, const std::vector<double>& batch_sizes,
                                                     bool reverse) {
  OpScope scope("lstm_layer");
  const LstmGeometry g = CheckLstm(input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx, batch_sizes,
                                   reverse);
  const DType dt = input.dtype();
  const Device dev = input.device();
  Tensor out = Empty(DimVector{g.N, g.P}, dt, dev, false);
  Tensor ws = Empty(DimVector{g.N, g.width()}, dt, dev, false);
  if (dev.type == DeviceType::kMeta)
    return {out, Empty(DimVector{g.B, g.P}, dt, dev, false), Empty(DimVector{g.B, g.H}, dt, dev, false), ws};
  Tensor h = StateBuffer(hx, g.B, g.P, input), c = StateBuffer(cx, g.B, g.H, input);
  const Tensor x = Contiguous(input), w_ih = Contiguous(weight_ih), w_hh = Contiguous(weight_hh);
  const Tensor w_hr = Dense(weight_hr);
  const Tensor bias = bias_ih.defined() ? Add(bias_ih, bias_hh, Scalar(1)) : Tensor();
  DispatchLstm(dt, [&](auto tag) {
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
    const std::vector<double>& batch_sizes, bool reverse, bool input_grad) {
  OpScope scope("lstm_layer_backward");
  const LstmGeometry g = CheckLstm(input, weight_ih, weight_hh, Tensor(), Tensor(), weight_hr, grad_hn, grad_cn,
                                   batch_sizes, reverse);
  CheckFloatCpu(workspace, input, "workspace");
  CheckShape(workspace, {g.N, g.width()}, "workspace");
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
  DispatchLstm(dt, [&](auto tag) {
    using T = decltype(tag);
    LstmBackwardKernel<T>(g, go.defined() ? go.data<T>() : nullptr, x.data<T>(), w_ih.data<T>(), w_hh.data<T>(),
                          g.proj ? w_hr.data<T>() : nullptr, ws.data<T>(), dh.data<T>(), dc.data<T>(),
                          input_grad ? dx.data<T>() : nullptr, dw_ih.data<T>(), dw_hh.data<T>(), db.data<T>(),
                          g.proj ? dw_hr.data<T>() : nullptr);
  });
  return {dx, dw_ih, dw_hh, db, dw_hr, dh, dc};
}

}  // namespace oneflow
