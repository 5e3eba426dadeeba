// Kernels of the whole-sequence recurrent layers (src/ops/rnn_ops.cpp: lstm_layer, gru_layer):
// raw row-major buffers, no tensors. The rows of all steps are time-major; step t has alive[t]
// rows starting at row offset[t] (a packed batch; a padded one repeats its batch size).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/vec_math.h"

namespace oneflow::rnn {

// The steps of one layer-direction over a (padded or packed) batch of B = alive[0] sequences.
struct Schedule {
  int64_t N = 0, B = 0;  // rows of all steps, rows of the first
  bool reverse = false;
  std::vector<int64_t> alive, offset;  // rows per step, first row of each step
  int64_t steps() const { return static_cast<int64_t>(alive.size()); }
  int64_t step_at(int64_t k, bool backward) const {  // the k-th step processed
    return (reverse != backward) ? steps() - 1 - k : k;
  }
};

// c = op(a) op(b) + beta c (row-major, see BlasGemm); empty products give beta * c.
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

// Rows per task of the pointwise loops: about 8K elements.
inline int64_t RowGrain(int64_t H) { return std::max<int64_t>(1, 8192 / std::max<int64_t>(H, 1)); }

// GRU (gates r, z, n as PyTorch): r, z = sigmoid(x W_{r,z}^T + b_i + h W_{r,z}^T + b_h),
// n = tanh(x W_n^T + b_in + r * (h W_n^T + b_hn)), h' = n + z * (h - n).
// The workspace row of the backward (width 5H): r | z | n | h W_hn^T + b_hn | h_{t-1}.
inline int64_t GruWorkspaceWidth(int64_t H) { return 5 * H; }

// x (N, I), w_ih (3H, I), w_hh (3H, H), biases (3H) or null; h (B, H) holds the initial state and
// ends as the final one (a row keeps the state of the last step that updated it).
template <typename T>
void GruForward(const Schedule& s, int64_t I, int64_t H, const T* x, const T* w_ih, const T* w_hh, const T* b_ih,
                const T* b_hh, T* out, T* h, T* ws);

// dh (B, H) holds the gradient of h_n and ends as that of hx; d_out (N, H) or null; dx null when
// unwanted. Writes every weight and bias gradient.
template <typename T>
void GruBackward(const Schedule& s, int64_t I, int64_t H, const T* d_out, const T* x, const T* w_ih, const T* w_hh,
                 const T* ws, T* dh, T* dx, T* dw_ih, T* dw_hh, T* db_ih, T* db_hh);

}  // namespace oneflow::rnn
