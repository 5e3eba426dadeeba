// pad and its backward on CUDA (kernels/pad.h; the plan from ops/padding_ops.cpp): the op's per-dim index maps (output
// position -> source position, -1 for the constant) travel to the device in one int64 tensor;
// one thread per output element gathers (forward) or adds atomically (backward).
#include <cuda_runtime.h>

#include <cstring>
#include <type_traits>
#include <vector>

#include "core/shape.h"
#include "cuda/atomic.cuh"
#include "cuda/index.h"
#include "cuda/launch.cuh"
#include "cuda/ops.h"
#include "cuda/runtime.h"
#include "kernels/move.h"
#include "kernels/pad.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

// Padded dims j = 0..k-1 (the last k dims): output sizes, input strides within a plane, and the
// offsets of their maps in the map tensor.
struct PadDims {
  int k;
  int64_t out_size[kMaxDims], in_stride[kMaxDims], map_at[kMaxDims];
  int64_t in_plane, out_plane, total;
};

// Input element of output element e, or -1 where the constant goes.
__device__ inline int64_t SourceOf(const PadDims& p, const int64_t* maps, int64_t e) {
  int64_t r = e % p.out_plane, src = e / p.out_plane * p.in_plane;
  for (int j = p.k - 1; j >= 0; --j) {
    const int64_t m = maps[p.map_at[j] + r % p.out_size[j]];
    r /= p.out_size[j];
    if (m < 0) return -1;
    src += m * p.in_stride[j];
  }
  return src;
}

template <typename U>
__global__ void PadKernel(const U* x, U* out, const int64_t* maps, PadDims p, U fill) {
  OF_GRID_LOOP(e, p.total) {
    const int64_t s = SourceOf(p, maps, e);
    out[e] = s < 0 ? fill : x[s];
  }
}

template <typename T>
__global__ void PadBackwardKernel(const T* g, T* out, const int64_t* maps, PadDims p) {
  OF_GRID_LOOP(e, p.total) {
    const int64_t s = SourceOf(p, maps, e);
    if (s >= 0) AtomicAdd(out + s, static_cast<OpMath<T>>(g[e]));
  }
}

PadDims DimsOf(const DimVector& in, const DimVector& out, int first, const int64_t* map_sizes) {
  PadDims p{};
  p.k = static_cast<int>(in.size()) - first;
  int64_t stride = 1, at = 0;
  p.in_plane = p.out_plane = 1;
  for (int j = p.k - 1; j >= 0; --j) {
    p.out_size[j] = out[first + j];
    p.in_stride[j] = stride;
    stride *= in[first + j];
    p.in_plane *= in[first + j];
    p.out_plane *= out[first + j];
  }
  for (int j = 0; j < p.k; ++j) {
    p.map_at[j] = at;
    at += map_sizes[j];
  }
  p.total = NumelOf(out);
  return p;
}

}  // namespace

void PadForward(const Tensor& x, const Tensor& out, int first, const Tensor& maps, const void* fill) {
  const PadDims p = DimsOf(x.sizes(), out.sizes(), first, out.sizes().data() + first);
  if (p.total == 0) return;
  DeviceGuard guard(out.device().index);
  DispatchWidth(out.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    U f;
    std::memcpy(&f, fill, sizeof(U));
    PadKernel<U><<<GridFor(p.total), kGridThreads, 0, static_cast<cudaStream_t>(Stream(out.device().index))>>>(
        x.ptr<U>(), out.ptr<U>(), maps.ptr<int64_t>(), p, f);
  });
  CheckLaunch("the pad kernel");
}

void PadBackward(const Tensor& g, const Tensor& out, int first, const Tensor& maps) {
  const PadDims p = DimsOf(out.sizes(), g.sizes(), first, g.sizes().data() + first);
  if (p.total == 0) return;
  DeviceGuard guard(out.device().index);
  DispatchAtomic(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    PadBackwardKernel<T><<<GridFor(p.total), kGridThreads, 0, static_cast<cudaStream_t>(Stream(out.device().index))>>>(
        g.ptr<T>(), out.ptr<T>(), maps.ptr<int64_t>(), p);
  });
  CheckLaunch("the pad backward kernel");
}

}  // namespace oneflow::cuda

// The registry's entries (kernels/pad.h): the plan's maps uploaded, then the kernels above.
namespace oneflow::cuda {

namespace {

// The maps of every padded dim, in order, in one int64 tensor on `device`.
Tensor MapsOn(const PadPlan& p, const Device& device) {
  std::vector<int64_t> all;
  for (const auto& m : p.maps) all.insert(all.end(), m.begin(), m.end());
  return VectorTensor(all, device);
}

void Forward(const Tensor& x, const Tensor& out, const PadPlan& p, const Scalar& fill) {
  DispatchAll(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T v = fill.To<T>();
    PadForward(x, out, p.first, MapsOn(p, out.device()), &v);
  });
}

void Backward(const Tensor& g, const Tensor& out, const PadPlan& p) {
  OF_CHECK_TYPE(out.dtype() != DType::kBool) << "not supported for bool tensors";  // as the CPU
  PadBackward(g, out, p.first, MapsOn(p, out.device()));
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterPadKernels() {
  kernels::RegisterKernel<kernels::PadForwardKernel>(DeviceType::kCUDA, &Forward);
  kernels::RegisterKernel<kernels::PadBackwardKernel>(DeviceType::kCUDA, &Backward);
}

}  // namespace oneflow::cuda
