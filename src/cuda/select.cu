// where / masked_fill on CUDA (registered for kernels/where.h by cuda/where.cpp): out = cond ? a : b over the op's broadcast
// LoopPlan, elements moved by width (every dtype, complex included; no arithmetic).
#include <cuda_runtime.h>

#include <cstring>

#include "cuda/launch.cuh"
#include "cuda/ops.h"
#include "cuda/runtime.h"
#include "kernels/loop.h"
#include "kernels/move.h"

namespace oneflow::cuda {

namespace {

constexpr int kSelOps = 4;

// The plan by value into the kernel: operand 0 out, 1 the bool condition, 2 a, 3 b.
struct SelectPlan {
  int ndim;
  int64_t numel;
  int64_t sizes[kMaxDims];
  int64_t strides[kSelOps][kMaxDims];
  char* base[kSelOps];
};

// kFill: a is `fill` (the plan has no operand 2; b is its operand 2).
template <typename U, bool kFill>
__global__ void SelectKernel(SelectPlan p, U fill) {
  constexpr int kN = kFill ? 3 : 4;
  OF_GRID_LOOP(e, p.numel) {
    int64_t rem = e, off[kN] = {};
    for (int d = p.ndim - 1; d >= 0; --d) {
      const int64_t i = rem % p.sizes[d];
      rem /= p.sizes[d];
#pragma unroll
      for (int k = 0; k < kN; ++k) off[k] += i * p.strides[k][d];
    }
    const bool c = *reinterpret_cast<const bool*>(p.base[1] + off[1]);
    U v;
    if constexpr (kFill) v = c ? fill : *reinterpret_cast<const U*>(p.base[2] + off[2]);
    else v = *reinterpret_cast<const U*>(c ? p.base[2] + off[2] : p.base[3] + off[3]);
    *reinterpret_cast<U*>(p.base[0] + off[0]) = v;
  }
}

}  // namespace

void WhereSelect(const LoopPlan& plan, int64_t element_size, const void* fill, int device) {
  if (plan.numel == 0) return;
  SelectPlan p{};
  p.ndim = plan.ndim;
  p.numel = plan.numel;
  for (int d = 0; d < plan.ndim; ++d) p.sizes[d] = plan.sizes[d];
  for (int k = 0; k < plan.nops && k < kSelOps; ++k) {
    p.base[k] = plan.base[k];
    for (int d = 0; d < plan.ndim; ++d) p.strides[k][d] = plan.strides[k][d];
  }
  DeviceGuard guard(device);
  const cudaStream_t s = static_cast<cudaStream_t>(Stream(device));
  DispatchWidth(element_size, [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    if (fill) {
      U f;
      std::memcpy(&f, fill, sizeof(U));
      SelectKernel<U, true><<<GridFor(plan.numel), kGridThreads, 0, s>>>(p, f);
    } else {
      SelectKernel<U, false><<<GridFor(plan.numel), kGridThreads, 0, s>>>(p, U{});
    }
  });
  CheckLaunch(fill ? "the masked_fill kernel" : "the where kernel");
}

}  // namespace oneflow::cuda
