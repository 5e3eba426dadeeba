// Backward helpers of lstm_layer and gru_layer (src/ops/table/rnn.yaml).
#pragma once
#include <array>
#include <vector>

#include "autograd/functional.h"

namespace oneflow::functional {

// Gradients of (input, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr, hx, cx) from those of
// lstm_layer's (output, h_n, c_n, workspace), undefined where grad_input_mask says unwanted.
// Without create_graph the lstm_layer_backward kernel; with it the layer recomputed from
// differentiable table ops and differentiated by the engine, so higher derivatives exist.
std::vector<Tensor> LstmLayerGrads(const std::vector<Tensor>& grads, const Tensor& input, const Tensor& weight_ih,
                                   const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                                   const Tensor& weight_hr, const Tensor& hx, const Tensor& cx,
                                   const std::vector<double>& batch_sizes, bool reverse, const Tensor& output,
                                   const Tensor& h_n, const Tensor& c_n, const Tensor& workspace,
                                   const std::array<bool, 8>& grad_input_mask);

// Gradients of (input, weight_ih, weight_hh, bias_ih, bias_hh, hx) from those of gru_layer's
// (output, h_n, workspace), as LstmLayerGrads: the gru_layer_backward kernel, or under
// create_graph the layer recomputed from differentiable table ops.
std::vector<Tensor> GruLayerGrads(const std::vector<Tensor>& grads, const Tensor& input, const Tensor& weight_ih,
                                  const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
                                  const Tensor& hx, const std::vector<double>& batch_sizes, bool reverse,
                                  const Tensor& output, const Tensor& h_n, const Tensor& workspace, const std::array<bool, 6>& grad_input_mask);

}  // namespace oneflow::functional
