// Pooling on CUDA (the CUDA side of kernels/pool.h, same contracts and dtypes): one thread per
// output element scans its window in the CPU's order with the CPU's rules (the first maximum
// wins, a NaN always replaces; PyTorch's average divisor), so values and indices equal the CPU's.
// Gradients scatter with atomic adds into a zeroed input gradient (float/double), so their
// rounding order, unlike their value, is not fixed.
#include <cuda_runtime.h>

#include <cmath>
#include <limits>

#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "kernels/pool.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

constexpr int kThreads = kGridThreads;

// Output element e of the geometry: its plane and its three output coordinates.
__device__ void Coords(const PoolGeom& g, int64_t e, int64_t* p, int64_t* o) {
  o[2] = e % g.out[2];
  e /= g.out[2];
  o[1] = e % g.out[1];
  e /= g.out[1];
  o[0] = e % g.out[0];
  *p = e / g.out[0];
}

template <typename T>
__device__ bool IsNan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

template <typename T>
__global__ void MaxPoolKernel(PoolGeom g, const T* x, T* y, int64_t* idx) {
  OF_GRID_LOOP(e, g.planes * g.OutPlane()) {
    int64_t p, o[3];
    Coords(g, e, &p, o);
    const T* xp = x + p * g.InPlane();
    const PoolWindow w0 = PoolTaps(g, 0, o[0]), w1 = PoolTaps(g, 1, o[1]), w2 = PoolTaps(g, 2, o[2]);
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
    y[e] = best;
    idx[e] = at;
  }
}

template <typename T>
__global__ void AvgPoolKernel(PoolGeom g, bool cip, int64_t div, const T* x, T* y) {
  using A = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  OF_GRID_LOOP(e, g.planes * g.OutPlane()) {
    int64_t p, o[3];
    Coords(g, e, &p, o);
    const T* xp = x + p * g.InPlane();
    const PoolWindow w0 = PoolTaps(g, 0, o[0]), w1 = PoolTaps(g, 1, o[1]), w2 = PoolTaps(g, 2, o[2]);
    A sum = 0;
    for (int64_t i0 = w0.lo; i0 < w0.hi; ++i0)
      for (int64_t i1 = w1.lo; i1 < w1.hi; ++i1) {
        const T* row = xp + (i0 * g.in[1] + i1) * g.in[2];
        for (int64_t i2 = w2.lo; i2 < w2.hi; ++i2) sum += row[i2];
      }
    y[e] = static_cast<T>(sum / static_cast<A>(PoolAvgDivisor(g, cip, div, o[0], o[1], o[2])));
  }
}

template <typename T>
__global__ void AvgPoolBackwardKernel(PoolGeom g, bool cip, int64_t div, const T* dy, T* dx) {
  OF_GRID_LOOP(e, g.planes * g.OutPlane()) {
    int64_t p, o[3];
    Coords(g, e, &p, o);
    T* dxp = dx + p * g.InPlane();
    const PoolWindow w0 = PoolTaps(g, 0, o[0]), w1 = PoolTaps(g, 1, o[1]), w2 = PoolTaps(g, 2, o[2]);
    const T v = dy[e] / static_cast<T>(PoolAvgDivisor(g, cip, div, o[0], o[1], o[2]));
    for (int64_t i0 = w0.lo; i0 < w0.hi; ++i0)
      for (int64_t i1 = w1.lo; i1 < w1.hi; ++i1) {
        T* row = dxp + (i0 * g.in[1] + i1) * g.in[2];
        for (int64_t i2 = w2.lo; i2 < w2.hi; ++i2) atomicAdd(row + i2, v);
      }
  }
}

// The adaptive window of output o (three dims) as lo[3], hi[3].
__device__ void AdaptiveWindow(const PoolGeom& g, const int64_t* o, int64_t* lo, int64_t* hi) {
  for (int d = 0; d < 3; ++d) {
    lo[d] = AdaptiveStart(o[d], g.in[d], g.out[d]);
    hi[d] = AdaptiveEnd(o[d], g.in[d], g.out[d]);
  }
}

template <typename T>
__global__ void AdaptiveAvgKernel(PoolGeom g, const T* x, T* y) {
  OF_GRID_LOOP(e, g.planes * g.OutPlane()) {
    int64_t p, o[3], lo[3], hi[3];
    Coords(g, e, &p, o);
    AdaptiveWindow(g, o, lo, hi);
    const T* xp = x + p * g.InPlane();
    T sum = 0;
    for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
      for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1) {
        const T* row = xp + (i0 * g.in[1] + i1) * g.in[2];
        for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) sum += row[i2];
      }
    y[e] = sum / static_cast<T>((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
  }
}

template <typename T>
__global__ void AdaptiveAvgBackwardKernel(PoolGeom g, const T* dy, T* dx) {
  OF_GRID_LOOP(e, g.planes * g.OutPlane()) {
    int64_t p, o[3], lo[3], hi[3];
    Coords(g, e, &p, o);
    AdaptiveWindow(g, o, lo, hi);
    T* dxp = dx + p * g.InPlane();
    const T v = dy[e] / static_cast<T>((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
    for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
      for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1) {
        T* row = dxp + (i0 * g.in[1] + i1) * g.in[2];
        for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) atomicAdd(row + i2, v);
      }
  }
}

template <typename T>
__global__ void AdaptiveMaxKernel(PoolGeom g, const T* x, T* y, int64_t* idx) {
  OF_GRID_LOOP(e, g.planes * g.OutPlane()) {
    int64_t p, o[3], lo[3], hi[3];
    Coords(g, e, &p, o);
    AdaptiveWindow(g, o, lo, hi);
    const T* xp = x + p * g.InPlane();
    T best = -std::numeric_limits<T>::infinity();
    int64_t where = (lo[0] * g.in[1] + lo[1]) * g.in[2] + lo[2];
    for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
      for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1) {
        const int64_t row = (i0 * g.in[1] + i1) * g.in[2];
        for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) {
          const T v = xp[row + i2];
          if (v > best || v != v) best = v, where = row + i2;
        }
      }
    y[e] = best;
    idx[e] = where;
  }
}

// Index moves per plane: out element j of plane p <-> in element idx[j] of plane p.
template <typename T>
__global__ void ScatterAddKernel(PoolGeom g, const T* dy, const int64_t* idx, T* dx) {
  OF_GRID_LOOP(e, g.planes * g.OutPlane()) atomicAdd(dx + e / g.OutPlane() * g.InPlane() + idx[e], dy[e]);
}
template <typename T>
__global__ void GatherKernel(PoolGeom g, const T* x, const int64_t* idx, T* y) {
  OF_GRID_LOOP(e, g.planes * g.OutPlane()) y[e] = x[e / g.OutPlane() * g.InPlane() + idx[e]];
}
template <typename T>
__global__ void ScatterKernel(PoolGeom g, const T* x, const int64_t* idx, T* y) {
  OF_GRID_LOOP(e, g.planes * g.OutPlane()) y[e / g.OutPlane() * g.InPlane() + idx[e]] = x[e];
}

// Launches f(blocks, stream) over the geometry's outputs on `on`'s device.
template <typename F>
void Launch(const PoolGeom& g, const Tensor& on, const F& f) {
  const int64_t n = g.planes * g.OutPlane();
  if (n == 0) return;
  const int dev = on.device().index;
  DeviceGuard guard(dev);
  const int64_t b = (n + kThreads - 1) / kThreads;
  f(static_cast<unsigned>(b < (int64_t(1) << 20) ? b : (int64_t(1) << 20)), static_cast<cudaStream_t>(Stream(dev)));
  CheckLaunch("a pooling kernel");
}

void MaxPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y, const Tensor& indices) {
  Launch(g, y, [&](unsigned b, cudaStream_t s) {
    DispatchPool(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      MaxPoolKernel<T><<<b, kThreads, 0, s>>>(g, x.ptr<T>(), y.ptr<T>(), indices.ptr<int64_t>());
    });
  });
}

void AvgPoolForward(const PoolGeom& g, bool cip, std::optional<int64_t> div, const Tensor& x, const Tensor& y) {
  Launch(g, y, [&](unsigned b, cudaStream_t s) {
    DispatchPool(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      AvgPoolKernel<T><<<b, kThreads, 0, s>>>(g, cip, div ? *div : 0, x.ptr<T>(), y.ptr<T>());
    });
  });
}

void AvgPoolBackward(const PoolGeom& g, bool cip, std::optional<int64_t> div, const Tensor& dy, const Tensor& dx) {
  FillWith(dx, Scalar(0));
  Launch(g, dx, [&](unsigned b, cudaStream_t s) {
    DispatchPoolFloat(dy.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      AvgPoolBackwardKernel<T><<<b, kThreads, 0, s>>>(g, cip, div ? *div : 0, dy.ptr<T>(), dx.ptr<T>());
    });
  });
}

void AdaptiveAvgPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y) {
  Launch(g, y, [&](unsigned b, cudaStream_t s) {
    DispatchPoolFloat(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      AdaptiveAvgKernel<T><<<b, kThreads, 0, s>>>(g, x.ptr<T>(), y.ptr<T>());
    });
  });
}

void AdaptiveAvgPoolBackward(const PoolGeom& g, const Tensor& dy, const Tensor& dx) {
  FillWith(dx, Scalar(0));
  Launch(g, dx, [&](unsigned b, cudaStream_t s) {
    DispatchPoolFloat(dy.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      AdaptiveAvgBackwardKernel<T><<<b, kThreads, 0, s>>>(g, dy.ptr<T>(), dx.ptr<T>());
    });
  });
}

void AdaptiveMaxPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y, const Tensor& indices) {
  Launch(g, y, [&](unsigned b, cudaStream_t s) {
    DispatchPoolFloat(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      AdaptiveMaxKernel<T><<<b, kThreads, 0, s>>>(g, x.ptr<T>(), y.ptr<T>(), indices.ptr<int64_t>());
    });
  });
}

void PoolScatterAdd(const PoolGeom& g, const Tensor& dy, const Tensor& indices, const Tensor& dx) {
  FillWith(dx, Scalar(0));
  Launch(g, dx, [&](unsigned b, cudaStream_t s) {
    DispatchPoolFloat(dy.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ScatterAddKernel<T><<<b, kThreads, 0, s>>>(g, dy.ptr<T>(), indices.ptr<int64_t>(), dx.ptr<T>());
    });
  });
}

void PoolGather(const PoolGeom& g, const Tensor& x, const Tensor& indices, const Tensor& y) {
  Launch(g, y, [&](unsigned b, cudaStream_t s) {
    DispatchPool(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      GatherKernel<T><<<b, kThreads, 0, s>>>(g, x.ptr<T>(), indices.ptr<int64_t>(), y.ptr<T>());
    });
  });
}

void PoolScatter(const PoolGeom& g, const Tensor& x, const Tensor& indices, const Tensor& y) {
  FillWith(y, Scalar(0));
  Launch(g, y, [&](unsigned b, cudaStream_t s) {
    DispatchPool(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ScatterKernel<T><<<b, kThreads, 0, s>>>(g, x.ptr<T>(), indices.ptr<int64_t>(), y.ptr<T>());
    });
  });
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterPoolKernels() {
  kernels::RegisterKernel<kernels::MaxPoolForwardKernel>(DeviceType::kCUDA, &MaxPoolForward);
  kernels::RegisterKernel<kernels::AvgPoolForwardKernel>(DeviceType::kCUDA, &AvgPoolForward);
  kernels::RegisterKernel<kernels::AvgPoolBackwardKernel>(DeviceType::kCUDA, &AvgPoolBackward);
  kernels::RegisterKernel<kernels::AdaptiveAvgPoolForwardKernel>(DeviceType::kCUDA, &AdaptiveAvgPoolForward);
  kernels::RegisterKernel<kernels::AdaptiveAvgPoolBackwardKernel>(DeviceType::kCUDA, &AdaptiveAvgPoolBackward);
  kernels::RegisterKernel<kernels::AdaptiveMaxPoolForwardKernel>(DeviceType::kCUDA, &AdaptiveMaxPoolForward);
  kernels::RegisterKernel<kernels::PoolScatterAddKernel>(DeviceType::kCUDA, &PoolScatterAdd);
  kernels::RegisterKernel<kernels::PoolGatherKernel>(DeviceType::kCUDA, &PoolGather);
  kernels::RegisterKernel<kernels::PoolScatterKernel>(DeviceType::kCUDA, &PoolScatter);
}

}  // namespace oneflow::cuda
