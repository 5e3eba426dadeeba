// Pooling kernels over planes: a contiguous input [P, D, H, W] (P = batch * channels; 1-d and
// 2-d pools have leading unit spatial dims) and a contiguous output [P, OD, OH, OW]. Planes run
// in parallel; each plane's loops are PyTorch's CPU algorithm (NaN wins a max, as in PyTorch).
// Hand-written rather than oneDNN: oneDNN's pooling returns no PyTorch-style indices and is
// slower on plain NCHW layouts (docs/decisions.md has the measurement).
#pragma once
#include <cstdint>
#include <optional>

#include "core/hd.h"
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

struct PoolGeom {
  int64_t planes = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
  OF_HD int64_t InPlane() const { return in[0] * in[1] * in[2]; }
  OF_HD int64_t OutPlane() const { return out[0] * out[1] * out[2]; }
};

// The window of output o along dim d: its first tap and its in-bounds taps [lo, hi) (step dil).
// These helpers are OF_HD: the CUDA kernels (src/cuda/pool.cu) walk the CPU's windows.
struct PoolWindow {
  int64_t lo, hi, step;
};
OF_HD inline PoolWindow PoolTaps(const PoolGeom& g, int d, int64_t o) {
  const int64_t start = o * g.stride[d] - g.pad[d], step = g.dil[d];
  int64_t lo = start, hi = start + (g.kernel[d] - 1) * step + 1;
  if (lo < 0) lo += ((-lo + step - 1) / step) * step;  // first tap at or after 0
  hi = hi < g.in[d] ? hi : g.in[d];
  return {lo, hi > lo ? hi : lo, step};
}
// PyTorch's average divisor: `div` (divisor_override; 0 for none), else the window clipped to the
// padded input (count_include_pad) or to the input itself.
OF_HD inline int64_t PoolAvgDivisor(const PoolGeom& g, bool cip, int64_t div, int64_t o0, int64_t o1, int64_t o2) {
  if (div != 0) return div;
  int64_t n = 1;
  const int64_t o[3] = {o0, o1, o2};
  for (int d = 0; d < 3; ++d) {
    int64_t s = o[d] * g.stride[d] - g.pad[d], e = s + g.kernel[d];
    e = e < g.in[d] + g.pad[d] ? e : g.in[d] + g.pad[d];
    if (!cip) s = s > 0 ? s : 0, e = e < g.in[d] ? e : g.in[d];
    n *= e - s;
  }
  return n;
}
// Adaptive windows: output o covers [floor(o*in/out), ceil((o+1)*in/out)).
OF_HD inline int64_t AdaptiveStart(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
OF_HD inline int64_t AdaptiveEnd(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

// The entries ops call: the kernel of the output's device (Note [Kernel registry]); CPU kernels in
// kernels/pool.cpp, CUDA ones in cuda/pool.cu.
// Windowed pools. Value dtypes: float32/float64 and integers (max), float32/float64/int64 (avg).
void MaxPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y, const Tensor& indices);
void AvgPoolForward(const PoolGeom& g, bool count_include_pad, std::optional<int64_t> divisor, const Tensor& x,
                    const Tensor& y);
void AvgPoolBackward(const PoolGeom& g, bool count_include_pad, std::optional<int64_t> divisor, const Tensor& dy,
                     const Tensor& dx);
// Adaptive pools: window o covers [floor(o*I/O), ceil((o+1)*I/O)) in every dim.
void AdaptiveAvgPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y);
void AdaptiveAvgPoolBackward(const PoolGeom& g, const Tensor& dy, const Tensor& dx);
void AdaptiveMaxPoolForward(const PoolGeom& g, const Tensor& x, const Tensor& y, const Tensor& indices);
// Index moves between a full plane (`in` of the geometry) and a pooled one (`out`), per plane:
// scatter-add dx[indices[j]] += dy[j], gather y[j] = x[indices[j]], scatter y[indices[j]] = x[j]
// (full planes zeroed first). Indices were validated by the caller.
void PoolScatterAdd(const PoolGeom& g, const Tensor& dy, const Tensor& indices, const Tensor& dx);
void PoolGather(const PoolGeom& g, const Tensor& x, const Tensor& indices, const Tensor& y);
void PoolScatter(const PoolGeom& g, const Tensor& x, const Tensor& indices, const Tensor& y);

// Their kernel interfaces, one per entry, with the same parameters.
namespace kernels {
struct MaxPoolForwardKernel {
  static constexpr const char* kName = "max_pool_forward";
  using Fn = void (*)(const PoolGeom&, const Tensor& x, const Tensor& y, const Tensor& indices);
  using Writes = KernelWrites<2, 3>;
};
struct AvgPoolForwardKernel {
  static constexpr const char* kName = "avg_pool_forward";
  using Fn = void (*)(const PoolGeom&, bool, std::optional<int64_t>, const Tensor& x, const Tensor& y);
  using Writes = KernelWrites<4>;
};
struct AvgPoolBackwardKernel {
  static constexpr const char* kName = "avg_pool_backward";
  using Fn = void (*)(const PoolGeom&, bool, std::optional<int64_t>, const Tensor& dy, const Tensor& dx);
  using Writes = KernelWrites<4>;
};
struct AdaptiveAvgPoolForwardKernel {
  static constexpr const char* kName = "adaptive_avg_pool_forward";
  using Fn = void (*)(const PoolGeom&, const Tensor& x, const Tensor& y);
  using Writes = KernelWrites<2>;
};
struct AdaptiveAvgPoolBackwardKernel {
  static constexpr const char* kName = "adaptive_avg_pool_backward";
  using Fn = void (*)(const PoolGeom&, const Tensor& dy, const Tensor& dx);
  using Writes = KernelWrites<2>;
};
struct AdaptiveMaxPoolForwardKernel {
  static constexpr const char* kName = "adaptive_max_pool_forward";
  using Fn = void (*)(const PoolGeom&, const Tensor& x, const Tensor& y, const Tensor& indices);
  using Writes = KernelWrites<2, 3>;
};
struct PoolScatterAddKernel {
  static constexpr const char* kName = "pool_scatter_add";
  using Fn = void (*)(const PoolGeom&, const Tensor& dy, const Tensor& indices, const Tensor& dx);
  using Writes = KernelWrites<3>;
};
struct PoolGatherKernel {
  static constexpr const char* kName = "pool_gather";
  using Fn = void (*)(const PoolGeom&, const Tensor& x, const Tensor& indices, const Tensor& y);
  using Writes = KernelWrites<3>;
};
struct PoolScatterKernel {
  static constexpr const char* kName = "pool_scatter";
  using Fn = void (*)(const PoolGeom&, const Tensor& x, const Tensor& indices, const Tensor& y);
  using Writes = KernelWrites<3>;
};
}  // namespace kernels

// The dtypes of the pool kernels (CPU and CUDA): f(Tag<T>{}) for float, double and the integers
// (DispatchPool) or the floats alone (DispatchPoolFloat, for averages and gradients).
template <typename F>
void DispatchPool(DType dt, F&& f) {
  switch (dt) {
    case DType::kFloat32: return f(Tag<float>{});
    case DType::kFloat64: return f(Tag<double>{});
    case DType::kInt8: return f(Tag<int8_t>{});
    case DType::kUInt8: return f(Tag<uint8_t>{});
    case DType::kInt16: return f(Tag<int16_t>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kInt64: return f(Tag<int64_t>{});
    default: break;
  }
  if (IsComplex(dt)) ThrowComplexNotImplemented(dt);  // (a user error: complex pooling)
  OF_ASSERT(false) << "pool kernel called with " << DTypeName(dt);
}

template <typename F>
void DispatchPoolFloat(DType dt, F&& f) {
  if (dt == DType::kFloat32) return f(Tag<float>{});
  if (IsComplex(dt)) ThrowComplexNotImplemented(dt);
  OF_ASSERT(dt == DType::kFloat64) << "pool kernel called with " << DTypeName(dt);
  return f(Tag<double>{});
}

}  // namespace oneflow
