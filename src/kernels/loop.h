// The pointwise engine (docs/architecture.md §4): every elementwise kernel runs through LoopPlan + RunLoop.
// A plan holds up to kMaxOperands operands (operand 0 is the output) already broadcast to one
// shape, with byte strides (0 on broadcast dims). Dims that are contiguous for every operand are
// merged, so a contiguous op becomes one flat inner loop that the compiler vectorises; large
// ranges are split over threads along the flattened index.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/parallel.h"
#include "core/tensor.h"

namespace oneflow {

constexpr int kMaxOperands = 4;

struct LoopPlan {
  int ndim = 0, nops = 0;
  int64_t numel = 1;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxOperands][kMaxDims];  // bytes
  char* base[kMaxOperands];
};

// `shape` is the iteration shape; each operand must broadcast to it. The base pointers come from
// raw_data(), which refuses CUDA tensors (Note [Host access of device tensors]): a host kernel
// never walks device memory. The bodies that dispatch by device (the pointwise bodies, copies)
// pass any_device = true and hand CUDA plans to the CUDA engine.
LoopPlan MakePlan(const DimVector& shape, const Tensor* const* ops, int nops, bool any_device = false);

// inner(char** ptrs, const int64_t* strides, int64_t n): one run of n elements along the inner
// dim; strides[k] is operand k's byte stride along it.
template <typename Inner>
void RunLoop(const LoopPlan& p, const Inner& inner, int64_t grain = kGrainSize) {
  if (p.numel == 0) return;
  const int nd = p.ndim, nops = p.nops;
  if (nd == 0) {
    char* ptrs[kMaxOperands];
    int64_t st[kMaxOperands] = {0};
    for (int k = 0; k < nops; ++k) ptrs[k] = p.base[k];
    inner(ptrs, st, 1);
    return;
  }
  const int64_t inner_size = p.sizes[nd - 1];
  int64_t inner_strides[kMaxOperands];
  for (int k = 0; k < nops; ++k) inner_strides[k] = p.strides[k][nd - 1];
  ParallelFor(0, p.numel, grain, [&](int64_t begin, int64_t end) {
    // Decompose `begin` into a multi-index, then walk rows.
    int64_t idx[kMaxDims];
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = rem % p.sizes[d];
      rem /= p.sizes[d];
    }
    char* ptrs[kMaxOperands];
    for (int k = 0; k < nops; ++k) {
      char* q = p.base[k];
      for (int d = 0; d < nd; ++d) q += idx[d] * p.strides[k][d];
      ptrs[k] = q;
    }
    int64_t pos = begin;
    while (pos < end) {
      int64_t n = inner_size - idx[nd - 1];
      if (n > end - pos) n = end - pos;
      inner(ptrs, inner_strides, n);
      pos += n;
      if (pos >= end) break;
      // Advance to the start of the next row: carry through outer dims.
      for (int k = 0; k < nops; ++k) ptrs[k] += (n - 0) * inner_strides[k];
      idx[nd - 1] += n;
      for (int d = nd - 1; d > 0 && idx[d] == p.sizes[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
        for (int k = 0; k < nops; ++k)
          ptrs[k] += p.strides[k][d - 1] - p.sizes[d] * p.strides[k][d];
      }
    }
  });
}

// Typed inner loops. f maps OpMath values; the contiguous cases are plain indexed loops so that
// they vectorise. Each loop works on a local copy of the functor: its attributes (leaky_relu's
// slope) are then provably not aliased by the output stores, so they stay in registers instead
// of being reloaded per element (which blocks vectorisation). `flatten` inlines the functor and
// its helpers into the loop whatever GCC's per-file inlining budget says: a translation unit
// instantiating many functors exhausts it, and one out-of-line call de-vectorises the loop.
#define OF_LOOP_FLATTEN __attribute__((flatten))
template <typename R, typename A, typename F>
OF_LOOP_FLATTEN inline void UnaryInner(char** p, const int64_t* s, int64_t n, const F& f) {
  const F fn = f;
  using M = OpMath<A>;
  R* o = reinterpret_cast<R*>(p[0]);
  const A* a = reinterpret_cast<const A*>(p[1]);
  if (s[0] == sizeof(R) && s[1] == sizeof(A)) {
    if constexpr (std::is_same_v<R, A> && requires { fn.Block(a, o, n); }) {
      fn.Block(a, o, n);  // a vectorised library kernel (Note [SLEEF blocks])
      return;
    }
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(fn(static_cast<M>(a[i])));
  } else {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<R*>(p[0] + i * s[0]) =
          static_cast<R>(fn(static_cast<M>(*reinterpret_cast<const A*>(p[1] + i * s[1]))));
  }
}

// Runs block(bufs..., out, m) over n elements of K operands in any layout, so that a block
// kernel gives the same values whatever the strides (Note [SLEEF blocks]). Layouts other than
// all-contiguous go in chunks: contiguous operands are read in place, a number operand (stride 0)
// fills its buffer once, strided ones are gathered into stack buffers; the result is written in
// place when contiguous, else scattered from a buffer. (Gathering every operand and the result
// cost as much as SLEEF's fmod itself for `fmod(x, 0.7)`.)
template <int K, typename T, typename Block>
inline void BlockAnyLayout(char** p, const int64_t* s, int64_t n, const Block& block) {
  bool flat = s[0] == sizeof(T);
  for (int k = 1; k <= K; ++k) flat &= s[k] == sizeof(T);
  const T* in[K];
  for (int k = 0; k < K; ++k) in[k] = reinterpret_cast<const T*>(p[k + 1]);
  if (flat) return block(in, reinterpret_cast<T*>(p[0]), n);
  constexpr int64_t kBuf = 256;
  T buf[K + 1][kBuf];
  for (int k = 0; k < K; ++k)
    if (s[k + 1] == 0) std::fill(buf[k], buf[k] + std::min(kBuf, n), *in[k]);
  const bool out_flat = s[0] == sizeof(T);
  for (int64_t i0 = 0; i0 < n; i0 += kBuf) {
    const int64_t m = std::min(kBuf, n - i0);
    const T* part[K];
    for (int k = 0; k < K; ++k) {
      const int64_t st = s[k + 1];
      if (st == sizeof(T)) {
        part[k] = in[k] + i0;
      } else {
        if (st != 0)
          for (int64_t i = 0; i < m; ++i) buf[k][i] = *reinterpret_cast<const T*>(p[k + 1] + (i0 + i) * st);
        part[k] = buf[k];
      }
    }
    T* out = out_flat ? reinterpret_cast<T*>(p[0]) + i0 : buf[K];
    block(part, out, m);
    if (!out_flat)
      for (int64_t i = 0; i < m; ++i) *reinterpret_cast<T*>(p[0] + (i0 + i) * s[0]) = buf[K][i];
  }
}

template <typename R, typename A, typename F>
OF_LOOP_FLATTEN inline void BinaryInner(char** p, const int64_t* s, int64_t n, const F& f) {
  const F fn = f;
  using M = OpMath<A>;
  R* o = reinterpret_cast<R*>(p[0]);
  const A* a = reinterpret_cast<const A*>(p[1]);
  const A* b = reinterpret_cast<const A*>(p[2]);
  if constexpr (std::is_floating_point_v<A> && std::is_same_v<R, A> && std::is_same_v<M, A> &&
                requires(A e) { fn.BlockScalarB(a, e, o, n); }) {
    if (s[2] == 0) {
      // A number second operand (pow's exponent): the functor's block form, on contiguous runs
      // (strided ones through a small buffer), so every layout gives the same results.
      if (s[0] == sizeof(R) && s[1] == sizeof(A)) return fn.BlockScalarB(a, *b, o, n);
      constexpr int64_t kBuf = 256;
      A buf[kBuf];
      for (int64_t i0 = 0; i0 < n; i0 += kBuf) {
        const int64_t m = std::min(kBuf, n - i0);
        for (int64_t i = 0; i < m; ++i) buf[i] = *reinterpret_cast<const A*>(p[1] + (i0 + i) * s[1]);
        fn.BlockScalarB(buf, *b, buf, m);
        for (int64_t i = 0; i < m; ++i) *reinterpret_cast<R*>(p[0] + (i0 + i) * s[0]) = buf[i];
      }
      return;
    }
  }
  if constexpr (std::is_floating_point_v<A> && std::is_same_v<R, A> && std::is_same_v<M, A> &&
                requires { fn.Block2(a, b, o, n); }) {
    return BlockAnyLayout<2, A>(p, s, n, [&](const A* const* in, A* out, int64_t m) { fn.Block2(in[0], in[1], out, m); });
  }
  if (s[0] == sizeof(R) && s[1] == sizeof(A) && s[2] == sizeof(A)) {
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(fn(static_cast<M>(a[i]), static_cast<M>(b[i])));
  } else if (s[0] == sizeof(R) && s[1] == sizeof(A) && s[2] == 0) {
    const M bv = static_cast<M>(*b);
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(fn(static_cast<M>(a[i]), bv));
  } else if (s[0] == sizeof(R) && s[1] == 0 && s[2] == sizeof(A)) {
    const M av = static_cast<M>(*a);
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(fn(av, static_cast<M>(b[i])));
  } else {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<R*>(p[0] + i * s[0]) =
          static_cast<R>(fn(static_cast<M>(*reinterpret_cast<const A*>(p[1] + i * s[1])),
                           static_cast<M>(*reinterpret_cast<const A*>(p[2] + i * s[2]))));
  }
}

template <typename R, typename A, typename F>
OF_LOOP_FLATTEN inline void TernaryInner(char** p, const int64_t* s, int64_t n, const F& f) {
  const F fn = f;
  using M = OpMath<A>;
  R* o = reinterpret_cast<R*>(p[0]);
  const A* a = reinterpret_cast<const A*>(p[1]);
  const A* b = reinterpret_cast<const A*>(p[2]);
  const A* c = reinterpret_cast<const A*>(p[3]);
  if constexpr (std::is_floating_point_v<A> && std::is_same_v<R, A> && std::is_same_v<M, A> &&
                requires { fn.Block3(a, b, c, o, n); }) {
    return BlockAnyLayout<3, A>(p, s, n, [&](const A* const* in, A* out, int64_t m) {
      fn.Block3(in[0], in[1], in[2], out, m);
    });
  }
  const bool flat = s[0] == sizeof(R) && s[1] == sizeof(A);
  if (flat && s[2] == sizeof(A) && s[3] == sizeof(A)) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = static_cast<R>(fn(static_cast<M>(a[i]), static_cast<M>(b[i]), static_cast<M>(c[i])));
  } else if (flat && s[2] == sizeof(A) && s[3] == 0) {
    // A number third operand (lerp's weight, clamp's bound): hoisted, so the loop vectorises.
    const M cv = static_cast<M>(*c);
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(fn(static_cast<M>(a[i]), static_cast<M>(b[i]), cv));
  } else if (flat && s[2] == 0 && s[3] == sizeof(A)) {
    const M bv = static_cast<M>(*b);
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(fn(static_cast<M>(a[i]), bv, static_cast<M>(c[i])));
  } else if (flat && s[2] == 0 && s[3] == 0) {
    const M bv = static_cast<M>(*b), cv = static_cast<M>(*c);
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(fn(static_cast<M>(a[i]), bv, cv));
  } else {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<R*>(p[0] + i * s[0]) =
          static_cast<R>(fn(static_cast<M>(*reinterpret_cast<const A*>(p[1] + i * s[1])),
                           static_cast<M>(*reinterpret_cast<const A*>(p[2] + i * s[2])),
                           static_cast<M>(*reinterpret_cast<const A*>(p[3] + i * s[3]))));
  }
}

}  // namespace oneflow
