// The per-element bodies of the fused optimizer updates (src/ops/optim_ops.cpp,
// src/ops/optim_adaptive_ops.cpp), written once for the CPU loop and the CUDA kernel
// (src/cuda/optim.cu): each is a functor Step<T, kFlags> whose members are the per-parameter
// constants (in OpMath<T>, computed on the host) and whose operator()(q, j) updates element j of
// the lists q. The option flags are bits of kFlags, so each combination is its own branch-free
// loop (the CPU loop vectorises) and the CUDA build can instantiate every combination.
// The arithmetic is Note [Optimizer update arithmetic] (ops/optim_util.h).
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/dtype.h"
#include "core/hd.h"

namespace oneflow::optim {

constexpr int kMaxLists = 6;

// The contiguous data of one parameter in each list (nullptr for an unused optional list).
template <typename T>
struct UpdatePtrs {
  T* p[kMaxLists];
};

// Up to kBatchTensors parameters updated by one CUDA launch: each one's lists and element count,
// and the first block of each (block b works on elements [(b - first[t]) * kBatchChunk, ...) of
// the parameter t with first[t] <= b < first[t + 1]). It travels as a kernel argument (under
// 2 KiB: the 4 KiB limit holds with the functor beside it).
constexpr int kBatchTensors = 32;
constexpr int64_t kBatchChunk = 4096;
template <typename T>
struct UpdateBatch {
  UpdatePtrs<T> q[kBatchTensors];
  int64_t n[kBatchTensors];
  unsigned first[kBatchTensors + 1];
  int count;
};

// Note [CUDA optimizer updates]: the CUDA build fills CudaUpdateSlot<F>'s entries for every step
// functor, dtype and flag combination (src/cuda/optim.cu) when the module loads; RunUpdate
// (ops/optim_util.h) calls them for CUDA parameters: run_batch for the parameters that share one
// functor (the same constants) and device, up to kBatchTensors a launch, as torch's foreach
// updates do (one launch a parameter made a ResNet-18 SGD step launch-bound: 0.85x torch on an
// H100); run for a parameter too large for a batch's block numbering. Empty slots (a build
// without CUDA) make RunUpdate fall back to host copies.
template <typename F>
struct CudaUpdateSlot {
  using T = typename F::Elem;
  static inline void (*run)(const F& f, const UpdatePtrs<T>& q, int64_t n, int device) = nullptr;
  static inline void (*run_batch)(const F& f, const UpdateBatch<T>& b, int device) = nullptr;
};

// torch.lerp with a scalar weight, in the branch torch takes for it (kLow: weight < 0.5), for
// the same rounding.
template <bool kLow, typename M>
OF_INLINE_HD M Lerp(M start, M end, M weight) {
  if constexpr (kLow) return start + weight * (end - start);
  else return end - (end - start) * (M(1) - weight);
}

// torch.maximum: NaN wins.
template <typename M>
OF_INLINE_HD M MaxNan(M a, M b) {
  // `|`, not `||`: no short circuit, so the select vectorises.
  return ((a != a) | (a > b)) ? a : b;
}

// The gradient every update starts from: negated under maximize (sign), plus the L2 decay
// wd * p when kL2.
template <bool kL2, typename T, typename M>
OF_INLINE_HD M DecayedGrad(const T* g, const T* p, int64_t j, M sign, M wd) {
  M gj = sign * M(g[j]);
  if constexpr (kL2) gj = gj + wd * M(p[j]);
  return gj;
}

// Common head of every step functor: the element type, its math type and the flag bits.
#define OF_OPTIM_STEP_HEAD(kNumFlagBits)    \
  using Elem = T;                           \
  using M = OpMath<T>;                      \
  static constexpr int kNumFlags = kNumFlagBits

// Lists: p, g, momentum_buffer. Flags: 1 momentum buffer, 2 L2 decay, 4 Nesterov.
template <typename T, unsigned kF>
struct SgdStep {
  OF_OPTIM_STEP_HEAD(3);
  M sign, wd, mom, damp1, neg_lr;
  OF_HD void operator()(const UpdatePtrs<T>& q, int64_t j) const {
    T *p = q.p[0], *g = q.p[1], *buf = q.p[2];
    M gj = DecayedGrad<(kF & 2) != 0>(g, p, j, sign, wd);
    if constexpr ((kF & 1) != 0) {
      const M bj = M(buf[j]) * mom + damp1 * gj;
      buf[j] = bj;
      gj = (kF & 4) != 0 ? gj + mom * bj : bj;
    }
    p[j] = M(p[j]) + neg_lr * gj;
  }
};

// Lists: p, g, exp_avg, exp_avg_sq, max_exp_avg_sq. Flags: 1 L2 decay, 2 AMSGrad, 4 lerp low.
template <typename T, unsigned kF>
struct AdamStep {
  OF_OPTIM_STEP_HEAD(3);
  M sign, decay, wd, w1, b2, w2, bc2_sqrt, eps, neg_step_size;
  OF_HD void operator()(const UpdatePtrs<T>& q, int64_t j) const {
    T *p = q.p[0], *g = q.p[1], *m = q.p[2], *v = q.p[3], *vmax = q.p[4];
    const M pj = M(p[j]) * decay;
    M gj = DecayedGrad<(kF & 1) != 0>(g, p, j, sign, wd);
    const M mj = Lerp<(kF & 4) != 0>(M(m[j]), gj, w1);
    const M vj = M(v[j]) * b2 + w2 * gj * gj;
    m[j] = mj;
    v[j] = vj;
    M s = vj;
    if constexpr ((kF & 2) != 0) {
      s = MaxNan(M(vmax[j]), vj);
      vmax[j] = s;
    }
    const M denom = std::sqrt(s) / bc2_sqrt + eps;
    p[j] = pj + neg_step_size * mj / denom;
  }
};

// Lists: p, g, exp_avg, exp_inf. Flags: 1 L2 decay, 2 lerp low.
template <typename T, unsigned kF>
struct AdamaxStep {
  OF_OPTIM_STEP_HEAD(2);
  M sign, wd, w1, b2, eps, neg_clr;
  OF_HD void operator()(const UpdatePtrs<T>& q, int64_t j) const {
    T *p = q.p[0], *g = q.p[1], *m = q.p[2], *u = q.p[3];
    M gj = DecayedGrad<(kF & 1) != 0>(g, p, j, sign, wd);
    const M mj = Lerp<(kF & 2) != 0>(M(m[j]), gj, w1);
    const M uj = MaxNan(M(u[j]) * b2, std::abs(gj) + eps);
    m[j] = mj;
    u[j] = uj;
    p[j] = M(p[j]) + neg_clr * mj / uj;
  }
};

// Lists: p, g, square_avg, grad_avg, momentum_buffer. Flags: 1 L2 decay, 2 centered,
// 4 momentum, 8 lerp low.
template <typename T, unsigned kF>
struct RmspropStep {
  OF_OPTIM_STEP_HEAD(4);
  M sign, wd, a, w, eps, mom, neg_lr;
  OF_HD void operator()(const UpdatePtrs<T>& q, int64_t j) const {
    T *p = q.p[0], *g = q.p[1], *sq = q.p[2], *ga = q.p[3], *buf = q.p[4];
    M gj = DecayedGrad<(kF & 1) != 0>(g, p, j, sign, wd);
    const M sj = M(sq[j]) * a + w * gj * gj;
    sq[j] = sj;
    M avg;
    if constexpr ((kF & 2) != 0) {
      const M gaj = Lerp<(kF & 8) != 0>(M(ga[j]), gj, w);
      ga[j] = gaj;
      avg = std::sqrt(sj + M(-1) * gaj * gaj);
    } else {
      avg = std::sqrt(sj);
    }
    avg = avg + eps;
    if constexpr ((kF & 4) != 0) {
      const M bj = M(buf[j]) * mom + M(1) * gj / avg;
      buf[j] = bj;
      p[j] = M(p[j]) + neg_lr * bj;
    } else {
      p[j] = M(p[j]) + neg_lr * gj / avg;
    }
  }
};

// Lists: p, g, state_sum. Flags: 1 L2 decay.
template <typename T, unsigned kF>
struct AdagradStep {
  OF_OPTIM_STEP_HEAD(1);
  M sign, wd, eps, neg_clr;
  OF_HD void operator()(const UpdatePtrs<T>& q, int64_t j) const {
    T *p = q.p[0], *g = q.p[1], *sum = q.p[2];
    M gj = DecayedGrad<(kF & 1) != 0>(g, p, j, sign, wd);
    const M sj = M(sum[j]) + M(1) * gj * gj;
    sum[j] = sj;
    p[j] = M(p[j]) + neg_clr * gj / (std::sqrt(sj) + eps);
  }
};

// Lists: p, g, square_avg, acc_delta. Flags: 1 L2 decay.
template <typename T, unsigned kF>
struct AdadeltaStep {
  OF_OPTIM_STEP_HEAD(1);
  M sign, wd, r, w, eps, neg_lr;
  OF_HD void operator()(const UpdatePtrs<T>& q, int64_t j) const {
    T *p = q.p[0], *g = q.p[1], *sq = q.p[2], *acc = q.p[3];
    M gj = DecayedGrad<(kF & 1) != 0>(g, p, j, sign, wd);
    const M sj = M(sq[j]) * r + w * gj * gj;
    sq[j] = sj;
    const M std_j = std::sqrt(sj + eps);
    const M delta = std::sqrt(M(acc[j]) + eps) / std_j * gj;
    acc[j] = M(acc[j]) * r + w * delta * delta;
    p[j] = M(p[j]) + neg_lr * delta;
  }
};

// Lists: p, g, exp_avg, exp_avg_sq. Flags: 1 L2 decay, 2 lerp low.
template <typename T, unsigned kF>
struct NadamStep {
  OF_OPTIM_STEP_HEAD(2);
  M sign, decay, wd, w1, b2, w2, bc2, eps, c_grad, c_avg;
  OF_HD void operator()(const UpdatePtrs<T>& q, int64_t j) const {
    T *p = q.p[0], *g = q.p[1], *m = q.p[2], *v = q.p[3];
    M pj = M(p[j]) * decay;
    M gj = DecayedGrad<(kF & 1) != 0>(g, p, j, sign, wd);
    const M mj = Lerp<(kF & 2) != 0>(M(m[j]), gj, w1);
    const M vj = M(v[j]) * b2 + w2 * gj * gj;
    m[j] = mj;
    v[j] = vj;
    const M denom = std::sqrt(vj / bc2) + eps;
    pj = pj + c_grad * gj / denom;
    p[j] = pj + c_avg * mj / denom;
  }
};

// Lists: p, g, exp_avg, exp_avg_sq. Flags: 1 L2 decay, 2 lerp low, 4 rectified (the variance is
// tractable: the adaptive step; else plain momentum; the same for the whole tensor).
template <typename T, unsigned kF>
struct RadamStep {
  OF_OPTIM_STEP_HEAD(3);
  M sign, decay, wd, w1, b2, w2, bc1, bc2_sqrt, eps, lr, rect;
  OF_HD void operator()(const UpdatePtrs<T>& q, int64_t j) const {
    T *p = q.p[0], *g = q.p[1], *m = q.p[2], *v = q.p[3];
    const M pj = M(p[j]) * decay;
    M gj = DecayedGrad<(kF & 1) != 0>(g, p, j, sign, wd);
    const M mj = Lerp<(kF & 2) != 0>(M(m[j]), gj, w1);
    const M vj = M(v[j]) * b2 + w2 * gj * gj;
    m[j] = mj;
    v[j] = vj;
    const M corrected = mj / bc1;
    if constexpr ((kF & 4) != 0) {
      const M adaptive = bc2_sqrt / (std::sqrt(vj) + eps);
      p[j] = pj - corrected * lr * adaptive * rect;
    } else {
      p[j] = pj - corrected * lr;
    }
  }
};

// LAMB's first pass (ops/optim_ops.cpp, CUDA parameters; the CPU fuses the norms into its own
// loop). Lists: p (read), g, exp_avg, exp_avg_sq, direction (written). No flags.
template <typename T, unsigned kF>
struct LambDirectionStep {
  OF_OPTIM_STEP_HEAD(0);
  M l2, b1, w1, b2, w2, bc1, bc2_sqrt, eps;
  OF_HD void operator()(const UpdatePtrs<T>& q, int64_t j) const {
    T *p = q.p[0], *g = q.p[1], *m = q.p[2], *v = q.p[3], *d = q.p[4];
    const M gj = M(g[j]) + l2 * M(p[j]);
    const M mj = b1 * M(m[j]) + w1 * gj;
    const M vj = b2 * M(v[j]) + w2 * gj * gj;
    m[j] = mj;
    v[j] = vj;
    d[j] = (mj / bc1) / (std::sqrt(vj) / bc2_sqrt + eps);
  }
};

#undef OF_OPTIM_STEP_HEAD

}  // namespace oneflow::optim
