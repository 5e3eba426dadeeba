#include "kernels/pool.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "core/parallel.h"

namespace oneflow {

namespace {

template <typename F>
void ForPlanes(const PoolGeom& g, int64_t work_per_plane, const F& f) {
  ParallelFor(0, g.planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, work_per_plane)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) f(p);
  });
}

template <typename T>
bool IsNan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v); else return false;
}

// Note [2-d max pool rows]: a 2-d pool without dilation (the CNN case) runs row by row. Outputs
// whose window lies inside the row take their taps at compile-time offsets (kernel width K and
// stride S fixed by the template), branch-free, so the compiler vectorises across outputs; the
// few border outputs go through the generic window. Same scan order and NaN rule as the generic
// loop: the first maximum in row-major window order wins, a NaN always replaces (the last NaN).
template <typename T, int K, int S>
void MaxPool2dPlane(const PoolGeom& g, const T* xp, T* yp, int64_t* ip) {
  const int64_t W = g.in[2], OW = g.out[2], pad = g.pad[2];
  // Interior outputs: first tap >= 0 and last tap < W.
  const int64_t a = std::min(OW, (pad + S - 1) / S);
  const int64_t b = std::max(a, std::min(OW, W + pad - K >= 0 ? (W + pad - K) / S + 1 : 0));
  constexpr T kLow = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                          : std::numeric_limits<T>::lowest();
  for (int64_t o1 = 0; o1 < g.out[1]; ++o1, yp += OW, ip += OW) {
    const PoolWindow w1 = PoolTaps(g, 1, o1);
    auto border = [&](int64_t o2) {
      const PoolWindow w2 = PoolTaps(g, 2, o2);
      T best = kLow;
      int64_t at = w1.lo * W + w2.lo;
      for (int64_t i1 = w1.lo; i1 < w1.hi; ++i1)
        for (int64_t i2 = w2.lo; i2 < w2.hi; ++i2) {
          const T v = xp[i1 * W + i2];
          if (v > best || IsNan(v)) best = v, at = i1 * W + i2;
        }
      yp[o2] = best;
      ip[o2] = at;
    };
    if (w1.hi <= w1.lo || b <= a) {  // no interior (or no row in the window: ceil_mode's last)
      for (int64_t o2 = 0; o2 < OW; ++o2) border(o2);
      continue;
    }
    for (int64_t o2 = 0; o2 < a; ++o2) border(o2);
    for (int64_t o2 = b; o2 < OW; ++o2) border(o2);
    // Interior: the first window row initialises, later rows update (all in row-major order).
    // Tap offsets are 32-bit (checked by the caller), so the index arithmetic stays narrow.
    auto fold_row = [&](int64_t i1, auto first) {
      constexpr bool kFirst = decltype(first)::value;
      const T* r = xp + i1 * W - pad;
      const int32_t base = static_cast<int32_t>(i1 * W - pad);
      for (int64_t o2 = a; o2 < b; ++o2) {
        T best = kFirst ? r[o2 * S] : yp[o2];
        int64_t at = kFirst ? base + static_cast<int32_t>(o2 * S) : ip[o2];
        for (int t = kFirst ? 1 : 0; t < K; ++t) {
          const T v = r[o2 * S + t];
          const bool take = v > best || v != v;
          best = take ? v : best;
          at = take ? base + static_cast<int32_t>(o2 * S + t) : at;
        }
        yp[o2] = best;
        ip[o2] = at;
      }
    };
    fold_row(w1.lo, std::true_type{});
    for (int64_t i1 = w1.lo + 1; i1 < w1.hi; ++i1) fold_row(i1, std::false_type{});
  }
}

// The fixed (K, S) pairs of Note [2-d max pool rows]; false: use the generic loop.
template <typename T>
bool MaxPool2dRows(const PoolGeom& g, const T* x, T* y, int64_t* idx) {
  if (g.in[0] != 1 || g.kernel[0] != 1 || g.dil[1] != 1 || g.dil[2] != 1 || g.InPlane() >= (int64_t{1} << 31))
    return false;
  void (*plane)(const PoolGeom&, const T*, T*, int64_t*) = nullptr;
  const int64_t k = g.kernel[2], s = g.stride[2];
  if (k == 3 && s == 2) plane = MaxPool2dPlane<T, 3, 2>;
  else if (k == 2 && s == 2) plane = MaxPool2dPlane<T, 2, 2>;
  else if (k == 3 && s == 1) plane = MaxPool2dPlane<T, 3, 1>;
  if (!plane) return false;
  ForPlanes(g, g.InPlane(), [&](int64_t p) { plane(g, x + p * g.InPlane(), y + p * g.OutPlane(), idx + p * g.OutPlane()); });
  return true;
}

template <typename T>
void MaxPoolT(const PoolGeom& g, const T* x, T* y, int64_t* idx) {
  if constexpr (std::is_floating_point_v<T>) {
    if (MaxPool2dRows(g, x, y, idx)) return;
  }
  ForPlanes(g, g.InPlane(), [&](int64_t p) {
    const T* xp = x + p * g.InPlane();
    T* yp = y + p * g.OutPlane();
    int64_t* ip = idx + p * g.OutPlane();
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
      const PoolWindow w0 = PoolTaps(g, 0, o0);
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
        const PoolWindow w1 = PoolTaps(g, 1, o1);
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2, ++yp, ++ip) {
          const PoolWindow w2 = PoolTaps(g, 2, o2);
          T best = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::lowest();
          int64_t at = (w0.lo * g.in[1] + w1.lo) * g.in[2] + w2.lo;
          for (int64_t i0 = w0.lo; i0 < w0.hi; i0 += w0.step)
            for (int64_t i1 = w1.lo; i1 < w1.hi; i1 += w1.step) {
              const int64_t row = (i0 * g.in[1] + i1) * g.in[2];
              for (int64_t i2 = w2.lo; i2 < w2.hi; i2 += w2.step) {
                const T v = xp[row + i2];
                if (v > best || IsNan(v)) best = v, at = row + i2;
              }
            }
          *yp = best;
          *ip = at;
        }
      }
    }
  });
}

inline int64_t AvgDivisor(const PoolGeom& g, bool cip, std::optional<int64_t> div, int64_t o0, int64_t o1,
                          int64_t o2) {
  return PoolAvgDivisor(g, cip, div ? *div : 0, o0, o1, o2);
}

template <typename T>
void AvgPoolT(const PoolGeom& g, bool cip, std::optional<int64_t> div, const T* x, T* y) {
  using A = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  ForPlanes(g, g.InPlane(), [&](int64_t p) {
    const T* xp = x + p * g.InPlane();
    T* yp = y + p * g.OutPlane();
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
      const PoolWindow w0 = PoolTaps(g, 0, o0);
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
        const PoolWindow w1 = PoolTaps(g, 1, o1);
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2, ++yp) {
          const PoolWindow w2 = PoolTaps(g, 2, o2);
          A sum = 0;
          for (int64_t i0 = w0.lo; i0 < w0.hi; ++i0)
            for (int64_t i1 = w1.lo; i1 < w1.hi; ++i1) {
              const T* row = xp + (i0 * g.in[1] + i1) * g.in[2];
              for (int64_t i2 = w2.lo; i2 < w2.hi; ++i2) sum += row[i2];
            }
          *yp = static_cast<T>(sum / static_cast<A>(AvgDivisor(g, cip, div, o0, o1, o2)));
        }
      }
    }
  });
}

template <typename T>
void AvgPoolBackwardT(const PoolGeom& g, bool cip, std::optional<int64_t> div, const T* dy, T* dx) {
  ForPlanes(g, g.InPlane(), [&](int64_t p) {
    const T* dyp = dy + p * g.OutPlane();
    T* dxp = dx + p * g.InPlane();
    std::fill(dxp, dxp + g.InPlane(), T(0));
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
      const PoolWindow w0 = PoolTaps(g, 0, o0);
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
        const PoolWindow w1 = PoolTaps(g, 1, o1);
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2, ++dyp) {
          const PoolWindow w2 = PoolTaps(g, 2, o2);
          const T v = *dyp / static_cast<T>(AvgDivisor(g, cip, div, o0, o1, o2));
          for (int64_t i0 = w0.lo; i0 < w0.hi; ++i0)
            for (int64_t i1 = w1.lo; i1 < w1.hi; ++i1) {
              T* row = dxp + (i0 * g.in[1] + i1) * g.in[2];
              for (int64_t i2 = w2.lo; i2 < w2.hi; ++i2) row[i2] += v;
            }
        }
      }
    }
  });
}


// Calls f(output offset, window bounds lo[3], hi[3]) for every adaptive window of a plane.
template <typename F>
void ForAdaptiveWindows(const PoolGeom& g, const F& f) {
  int64_t lo[3], hi[3], at = 0;
  for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
    lo[0] = AdaptiveStart(o0, g.in[0], g.out[0]), hi[0] = AdaptiveEnd(o0, g.in[0], g.out[0]);
    for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
      lo[1] = AdaptiveStart(o1, g.in[1], g.out[1]), hi[1] = AdaptiveEnd(o1, g.in[1], g.out[1]);
      for (int64_t o2 = 0; o2 < g.out[2]; ++o2, ++at) {
        lo[2] = AdaptiveStart(o2, g.in[2], g.out[2]), hi[2] = AdaptiveEnd(o2, g.in[2], g.out[2]);
        f(at, lo, hi);
      }
    }
  }
}

template <typename T>
void AdaptiveAvgT(const PoolGeom& g, const T* x, T* y) {
  ForPlanes(g, g.InPlane(), [&](int64_t p) {
    const T* xp = x + p * g.InPlane();
    T* yp = y + p * g.OutPlane();
    ForAdaptiveWindows(g, [&](int64_t at, const int64_t* lo, const int64_t* hi) {
      T sum = 0;
      for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
        for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1) {
          const T* row = xp + (i0 * g.in[1] + i1) * g.in[2];
          for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) sum += row[i2];
        }
      yp[at] = sum / static_cast<T>((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
    });
  });
}

template <typename T>
void AdaptiveAvgBackwardT(const PoolGeom& g, const T* dy, T* dx) {
  ForPlanes(g, g.InPlane(), [&](int64_t p) {
    const T* dyp = dy + p * g.OutPlane();
    T* dxp = dx + p * g.InPlane();
    std::fill(dxp, dxp + g.InPlane(), T(0));
    ForAdaptiveWindows(g, [&](int64_t at, const int64_t* lo, const int64_t* hi) {
      const T v = dyp[at] / static_cast<T>((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
      for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
        for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1) {
          T* row = dxp + (i0 * g.in[1] + i1) * g.in[2];
          for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) row[i2] += v;
        }
    });
  });
}

template <typename T>
void AdaptiveMaxT(const PoolGeom& g, const T* x, T* y, int64_t* idx) {
  ForPlanes(g, g.InPlane(), [&](int64_t p) {
    const T* xp = x + p * g.InPlane();
    T* yp = y + p * g.OutPlane();
    int64_t* ip = idx + p * g.OutPlane();
    ForAdaptiveWindows(g, [&](int64_t at, const int64_t* lo, const int64_t* hi) {
      T best = -std::numeric_limits<T>::infinity();
      int64_t where = (lo[0] * g.in[1] + lo[1]) * g.in[2] + lo[2];
      for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
        for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1) {
          const int64_t row = (i0 * g.in[1] + i1) * g.in[2];
          for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) {
            const T v = xp[row + i2];
            if (v > best || std::isnan(v)) best = v, where = row + i2;
          }
        }
      yp[at] = best;
      ip[at] = where;
    });
  });
}

void MaxPoolForwardCpu(const PoolGeom& g, const Tensor& x, const Tensor& y, const Tensor& indices) {
  DispatchPool(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    MaxPoolT<T>(g, x.data<T>(), y.data<T>(), indices.data<int64_t>());
  });
}

void AvgPoolForwardCpu(const PoolGeom& g, bool cip, std::optional<int64_t> div, const Tensor& x, const Tensor& y) {
  DispatchPool(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    AvgPoolT<T>(g, cip, div, x.data<T>(), y.data<T>());
  });
}

void AvgPoolBackwardCpu(const PoolGeom& g, bool cip, std::optional<int64_t> div, const Tensor& dy, const Tensor& dx) {
  DispatchPoolFloat(dy.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    AvgPoolBackwardT<T>(g, cip, div, dy.data<T>(), dx.data<T>());
  });
}

void AdaptiveAvgPoolForwardCpu(const PoolGeom& g, const Tensor& x, const Tensor& y) {
  DispatchPoolFloat(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    AdaptiveAvgT<T>(g, x.data<T>(), y.data<T>());
  });
}

void AdaptiveAvgPoolBackwardCpu(const PoolGeom& g, const Tensor& dy, const Tensor& dx) {
  DispatchPoolFloat(dy.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    AdaptiveAvgBackwardT<T>(g, dy.data<T>(), dx.data<T>());
  });
}

void AdaptiveMaxPoolForwardCpu(const PoolGeom& g, const Tensor& x, const Tensor& y, const Tensor& indices) {
  DispatchPoolFloat(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    AdaptiveMaxT<T>(g, x.data<T>(), y.data<T>(), indices.data<int64_t>());
  });
}

void PoolScatterAddCpu(const PoolGeom& g, const Tensor& dy, const Tensor& indices, const Tensor& dx) {
  DispatchPoolFloat(dy.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = dy.data<T>();
    const int64_t* idx = indices.data<int64_t>();
    T* dst = dx.data<T>();
    ForPlanes(g, g.InPlane() + g.OutPlane(), [&](int64_t p) {
      T* d = dst + p * g.InPlane();
      std::fill(d, d + g.InPlane(), T(0));
      const int64_t* ip = idx + p * g.OutPlane();
      const T* s = src + p * g.OutPlane();
      for (int64_t j = 0; j < g.OutPlane(); ++j) d[ip[j]] += s[j];
    });
  });
}

void PoolGatherCpu(const PoolGeom& g, const Tensor& x, const Tensor& indices, const Tensor& y) {
  DispatchPool(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data<T>();
    const int64_t* idx = indices.data<int64_t>();
    T* dst = y.data<T>();
    ForPlanes(g, g.OutPlane(), [&](int64_t p) {
      const T* s = src + p * g.InPlane();
      const int64_t* ip = idx + p * g.OutPlane();
      T* d = dst + p * g.OutPlane();
      for (int64_t j = 0; j < g.OutPlane(); ++j) d[j] = s[ip[j]];
    });
  });
}

void PoolScatterCpu(const PoolGeom& g, const Tensor& x, const Tensor& indices, const Tensor& y) {
  DispatchPool(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data<T>();
    const int64_t* idx = indices.data<int64_t>();
    T* dst = y.data<T>();
    ForPlanes(g, g.InPlane() + g.OutPlane(), [&](int64_t p) {
      T* d = dst + p * g.InPlane();
      std::fill(d, d + g.InPlane(), T(0));
      const int64_t* ip = idx + p * g.OutPlane();
      const T* s = src + p * g.OutPlane();
      for (int64_t j = 0; j < g.OutPlane(); ++j) d[ip[j]] = s[j];
    });
  });
}

}  // namespace

void MaxPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y, const Tensor& indices) {
  kernels::CallKernel<kernels::MaxPoolForwardKernel>(y.device(), g, x, y, indices);
}

void AvgPoolForward(const PoolGeom& g, bool cip, std::optional<int64_t> div, const Tensor& x, const Tensor& y) {
  kernels::CallKernel<kernels::AvgPoolForwardKernel>(y.device(), g, cip, div, x, y);
}

void AvgPoolBackward(const PoolGeom& g, bool cip, std::optional<int64_t> div, const Tensor& dy, const Tensor& dx) {
  kernels::CallKernel<kernels::AvgPoolBackwardKernel>(dx.device(), g, cip, div, dy, dx);
}

void AdaptiveAvgPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y) {
  kernels::CallKernel<kernels::AdaptiveAvgPoolForwardKernel>(y.device(), g, x, y);
}

void AdaptiveAvgPoolBackward(const PoolGeom& g, const Tensor& dy, const Tensor& dx) {
  kernels::CallKernel<kernels::AdaptiveAvgPoolBackwardKernel>(dx.device(), g, dy, dx);
}

void AdaptiveMaxPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y, const Tensor& indices) {
  kernels::CallKernel<kernels::AdaptiveMaxPoolForwardKernel>(y.device(), g, x, y, indices);
}

void PoolScatterAdd(const PoolGeom& g, const Tensor& dy, const Tensor& indices, const Tensor& dx) {
  kernels::CallKernel<kernels::PoolScatterAddKernel>(dx.device(), g, dy, indices, dx);
}

void PoolGather(const PoolGeom& g, const Tensor& x, const Tensor& indices, const Tensor& y) {
  kernels::CallKernel<kernels::PoolGatherKernel>(y.device(), g, x, indices, y);
}

void PoolScatter(const PoolGeom& g, const Tensor& x, const Tensor& indices, const Tensor& y) {
  kernels::CallKernel<kernels::PoolScatterKernel>(y.device(), g, x, indices, y);
}

namespace {
// The CPU kernels in the registry (Note [Kernel registry]); the entries above reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::MaxPoolForwardKernel>(DeviceType::kCPU, &MaxPoolForwardCpu);
  kernels::RegisterKernel<kernels::AvgPoolForwardKernel>(DeviceType::kCPU, &AvgPoolForwardCpu);
  kernels::RegisterKernel<kernels::AvgPoolBackwardKernel>(DeviceType::kCPU, &AvgPoolBackwardCpu);
  kernels::RegisterKernel<kernels::AdaptiveAvgPoolForwardKernel>(DeviceType::kCPU, &AdaptiveAvgPoolForwardCpu);
  kernels::RegisterKernel<kernels::AdaptiveAvgPoolBackwardKernel>(DeviceType::kCPU, &AdaptiveAvgPoolBackwardCpu);
  kernels::RegisterKernel<kernels::AdaptiveMaxPoolForwardKernel>(DeviceType::kCPU, &AdaptiveMaxPoolForwardCpu);
  kernels::RegisterKernel<kernels::PoolScatterAddKernel>(DeviceType::kCPU, &PoolScatterAddCpu);
  kernels::RegisterKernel<kernels::PoolGatherKernel>(DeviceType::kCPU, &PoolGatherCpu);
  kernels::RegisterKernel<kernels::PoolScatterKernel>(DeviceType::kCPU, &PoolScatterCpu);
  return true;
}();
}  // namespace

}  // namespace oneflow
