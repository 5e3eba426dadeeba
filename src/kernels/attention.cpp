// Fused attention, flash-attention style: a block of kBq queries meets the keys in blocks of
// kBk. Per key block, one GEMM gives the scores, the mask is added, and an online softmax
// (running row max m and sum l, the output rows rescaled by exp(m_old - m_new) when the max
// grows) turns them into weights that a second GEMM accumulates into the output rows. The
// scores never exist beyond one block (the composition materialises B x L x S three times), and
// causal attention skips the keys after a block's last query. Threads take (batch, query
// block) tasks; BLAS runs on the calling thread inside them.
//
// The backward recomputes each query block's probabilities p = exp(s - lse) from the saved
// logsumexp (FlashAttention-2's backward), with D_i = dout_i . out_i:
//   dv += p^T dout,  dp = dout v^T,  ds = p * (dp - D),  dq = scale ds k,  dk += scale ds^T q.
// dk and dv gather contributions from every query block of a batch, so threads take batches.
#include "kernels/attention.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "kernels/gemm.h"
#include "kernels/row_math.h"
#include "kernels/vec_math.h"

namespace oneflow {

namespace {

// Query rows per block: small enough that causal attention skips a useful share of key blocks
// and that there are tasks for every thread, large enough that each GEMM amortises its call.
constexpr int64_t kBq = 64;
// Keys per block in the forward: the kBq x kBk scores (64 KiB in float) stay in L2.
constexpr int64_t kBk = 256;

template <typename T> constexpr T kNegInf = -std::numeric_limits<T>::infinity();

// Adds the mask and the causal cut-off to the scores s[0..n) of query i against keys j0...
template <typename T>
void MaskRow(const AttentionArgs<T>& a, int64_t b, int64_t i, int64_t j0, T* s, int64_t n) {
  if (a.mask != nullptr) {
    const int64_t off = b * a.mb + i * a.mi + j0 * a.mj, mj = a.mj;
    // (mj is 1, or 0 for a mask broadcast over the keys: loops of their own, so that the
    // usual unit stride vectorises)
    if (a.mask_bool) {
      const bool* m = static_cast<const bool*>(a.mask) + off;
      if (mj == 1)
        for (int64_t j = 0; j < n; ++j) s[j] = m[j] ? s[j] : kNegInf<T>;
      else
        for (int64_t j = 0; j < n; ++j) s[j] = m[j * mj] ? s[j] : kNegInf<T>;
    } else {
      const T* m = static_cast<const T*>(a.mask) + off;
      if (mj == 1)
        for (int64_t j = 0; j < n; ++j) s[j] += m[j];
      else
        for (int64_t j = 0; j < n; ++j) s[j] += m[j * mj];
    }
  }
  if (a.causal)
    for (int64_t j = std::max<int64_t>(0, i + 1 - j0); j < n; ++j) s[j] = kNegInf<T>;
}

// Keys a query block [i0, i0 + nq) can attend: all, or up to its last query when causal.
template <typename T>
int64_t KeyEnd(const AttentionArgs<T>& a, int64_t i0, int64_t nq) {
  return a.causal ? std::min(a.S, i0 + nq) : a.S;
}

template <typename T>
void ForwardBlock(const AttentionArgs<T>& a, int64_t b, int64_t i0, int64_t nq, T* s, T* m, T* l, T* out,
                  T* lse) {
  const T* q = a.q + b * a.qb + i0 * a.qr;
  T* o = out + (b * a.L + i0) * a.Ev;
  const int64_t kend = KeyEnd(a, i0, nq);
  std::fill(m, m + nq, kNegInf<T>);
  std::fill(l, l + nq, T(0));
  std::fill(o, o + nq * a.Ev, T(0));
  for (int64_t j0 = 0; j0 < kend; j0 += kBk) {
    const int64_t nk = std::min(kBk, kend - j0);
    BlasGemm<T>(false, true, nq, nk, a.E, a.scale, q, a.qr, a.k + b * a.kb + j0 * a.kr, a.kr, T(0), s, nk);
    for (int64_t r = 0; r < nq; ++r) {
      T* sr = s + r * nk;
      MaskRow(a, b, i0 + r, j0, sr, nk);
      const T mnew = std::max(m[r], RowMax(sr, nk));
      if (mnew == kNegInf<T>) {  // no key attended so far: zero weights (Note [Fully masked rows])
        std::fill(sr, sr + nk, T(0));
        continue;
      }
      // scores - max <= 0 (NaN where a score is NaN or the max is +inf: NaN rows, as softmax)
      for (int64_t j = 0; j < nk; ++j) sr[j] = VecExpNonPositive<T>(sr[j] - mnew);
      const T alpha = m[r] == kNegInf<T> ? T(0) : std::exp(m[r] - mnew);
      l[r] = l[r] * alpha + RowSum(sr, nk);
      if (alpha != T(1)) {
        T* orow = o + r * a.Ev;
        for (int64_t c = 0; c < a.Ev; ++c) orow[c] *= alpha;
      }
      m[r] = mnew;
    }
    BlasGemm<T>(false, false, nq, a.Ev, nk, T(1), s, nk, a.v + b * a.vb + j0 * a.vr, a.vr, T(1), o, a.Ev);
  }
  for (int64_t r = 0; r < nq; ++r) {
    T* orow = o + r * a.Ev;
    if (l[r] == T(0)) {  // every key masked (or none): output 0, lse -inf
      lse[b * a.L + i0 + r] = kNegInf<T>;
      continue;
    }
    const T inv = T(1) / l[r];
    for (int64_t c = 0; c < a.Ev; ++c) orow[c] *= inv;
    lse[b * a.L + i0 + r] = m[r] + std::log(l[r]);
  }
}

template <typename T>
void BackwardBatch(const AttentionArgs<T>& a, int64_t b, const T* dout, const T* out, const T* lse, T* dq, T* dk,
                   T* dv, T* dmask, T* p, T* ds) {
  const T* kb = a.k + b * a.kb;
  const T* vb = a.v + b * a.vb;
  T* dkb = dk + b * a.S * a.E;
  T* dvb = dv + b * a.S * a.Ev;
  std::fill(dkb, dkb + a.S * a.E, T(0));
  std::fill(dvb, dvb + a.S * a.Ev, T(0));
  for (int64_t i0 = 0; i0 < a.L; i0 += kBq) {
    const int64_t nq = std::min(kBq, a.L - i0), kend = KeyEnd(a, i0, nq);
    const T* q = a.q + b * a.qb + i0 * a.qr;
    const T* go = dout + (b * a.L + i0) * a.Ev;
    const T* o = out + (b * a.L + i0) * a.Ev;
    T* gq = dq + (b * a.L + i0) * a.E;
    if (dmask != nullptr) std::fill(dmask + (b * a.L + i0) * a.S, dmask + (b * a.L + i0 + nq) * a.S, T(0));
    if (kend == 0) {
      std::fill(gq, gq + nq * a.E, T(0));
      continue;
    }
    BlasGemm<T>(false, true, nq, kend, a.E, a.scale, q, a.qr, kb, a.kr, T(0), p, kend);
    for (int64_t r = 0; r < nq; ++r) {
      T* pr = p + r * kend;
      const T lr = lse[b * a.L + i0 + r];
      if (lr == kNegInf<T>) {  // a fully masked row took no part: its gradients are 0
        std::fill(pr, pr + kend, T(0));
        continue;
      }
      MaskRow(a, b, i0 + r, 0, pr, kend);
      // s - lse <= 0 up to rounding (lse >= the row max), far inside the exp's exact range
      for (int64_t j = 0; j < kend; ++j) pr[j] = VecExpNonPositive<T>(pr[j] - lr);
    }
    BlasGemm<T>(true, false, kend, a.Ev, nq, T(1), p, kend, go, a.Ev, T(1), dvb, a.Ev);
    BlasGemm<T>(false, true, nq, kend, a.Ev, T(1), go, a.Ev, vb, a.vr, T(0), ds, kend);
    for (int64_t r = 0; r < nq; ++r) {
      const T d = RowDot(go + r * a.Ev, o + r * a.Ev, a.Ev);
      const T* pr = p + r * kend;
      T* dr = ds + r * kend;
      for (int64_t j = 0; j < kend; ++j) dr[j] = pr[j] * (dr[j] - d);
      if (dmask != nullptr) std::memcpy(dmask + (b * a.L + i0 + r) * a.S, dr, kend * sizeof(T));
    }
    BlasGemm<T>(false, false, nq, a.E, kend, a.scale, ds, kend, kb, a.kr, T(0), gq, a.E);
    BlasGemm<T>(true, false, kend, a.E, nq, a.scale, ds, kend, q, a.qr, T(1), dkb, a.E);
  }
}

}  // namespace

template <typename T>
void AttentionForward(const AttentionArgs<T>& a, T* out, T* lse) {
  const int64_t nqb = (a.L + kBq - 1) / kBq;
  ParallelFor(0, a.B * nqb, 1, [&](int64_t t0, int64_t t1) {
    std::vector<T> s(kBq * kBk), m(kBq), l(kBq);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / nqb, i0 = (t % nqb) * kBq;
      ForwardBlock(a, b, i0, std::min(kBq, a.L - i0), s.data(), m.data(), l.data(), out, lse);
    }
  });
}

template <typename T>
void AttentionBackward(const AttentionArgs<T>& a, const T* dout, const T* out, const T* lse, T* dq, T* dk, T* dv,
                       T* dmask) {
  ParallelFor(0, a.B, 1, [&](int64_t b0, int64_t b1) {
    std::vector<T> p(kBq * a.S), ds(kBq * a.S);
    for (int64_t b = b0; b < b1; ++b) BackwardBatch(a, b, dout, out, lse, dq, dk, dv, dmask, p.data(), ds.data());
  });
}

template void AttentionForward<float>(const AttentionArgs<float>&, float*, float*);
template void AttentionForward<double>(const AttentionArgs<double>&, double*, double*);
template void AttentionBackward<float>(const AttentionArgs<float>&, const float*, const float*, const float*,
                                       float*, float*, float*, float*);
template void AttentionBackward<double>(const AttentionArgs<double>&, const double*, const double*,
                                        const double*, double*, double*, double*, double*);

}  // namespace oneflow
