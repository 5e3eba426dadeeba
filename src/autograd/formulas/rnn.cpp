#include "autograd/formulas/rnn.h"

#include <algorithm>
#include <functional>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "decl/add.h"
#include "decl/addmm.h"
#include "decl/cat.h"
#include "decl/clone.h"
#include "decl/gru_layer_backward.h"
#include "decl/lstm_layer_backward.h"
#include "decl/mm.h"
#include "decl/mul.h"
#include "decl/narrow.h"
#include "decl/sigmoid.h"
#include "decl/sub.h"
#include "decl/t.h"
#include "decl/tanh.h"
#include "decl/zeros.h"

namespace oneflow::functional {

namespace {

// Note [Recorded recurrent layers]: under create_graph the backward of lstm_layer / gru_layer
// recomputes the layer from differentiable table ops and lets the engine differentiate it, so
// higher derivatives exist. The two layers differ only in their step (the gates and the state
// they carry); the schedule over padded and packed batches (src/ops/rnn_ops.cpp's) is RecordedScan,
// and the choice between the backward kernel and the recomputation is LayerGrads.

// One recorded step: the state's first rows (those of the sequences alive at the step; state[0]
// is h) and their rows of the projected input -> the new state of those rows.
using RecordedStep = std::function<std::vector<Tensor>(const Tensor& gi_rows, const std::vector<Tensor>& state)>;

// Runs `step` over the time steps (in time order, or reversed) on the rows of each step: at step
// t the first batch_sizes[t] rows of the state, the others (sequences that ended, or have not
// started in the reverse direction) kept as they are. Returns (output rows of all steps, the
// final state...).
std::vector<Tensor> RecordedScan(const Tensor& gi, std::vector<Tensor> state, const std::vector<double>& batch_sizes,
                                 bool reverse, const RecordedStep& step) {
  const std::vector<int64_t> alive(batch_sizes.begin(), batch_sizes.end());  // whole numbers (checked)
  const int64_t B = alive[0], T_ = static_cast<int64_t>(alive.size());
  std::vector<int64_t> offset(T_);
  for (int64_t t = 0, rows = 0; t < T_; ++t) offset[t] = rows, rows += alive[t];
  std::vector<Tensor> outs(T_);
  for (int64_t k = 0; k < T_; ++k) {
    const int64_t t = reverse ? T_ - 1 - k : k, n = alive[t];
    std::vector<Tensor> live(state.size());
    for (size_t q = 0; q < state.size(); ++q) live[q] = functional::Narrow(state[q], 0, 0, n);
    const std::vector<Tensor> next = step(functional::Narrow(gi, 0, offset[t], n), live);
    outs[t] = next[0];
    for (size_t q = 0; q < state.size(); ++q)
      state[q] = n < B ? functional::Cat({next[q], functional::Narrow(state[q], 0, n, B - n)}, 0) : next[q];
  }
  std::vector<Tensor> r{functional::Cat(outs, 0)};
  r.insert(r.end(), state.begin(), state.end());
  return r;
}

// The initial state: hx, or zeros of (batch, width).
Tensor StateOrZeros(const Tensor& hx, const Tensor& input, int64_t batch, int64_t width) {
  return hx.defined() ? hx : oneflow::Zeros(DimVector{batch, width}, input.dtype(), input.device(), false);
}

// The LSTM layer as differentiable table ops: returns (output, h_n, c_n).
std::vector<Tensor> RecordedLstm(const Tensor& input, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                 const Tensor& b_hh, const Tensor& w_hr, const Tensor& hx, const Tensor& cx,
                                 const std::vector<double>& batch_sizes, bool reverse) {
  const int64_t H = w_ih.sizes()[0] / 4, P = w_hh.sizes()[1], B = static_cast<int64_t>(batch_sizes[0]);
  Tensor gi = functional::Mm(input, functional::T(w_ih));
  if (b_ih.defined()) gi = functional::Add(gi, functional::Add(b_ih, b_hh, Scalar(1)), Scalar(1));
  const Tensor hh_t = functional::T(w_hh);
  auto step = [&](const Tensor& x_g, const std::vector<Tensor>& s) -> std::vector<Tensor> {
    const Tensor g4 = functional::Addmm(x_g, s[0], hh_t, Scalar(1), Scalar(1));
    auto gate = [&](int64_t q) { return functional::Narrow(g4, 1, q * H, H); };
    const Tensor i = functional::Sigmoid(gate(0)), f = functional::Sigmoid(gate(1));
    const Tensor g = functional::Tanh(gate(2)), o = functional::Sigmoid(gate(3));
    const Tensor cn = functional::Add(functional::Mul(f, s[1]), functional::Mul(i, g), Scalar(1));
    Tensor hn = functional::Mul(o, functional::Tanh(cn));
    if (w_hr.defined()) hn = functional::Mm(hn, functional::T(w_hr));
    return {hn, cn};
  };
  return RecordedScan(gi, {StateOrZeros(hx, input, B, P), StateOrZeros(cx, input, B, H)}, batch_sizes, reverse,
                      step);
}

// The GRU layer as differentiable table ops: returns (output, h_n).
std::vector<Tensor> RecordedGru(const Tensor& input, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                const Tensor& b_hh, const Tensor& hx, const std::vector<double>& batch_sizes,
                                bool reverse) {
  const int64_t H = w_ih.sizes()[0] / 3, B = static_cast<int64_t>(batch_sizes[0]);
  Tensor gi = functional::Mm(input, functional::T(w_ih));
  if (b_ih.defined()) gi = functional::Add(gi, b_ih, Scalar(1));
  const Tensor hh_t = functional::T(w_hh);
  auto step = [&](const Tensor& x_g, const std::vector<Tensor>& s) -> std::vector<Tensor> {
    const Tensor& hp = s[0];
    Tensor h_g = functional::Mm(hp, hh_t);
    if (b_hh.defined()) h_g = functional::Add(h_g, b_hh, Scalar(1));
    auto gate = [&](const Tensor& g3, int64_t q) { return functional::Narrow(g3, 1, q * H, H); };
    const Tensor r = functional::Sigmoid(functional::Add(gate(x_g, 0), gate(h_g, 0), Scalar(1)));
    const Tensor z = functional::Sigmoid(functional::Add(gate(x_g, 1), gate(h_g, 1), Scalar(1)));
    const Tensor nn = functional::Tanh(functional::Add(gate(x_g, 2), functional::Mul(r, gate(h_g, 2)), Scalar(1)));
    return {functional::Add(nn, functional::Mul(z, functional::Sub(hp, nn, Scalar(1))), Scalar(1))};
  };
  return RecordedScan(gi, {StateOrZeros(hx, input, B, H)}, batch_sizes, reverse, step);
}

// The gradients of `inputs` (where `wanted`) from those of a recomputed layer's outputs (`grads`,
// the workspace's last and ignored), as differentiable tensors (create_graph).
std::vector<Tensor> DifferentiateRecorded(const std::vector<Tensor>& outs, const std::vector<Tensor>& grads,
                                          const std::vector<Tensor>& inputs, const std::vector<bool>& wanted_mask) {
  std::vector<Tensor> roots, seeds, wanted, r(inputs.size());
  std::vector<size_t> slots;
  for (size_t k = 0; k < outs.size(); ++k)
    if (grads[k].defined()) roots.push_back(outs[k]), seeds.push_back(grads[k]);
  for (size_t k = 0; k < inputs.size(); ++k)
    if (wanted_mask[k] && inputs[k].defined()) wanted.push_back(inputs[k]), slots.push_back(k);
  BackwardOptions opt;
  opt.create_graph = true;
  opt.keep_graph = true;  // the gradients' own graph reads the recomputed forward's saved values
  opt.allow_unused = true;
  const std::vector<Tensor> got = RunBackward(roots, seeds, wanted, opt);
  for (size_t k = 0; k < slots.size(); ++k) r[slots[k]] = got[k];
  return r;
}

// A layer op's N input gradients (where `m` asks) from its outputs' `grads` (the workspace's
// last): none when only the workspace has one; the backward kernel's (`kernel()`) without
// create_graph; else the recorded layer's (`record()`, Note [Recorded recurrent layers]).
template <size_t N, class Kernel, class Record>
std::vector<Tensor> LayerGrads(const std::vector<Tensor>& grads, const std::vector<Tensor>& inputs,
                               const std::array<bool, N>& m, Kernel kernel, Record record) {
  std::vector<Tensor> r(N);
  if (std::none_of(grads.begin(), grads.end() - 1, [](const Tensor& g) { return g.defined(); })) return r;
  if (!GradMode::is_enabled()) {
    const std::array<Tensor, N> got = kernel();
    for (size_t k = 0; k < N; ++k)
      if (m[k]) r[k] = got[k];
    return r;
  }
  return DifferentiateRecorded(record(), grads, inputs, std::vector<bool>(m.begin(), m.end()));
}

}  // namespace

std::vector<Tensor> LstmLayerGrads(const std::vector<Tensor>& grads, const Tensor& input, const Tensor& weight_ih,
                                   const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                                   const Tensor& weight_hr, const Tensor& hx, const Tensor& cx,
                                   const std::vector<double>& batch_sizes, bool reverse, const Tensor& output,
                                   const Tensor& h_n, const Tensor& c_n, const Tensor& workspace,
                                   const std::array<bool, 8>& m) {
  auto kernel = [&]() -> std::array<Tensor, 8> {
    auto [dx, dw_ih, dw_hh, db, dw_hr, dh, dc] =
        functional::LstmLayerBackward(grads[0], grads[1], grads[2], input, weight_ih, weight_hh, weight_hr, workspace,
                                      bias_ih, bias_hh, hx, cx, output, h_n, c_n, batch_sizes, reverse, m[0]);
    // one bias gradient for both biases: two tensors, not one twice (in a graph: a node)
    const Tensor db_hh = m[3] && m[4] ? functional::Clone(db) : db;
    return {dx, dw_ih, dw_hh, db, db_hh, dw_hr, dh, dc};
  };
  auto record = [&] {
    return RecordedLstm(input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx, batch_sizes, reverse);
  };
  return LayerGrads(grads, {input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx}, m, kernel, record);
}

std::vector<Tensor> GruLayerGrads(const std::vector<Tensor>& grads, const Tensor& input, const Tensor& weight_ih,
                                  const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                                  const Tensor& hx, const std::vector<double>& batch_sizes, bool reverse,
                                  const Tensor& output, const Tensor& h_n, const Tensor& workspace,
                                  const std::array<bool, 6>& m) {
  auto kernel = [&]() -> std::array<Tensor, 6> {
    auto [dx, dw_ih, dw_hh, db_ih, db_hh, dh] = functional::GruLayerBackward(
        grads[0], grads[1], input, weight_ih, weight_hh, workspace, bias_ih, bias_hh, hx, output, h_n, batch_sizes,
        reverse, m[0]);
    return {dx, dw_ih, dw_hh, db_ih, db_hh, dh};
  };
  auto record = [&] { return RecordedGru(input, weight_ih, weight_hh, bias_ih, bias_hh, hx, batch_sizes, reverse); };
  return LayerGrads(grads, {input, weight_ih, weight_hh, bias_ih, bias_hh, hx}, m, kernel, record);
}

}  // namespace oneflow::functional
