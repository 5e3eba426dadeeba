#include "autograd/formulas/rnn.h"

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

// The layer as differentiable table ops (the schedule of src/ops/rnn_ops.cpp): returns
// (output, h_n, c_n).
std::vector<Tensor> RecordedLstm(const Tensor& input, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                 const Tensor& b_hh, const Tensor& w_hr, const Tensor& hx, const Tensor& cx,
                                 const std::vector<double>& batch_sizes, bool reverse) {
  const std::vector<int64_t> alive(batch_sizes.begin(), batch_sizes.end());  // whole numbers (checked)
  const int64_t H = w_ih.sizes()[0] / 4, P = w_hh.sizes()[1], B = alive[0];
  const int64_t T_ = static_cast<int64_t>(alive.size());
  Tensor gi = functional::Mm(input, functional::T(w_ih));
  if (b_ih.defined()) gi = functional::Add(gi, functional::Add(b_ih, b_hh, Scalar(1)), Scalar(1));
  Tensor h = hx.defined() ? hx : oneflow::Zeros(DimVector{B, P}, input.dtype(), input.device(), false);
  Tensor c = cx.defined() ? cx : oneflow::Zeros(DimVector{B, H}, input.dtype(), input.device(), false);
  std::vector<int64_t> offset(T_);
  for (int64_t t = 0, rows = 0; t < T_; ++t) offset[t] = rows, rows += alive[t];
  std::vector<Tensor> outs(T_);
  const Tensor hh_t = functional::T(w_hh);
  for (int64_t k = 0; k < T_; ++k) {
    const int64_t t = reverse ? T_ - 1 - k : k, n = alive[t];
    const Tensor s = functional::Addmm(functional::Narrow(gi, 0, offset[t], n), functional::Narrow(h, 0, 0, n),
                                       hh_t, Scalar(1), Scalar(1));
    auto gate = [&](int64_t q) { return functional::Narrow(s, 1, q * H, H); };
    const Tensor i = functional::Sigmoid(gate(0)), f = functional::Sigmoid(gate(1));
    const Tensor g = functional::Tanh(gate(2)), o = functional::Sigmoid(gate(3));
    const Tensor cn = functional::Add(functional::Mul(f, functional::Narrow(c, 0, 0, n)), functional::Mul(i, g),
                                      Scalar(1));
    Tensor hn = functional::Mul(o, functional::Tanh(cn));
    if (w_hr.defined()) hn = functional::Mm(hn, functional::T(w_hr));
    outs[t] = hn;
    h = n < B ? functional::Cat({hn, functional::Narrow(h, 0, n, B - n)}, 0) : hn;
    c = n < B ? functional::Cat({cn, functional::Narrow(c, 0, n, B - n)}, 0) : cn;
  }
  return {functional::Cat(outs, 0), h, c};
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

// The GRU layer as differentiable table ops (the schedule of src/ops/rnn_ops.cpp): returns
// (output, h_n).
std::vector<Tensor> RecordedGru(const Tensor& input, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                const Tensor& b_hh, const Tensor& hx, const std::vector<double>& batch_sizes,
                                bool reverse) {
  const std::vector<int64_t> alive(batch_sizes.begin(), batch_sizes.end());  // whole numbers (checked)
  const int64_t H = w_ih.sizes()[0] / 3, B = alive[0];
  const int64_t T_ = static_cast<int64_t>(alive.size());
  Tensor gi = functional::Mm(input, functional::T(w_ih));
  if (b_ih.defined()) gi = functional::Add(gi, b_ih, Scalar(1));
  Tensor h = hx.defined() ? hx : oneflow::Zeros(DimVector{B, H}, input.dtype(), input.device(), false);
  std::vector<int64_t> offset(T_);
  for (int64_t t = 0, rows = 0; t < T_; ++t) offset[t] = rows, rows += alive[t];
  std::vector<Tensor> outs(T_);
  const Tensor hh_t = functional::T(w_hh);
  for (int64_t k = 0; k < T_; ++k) {
    const int64_t t = reverse ? T_ - 1 - k : k, n = alive[t];
    const Tensor hp = functional::Narrow(h, 0, 0, n), x_g = functional::Narrow(gi, 0, offset[t], n);
    Tensor h_g = functional::Mm(hp, hh_t);
    if (b_hh.defined()) h_g = functional::Add(h_g, b_hh, Scalar(1));
    auto gate = [&](const Tensor& s, int64_t q) { return functional::Narrow(s, 1, q * H, H); };
    const Tensor r = functional::Sigmoid(functional::Add(gate(x_g, 0), gate(h_g, 0), Scalar(1)));
    const Tensor z = functional::Sigmoid(functional::Add(gate(x_g, 1), gate(h_g, 1), Scalar(1)));
    const Tensor nn = functional::Tanh(functional::Add(gate(x_g, 2), functional::Mul(r, gate(h_g, 2)), Scalar(1)));
    const Tensor hn = functional::Add(nn, functional::Mul(z, functional::Sub(hp, nn, Scalar(1))), Scalar(1));
    outs[t] = hn;
    h = n < B ? functional::Cat({hn, functional::Narrow(h, 0, n, B - n)}, 0) : hn;
  }
  return {functional::Cat(outs, 0), h};
}

}  // namespace

std::vector<Tensor> LstmLayerGrads(const std::vector<Tensor>& grads, const Tensor& input, const Tensor& weight_ih,
                                   const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                                   const Tensor& weight_hr, const Tensor& hx, const Tensor& cx,
                                   const std::vector<double>& batch_sizes, bool reverse, const Tensor& output,
                                   const Tensor& h_n, const Tensor& c_n, const Tensor& workspace,
                                   const std::array<bool, 8>& m) {
  std::vector<Tensor> r(8);
  if (!grads[0].defined() && !grads[1].defined() && !grads[2].defined()) return r;  // workspace only
  if (!GradMode::is_enabled()) {
    auto [dx, dw_ih, dw_hh, db, dw_hr, dh, dc] =
        functional::LstmLayerBackward(grads[0], grads[1], grads[2], input, weight_ih, weight_hh, weight_hr, workspace,
                                      bias_ih, bias_hh, hx, cx, output, h_n, c_n, batch_sizes, reverse, m[0]);
    const Tensor got[8] = {dx, dw_ih, dw_hh, db, db, dw_hr, dh, dc};
    for (int k = 0; k < 8; ++k)
      if (m[k]) r[k] = got[k];
    if (m[3] && m[4]) r[4] = functional::Clone(db);  // two gradients, not one tensor twice (in a graph: a node)
    return r;
  }
  const std::vector<Tensor> outs =
      RecordedLstm(input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx, batch_sizes, reverse);
  return DifferentiateRecorded(outs, grads, {input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx},
                               std::vector<bool>(m.begin(), m.end()));
}

std::vector<Tensor> GruLayerGrads(const std::vector<Tensor>& grads, const Tensor& input, const Tensor& weight_ih,
                                  const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                                  const Tensor& hx, const std::vector<double>& batch_sizes, bool reverse,
                                  const Tensor& output, const Tensor& h_n, const Tensor& workspace,
                                  const std::array<bool, 6>& m) {
  std::vector<Tensor> r(6);
  if (!grads[0].defined() && !grads[1].defined()) return r;  // workspace only
  if (!GradMode::is_enabled()) {
    auto [dx, dw_ih, dw_hh, db_ih, db_hh, dh] = functional::GruLayerBackward(
        grads[0], grads[1], input, weight_ih, weight_hh, workspace, bias_ih, bias_hh, hx, output, h_n, batch_sizes,
        reverse, m[0]);
    const Tensor got[6] = {dx, dw_ih, dw_hh, db_ih, db_hh, dh};
    for (int k = 0; k < 6; ++k)
      if (m[k]) r[k] = got[k];
    return r;
  }
  const std::vector<Tensor> outs = RecordedGru(input, weight_ih, weight_hh, bias_ih, bias_hh, hx, batch_sizes, reverse);
  return DifferentiateRecorded(outs, grads, {input, weight_ih, weight_hh, bias_ih, bias_hh, hx},
                               std::vector<bool>(m.begin(), m.end()));
}

}  // namespace oneflow::functional
