// The GRU layer kernels of src/kernels/rnn.h: the input projection of all steps is one gemm
// (into the workspace's first 3H columns, overwritten by r, z, n), each step one gemm for
// h W_hh^T plus a fused pointwise loop (threaded over rows); the backward walks the steps in the
// opposite order, then each weight's gradient is one gemm over all steps.
#include <cstring>

#include "core/parallel.h"
#include "kernels/rnn.h"

namespace oneflow::rnn {

template <typename T>
void GruForward(const Schedule& s, int64_t I, int64_t H, const T* x, const T* w_ih, const T* w_hh, const T* b_ih,
                const T* b_hh, T* out, T* h, T* ws) {
  const int64_t W = GruWorkspaceWidth(H);
  RowGemm<T>(false, true, s.N, 3 * H, I, x, I, w_ih, I, T(0), ws, W);  // x W_ih^T, all steps
  std::vector<T> gh(s.B * 3 * H);
  for (int64_t k = 0; k < s.steps(); ++k) {
    const int64_t t = s.step_at(k, false), n = s.alive[t];
    T* rows = ws + s.offset[t] * W;
    RowGemm<T>(false, true, n, 3 * H, H, h, H, w_hh, H, T(0), gh.data(), 3 * H);  // h W_hh^T
    ParallelFor(0, n, RowGrain(H), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        T* a = rows + r * W;
        const T* g = gh.data() + r * 3 * H;
        T* hr = h + r * H;
        for (int64_t j = 0; j < H; ++j) {
          // (x W^T + b_i) + (h W^T + b_h): PyTorch's grouping of the sums
          const T ir = a[j] + (b_ih ? b_ih[j] : T(0)), hr_ = g[j] + (b_hh ? b_hh[j] : T(0));
          const T iz = a[H + j] + (b_ih ? b_ih[H + j] : T(0)), hz = g[H + j] + (b_hh ? b_hh[H + j] : T(0));
          const T in = a[2 * H + j] + (b_ih ? b_ih[2 * H + j] : T(0));
          const T hn = g[2 * H + j] + (b_hh ? b_hh[2 * H + j] : T(0));
          const T rg = Sigm(ir + hr_), zg = Sigm(iz + hz), ng = VecTanh(in + rg * hn);
          a[j] = rg, a[H + j] = zg, a[2 * H + j] = ng, a[3 * H + j] = hn, a[4 * H + j] = hr[j];
          hr[j] = ng + zg * (hr[j] - ng);
        }
      }
    });
    std::memcpy(out + s.offset[t] * H, h, n * H * sizeof(T));
  }
}

template <typename T>
void GruBackward(const Schedule& s, int64_t I, int64_t H, const T* d_out, const T* x, const T* w_ih, const T* w_hh,
                 const T* ws, T* dh, T* dx, T* dw_ih, T* dw_hh, T* db_ih, T* db_hh) {
  const int64_t W = GruWorkspaceWidth(H), G = 3 * H;
  // The gradients of the input-side and the hidden-side pre-activations (x W_ih^T + b_ih and
  // h W_hh^T + b_hh): equal in r and z, the n columns differ by the factor r.
  std::vector<T> dgi(s.N * G), dgh(s.N * G);
  for (int64_t k = 0; k < s.steps(); ++k) {
    const int64_t t = s.step_at(k, true), n = s.alive[t], off = s.offset[t];
    if (d_out)
      for (int64_t e = 0; e < n * H; ++e) dh[e] += d_out[off * H + e];
    ParallelFor(0, n, RowGrain(H), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* a = ws + (off + r) * W;
        T* di = dgi.data() + (off + r) * G;
        T* dg = dgh.data() + (off + r) * G;
        T* d = dh + r * H;
        for (int64_t j = 0; j < H; ++j) {
          const T rg = a[j], zg = a[H + j], ng = a[2 * H + j], hn = a[3 * H + j], hp = a[4 * H + j];
          const T dhj = d[j];
          const T dn = dhj * (T(1) - zg) * (T(1) - ng * ng);
          const T dz = dhj * (hp - ng) * zg * (T(1) - zg);
          const T dr = dn * hn * rg * (T(1) - rg);
          di[j] = dr, di[H + j] = dz, di[2 * H + j] = dn;
          dg[j] = dr, dg[H + j] = dz, dg[2 * H + j] = dn * rg;
          d[j] = dhj * zg;  // through h' = n + z (h - n) directly
        }
      }
    });
    RowGemm<T>(false, false, n, H, G, dgh.data() + off * G, G, w_hh, H, T(1), dh, H);  // + dG_h W_hh
  }
  if (dx) RowGemm<T>(false, false, s.N, I, G, dgi.data(), G, w_ih, I, T(0), dx, I);
  RowGemm<T>(true, false, G, I, s.N, dgi.data(), G, x, I, T(0), dw_ih, I);
  RowGemm<T>(true, false, G, H, s.N, dgh.data(), G, ws + 4 * H, W, T(0), dw_hh, H);
  std::fill(db_ih, db_ih + G, T(0));
  std::fill(db_hh, db_hh + G, T(0));
  for (int64_t r = 0; r < s.N; ++r)
    for (int64_t j = 0; j < G; ++j) db_ih[j] += dgi[r * G + j], db_hh[j] += dgh[r * G + j];
}

template void GruForward<float>(const Schedule&, int64_t, int64_t, const float*, const float*, const float*,
                                const float*, const float*, float*, float*, float*);
template void GruForward<double>(const Schedule&, int64_t, int64_t, const double*, const double*, const double*,
                                 const double*, const double*, double*, double*, double*);
template void GruBackward<float>(const Schedule&, int64_t, int64_t, const float*, const float*, const float*,
                                 const float*, const float*, float*, float*, float*, float*, float*, float*);
template void GruBackward<double>(const Schedule&, int64_t, int64_t, const double*, const double*, const double*,
                                  const double*, const double*, double*, double*, double*, double*, double*,
                                  double*);

}  // namespace oneflow::rnn
