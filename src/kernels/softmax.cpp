// CPU kernels of the softmax family (kernels/softmax.h). inner == 1 (the usual last dim): tiles
// of rows, each row max / exp-sum / write in vectorised loops. inner > 1: blocks of the inner
// positions are carried through the n rows together (vectorised across inner). Threads split the
// rows (or the blocks); 16-bit floats compute in float.
#include "kernels/softmax.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "core/parallel.h"
#include "kernels/row_math.h"
#include "kernels/vec_math.h"

namespace oneflow {

namespace {

using Mode = SoftmaxMode;

struct Geom {
  int64_t outer = 1, n = 1, inner = 1;
};

// Rows per thread chunk: about kGrainSize elements, never fewer than one row.
int64_t RowGrain(int64_t n) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n)); }

constexpr int64_t kBlock = 512;  // inner positions carried together (stack arrays below)

// Contiguous rows in the compute type M, in two halves. ExpRow: the max, exp(x - max) written to
// w, and their sum; FinishRow: a scale (softmax) or a shift (log_softmax); each pass a
// vectorised loop over the row, which stays in L1 between them. Between the halves, the rows of
// a tile turn their sums into 1/sum or log(sum) in one vectorised loop: per row, that division
// or log is a latency chain as long as all the work on a 16-float row. w must not alias x
// (log_softmax reads x after w is written); for float it is the output row itself, 16-bit rows
// are converted into float buffers first. x - max <= 0 (or NaN), hence the cheaper exp; a row
// whose max is +-inf gets NaN there and so is NaN throughout, as in PyTorch. (__restrict:
// without it GCC guards every loop with an overlap test and a scalar fallback, which costs as
// much as the work on 16-float rows.)
template <Mode kMode, typename M>
M ExpRow(const M* __restrict x, M* __restrict w, int64_t n, M* max) {
  constexpr int kSign = kMode == Mode::kSoftmin ? -1 : 1;
  const M m = RowMax<kSign>(x, n);
  for (int64_t i = 0; i < n; ++i) w[i] = VecExpNonPositive<M>(kSign * x[i] - m);
  *max = m;
  return RowSum(w, n);
}

// sums[0..k) -> 1 / sum, or log(sum) for log_softmax: (x - max) - log(sum), not
// x - (max + log(sum)), so that a large max + log is not rounded. A sum is in [1, n] (the max
// contributes exp(0)) or NaN, so the inline float log applies.
template <Mode kMode, typename M>
void SumsToFactors(M* sums, int64_t k) {
  if constexpr (kMode != Mode::kLogSoftmax) {
    for (int64_t t = 0; t < k; ++t) sums[t] = M(1) / sums[t];
  } else if constexpr (std::is_same_v<M, float>) {
    for (int64_t t = 0; t < k; ++t) sums[t] = sums[t] == sums[t] ? LogPositiveFloat(sums[t]) : sums[t];
  } else {
    for (int64_t t = 0; t < k; ++t) sums[t] = std::log(sums[t]);
  }
}

template <Mode kMode, typename M>
void FinishRow(const M* __restrict x, M* __restrict w, int64_t n, M m, M f) {
  if constexpr (kMode == Mode::kLogSoftmax) {
    for (int64_t i = 0; i < n; ++i) w[i] = (x[i] - m) - f;
  } else {
    for (int64_t i = 0; i < n; ++i) w[i] *= f;
  }
}

constexpr int64_t kTileRows = 64;

template <typename T, Mode kMode>
void ForwardRows(const T* in, T* out, int64_t rows, int64_t n) {
  using M = OpMath<T>;
  ParallelFor(0, rows, RowGrain(n), [&](int64_t b, int64_t e) {
    M mx[kTileRows], f[kTileRows];
    if constexpr (std::is_same_v<T, M>) {
      for (int64_t r0 = b; r0 < e; r0 += kTileRows) {
        const int64_t k = std::min(kTileRows, e - r0);
        for (int64_t t = 0; t < k; ++t) f[t] = ExpRow<kMode>(in + (r0 + t) * n, out + (r0 + t) * n, n, mx + t);
        SumsToFactors<kMode>(f, k);
        for (int64_t t = 0; t < k; ++t) FinishRow<kMode>(in + (r0 + t) * n, out + (r0 + t) * n, n, mx[t], f[t]);
      }
    } else {  // 16-bit storage: each row in float buffers (input, result)
      std::vector<M> buf(2 * n);
      M *xb = buf.data(), *wb = xb + n;
      for (int64_t r = b; r < e; ++r) {
        for (int64_t i = 0; i < n; ++i) xb[i] = static_cast<M>(in[r * n + i]);
        f[0] = ExpRow<kMode>(xb, wb, n, mx);
        SumsToFactors<kMode>(f, 1);
        FinishRow<kMode>(xb, wb, n, mx[0], f[0]);
        for (int64_t i = 0; i < n; ++i) out[r * n + i] = static_cast<T>(wb[i]);
      }
    }
  });
}

template <typename T, Mode kMode>
void ForwardCols(const T* in, T* out, const Geom& g) {
  using M = OpMath<T>;
  constexpr int kSign = kMode == Mode::kSoftmin ? -1 : 1;  // a constant, not a captured variable
  const int64_t nblk = (g.inner + kBlock - 1) / kBlock;
  ParallelFor(0, g.outer * nblk, RowGrain(g.n * std::min(g.inner, kBlock)), [&](int64_t b, int64_t e) {
    M mx[kBlock], sm[kBlock];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nblk, j0 = (t % nblk) * kBlock, len = std::min(kBlock, g.inner - j0);
      const T* x = in + o * g.n * g.inner + j0;
      T* y = out + o * g.n * g.inner + j0;
      for (int64_t j = 0; j < len; ++j) mx[j] = -std::numeric_limits<M>::infinity(), sm[j] = 0;
      for (int64_t k = 0; k < g.n; ++k) {
        const T* row = x + k * g.inner;
        for (int64_t j = 0; j < len; ++j) mx[j] = std::max(mx[j], kSign * static_cast<M>(row[j]));
      }
      for (int64_t k = 0; k < g.n; ++k) {
        const T* row = x + k * g.inner;
        for (int64_t j = 0; j < len; ++j) sm[j] += VecExpNonPositive<M>(kSign * static_cast<M>(row[j]) - mx[j]);
      }
      if constexpr (kMode == Mode::kLogSoftmax) {
        for (int64_t j = 0; j < len; ++j) sm[j] = std::log(sm[j]);
        for (int64_t k = 0; k < g.n; ++k) {
          const T* row = x + k * g.inner;
          T* dst = y + k * g.inner;
          for (int64_t j = 0; j < len; ++j) dst[j] = static_cast<T>((static_cast<M>(row[j]) - mx[j]) - sm[j]);
        }
      } else {
        for (int64_t j = 0; j < len; ++j) sm[j] = M(1) / sm[j];
        for (int64_t k = 0; k < g.n; ++k) {
          const T* row = x + k * g.inner;
          T* dst = y + k * g.inner;
          for (int64_t j = 0; j < len; ++j)
            dst[j] = static_cast<T>(VecExpNonPositive<M>(kSign * static_cast<M>(row[j]) - mx[j]) * sm[j]);
        }
      }
    }
  });
}

void ForwardCpu(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, int mode_index) {
  const Geom g{outer, n, inner};
  const Mode mode = static_cast<Mode>(mode_index);
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    auto run = [&](auto mode_tag) {
      constexpr Mode kM = decltype(mode_tag)::value;
      if (g.inner == 1) ForwardRows<T, kM>(x.data<T>(), out.data<T>(), g.outer, g.n);
      else ForwardCols<T, kM>(x.data<T>(), out.data<T>(), g);
    };
    if (mode == Mode::kSoftmax) run(std::integral_constant<Mode, Mode::kSoftmax>{});
    else if (mode == Mode::kLogSoftmax) run(std::integral_constant<Mode, Mode::kLogSoftmax>{});
    else run(std::integral_constant<Mode, Mode::kSoftmin>{});
  });
}

// ---- backward ----
// softmax:     dx = y * (g - sum(g * y))
// log_softmax: dx = g - exp(y) * sum(g)
template <typename T, bool kLog>
void BackwardRows(const T* g, const T* yv, T* out, int64_t rows, int64_t n) {
  using M = OpMath<T>;
  ParallelFor(0, rows, RowGrain(n), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* gr = g + r * n;
      const T* y = yv + r * n;
      T* dst = out + r * n;
      if constexpr (std::is_same_v<T, M>) {
        if constexpr (kLog) {
          const M s = RowSum(gr, n);
          for (int64_t i = 0; i < n; ++i) dst[i] = gr[i] - VecExp<M>(y[i]) * s;
        } else {
          const M s = RowDot(gr, y, n);
          for (int64_t i = 0; i < n; ++i) dst[i] = y[i] * (gr[i] - s);
        }
      } else {
        M s = 0;
        for (int64_t i = 0; i < n; ++i)
          s += kLog ? static_cast<M>(gr[i]) : static_cast<M>(gr[i]) * static_cast<M>(y[i]);
        for (int64_t i = 0; i < n; ++i) {
          const M gv = static_cast<M>(gr[i]), yv = static_cast<M>(y[i]);
          dst[i] = static_cast<T>(kLog ? gv - VecExp<M>(yv) * s : yv * (gv - s));
        }
      }
    }
  });
}

template <typename T, bool kLog>
void BackwardCols(const T* g, const T* yv, T* out, const Geom& geo) {
  using M = OpMath<T>;
  const int64_t nblk = (geo.inner + kBlock - 1) / kBlock;
  ParallelFor(0, geo.outer * nblk, RowGrain(geo.n * std::min(geo.inner, kBlock)), [&](int64_t b, int64_t e) {
    M acc[kBlock];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nblk, j0 = (t % nblk) * kBlock, len = std::min(kBlock, geo.inner - j0);
      const int64_t base = o * geo.n * geo.inner + j0;
      for (int64_t j = 0; j < len; ++j) acc[j] = 0;
      for (int64_t k = 0; k < geo.n; ++k) {
        const T* gr = g + base + k * geo.inner;
        const T* y = yv + base + k * geo.inner;
        for (int64_t j = 0; j < len; ++j)
          acc[j] += kLog ? static_cast<M>(gr[j]) : static_cast<M>(gr[j]) * static_cast<M>(y[j]);
      }
      for (int64_t k = 0; k < geo.n; ++k) {
        const T* gr = g + base + k * geo.inner;
        const T* y = yv + base + k * geo.inner;
        T* dst = out + base + k * geo.inner;
        for (int64_t j = 0; j < len; ++j) {
          const M gv = static_cast<M>(gr[j]), yvv = static_cast<M>(y[j]);
          dst[j] = static_cast<T>(kLog ? gv - VecExp<M>(yvv) * acc[j] : yvv * (gv - acc[j]));
        }
      }
    }
  });
}

void BackwardCpu(const Tensor& g, const Tensor& y, const Tensor& out, int64_t outer, int64_t n, int64_t inner,
                 bool log) {
  const Geom geo{outer, n, inner};
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    auto run = [&](auto log_tag) {
      constexpr bool kLog = decltype(log_tag)::value;
      if (geo.inner == 1) BackwardRows<T, kLog>(g.data<T>(), y.data<T>(), out.data<T>(), geo.outer, geo.n);
      else BackwardCols<T, kLog>(g.data<T>(), y.data<T>(), out.data<T>(), geo);
    };
    if (log) run(std::true_type{});
    else run(std::false_type{});
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::SoftmaxForwardKernel>(DeviceType::kCPU, &ForwardCpu);
  kernels::RegisterKernel<kernels::SoftmaxBackwardKernel>(DeviceType::kCPU, &BackwardCpu);
  return true;
}();

}  // namespace

void SoftmaxRows(const Tensor& x, const Tensor& out, int64_t outer, int64_t n, int64_t inner, SoftmaxMode mode) {
  kernels::CallKernel<kernels::SoftmaxForwardKernel>(out.device(), x, out, outer, n, inner, static_cast<int>(mode));
}

void SoftmaxRowsBackward(const Tensor& g, const Tensor& y, const Tensor& out, int64_t outer, int64_t n, int64_t inner,
                         bool log) {
  kernels::CallKernel<kernels::SoftmaxBackwardKernel>(out.device(), g, y, out, outer, n, inner, log);
}

}  // namespace oneflow
