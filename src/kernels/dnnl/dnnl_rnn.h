// float32 LSTM and GRU layers on oneDNN's RNN primitives (lstm_forward / lstm_backward and
// lbr_gru_forward / lbr_gru_backward: "linear before reset" is PyTorch's GRU), behind lstm_layer
// and gru_layer (src/ops/rnn_ops.cpp) where the case fits: a padded batch (every step the same
// rows), no LSTM projection. Arguments are in PyTorch's layouts; the glue converts: LSTM's gate
// order i, f, g, o is oneDNN's (weights (4H, in) are its `ldgoi`), GRU's r, z, n becomes
// oneDNN's u(= z), r, o(= n) with a bias of four gates (b_z, b_r, b_in, b_hn).
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace oneflow::dnnl_glue {

enum class RnnCell { kLstm, kGru };

struct RnnShape {
  RnnCell cell = RnnCell::kLstm;
  int64_t T = 0, B = 0, I = 0, H = 0;  // steps, batch, input and hidden sizes
  bool reverse = false;
  // false: oneDNN's forward_inference, which saves nothing for a backward (for LSTM(256, 256),
  // batch 32 x 64 steps, no 42 MB workspace per layer, and 2-5% less time than
  // forward_training); the layer's train= argument, Note [RNN inference forward] in
  // src/ops/rnn_ops.cpp.
  bool train = true;
};

// Bytes of oneDNN's workspace for this layer (0 when !train), or -1 when oneDNN cannot run it.
int64_t RnnWorkspaceBytes(const RnnShape& s);

// Tensors of one call: x (T*B, I) time-major, w_ih (G*H, I), w_hh (G*H, H), b_ih, b_hh (G*H,
// both or neither), h0, c0 (B, H; c for LSTM only; null for zeros), out (T*B, H), hn, cn (B, H);
// ws: the training workspace of RnnWorkspaceBytes bytes. weight_ih, weight_hh: the tensors
// behind w_ih and w_hh, whose reordered copies the weight cache keeps (Note [Weight cache]).
struct RnnArgs {
  Tensor weight_ih, weight_hh;
  const float *x = nullptr, *w_ih = nullptr, *w_hh = nullptr, *b_ih = nullptr, *b_hh = nullptr;
  const float *h0 = nullptr, *c0 = nullptr;
  float *out = nullptr, *hn = nullptr, *cn = nullptr;
  void* ws = nullptr;
};

// Gradients (same layouts; dx may be null). db_hh: GRU only (LSTM's bias gradient, that of
// b_ih and b_hh alike, goes to db_ih).
struct RnnGrads {
  const float *d_out = nullptr, *d_hn = nullptr, *d_cn = nullptr;
  float *dx = nullptr, *dh0 = nullptr, *dc0 = nullptr, *dw_ih = nullptr, *dw_hh = nullptr, *db_ih = nullptr,
        *db_hh = nullptr;
};

// False when oneDNN cannot run the layer (RnnWorkspaceBytes < 0).
bool RnnForward(const RnnShape& s, const RnnArgs& a);
// `a` as the forward left it (its results and workspace); d_out, d_hn, d_cn required; s.train.
bool RnnBackward(const RnnShape& s, const RnnArgs& a, const RnnGrads& g);

}  // namespace oneflow::dnnl_glue
