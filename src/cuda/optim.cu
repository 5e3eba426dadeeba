// The fused optimizer updates on the device (Note [CUDA optimizer updates] in
// kernels/optim_steps.h): the CPU loop's step functor per element, in one launch for a batch of
// parameters (blocks of kBatchChunk elements) or a grid-stride kernel for one large parameter,
// instantiated for every optimizer, dtype and option combination.
#include <cuda_runtime.h>

#include <utility>

#include "core/dtype.h"
#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "kernels/optim_steps.h"

namespace oneflow::cuda {

namespace {

using optim::UpdatePtrs;

template <typename F>
__global__ void __launch_bounds__(kGridThreads)
    UpdateKernel(F f, UpdatePtrs<typename F::Elem> q, int64_t n) {
  OF_GRID_LOOP(j, n) f(q, j);
}

template <typename F>
void Launch(const F& f, const UpdatePtrs<typename F::Elem>& q, int64_t n, int device) {
  if (n == 0) return;
  DeviceGuard guard(device);
  UpdateKernel<<<GridFor(n), kGridThreads, 0, static_cast<cudaStream_t>(Stream(device))>>>(f, q, n);
  CheckLaunch("an optimizer update kernel");
}

constexpr int kBatchThreads = 256;

// Block b finds its parameter among the batch's (a few dozen compares at most, on kernel
// arguments: __grid_constant__ keeps them in the constant bank, no per-thread copy).
template <typename F>
__global__ void __launch_bounds__(kBatchThreads)
    BatchKernel(const F f, const __grid_constant__ optim::UpdateBatch<typename F::Elem> b) {
  int t = 0;
  while (t + 1 < b.count && b.first[t + 1] <= blockIdx.x) ++t;
  const int64_t begin = static_cast<int64_t>(blockIdx.x - b.first[t]) * optim::kBatchChunk;
  const int64_t end = begin + optim::kBatchChunk < b.n[t] ? begin + optim::kBatchChunk : b.n[t];
  const UpdatePtrs<typename F::Elem> q = b.q[t];
  for (int64_t j = begin + threadIdx.x; j < end; j += kBatchThreads) f(q, j);
}

template <typename F>
void LaunchBatch(const F& f, const optim::UpdateBatch<typename F::Elem>& b, int device) {
  const unsigned blocks = b.first[b.count];
  if (blocks == 0) return;
  DeviceGuard guard(device);
  BatchKernel<<<blocks, kBatchThreads, 0, static_cast<cudaStream_t>(Stream(device))>>>(f, b);
  CheckLaunch("an optimizer update kernel");
}

template <template <typename, unsigned> class F, typename T, unsigned... kF>
void RegisterFlags(std::integer_sequence<unsigned, kF...>) {
  ((optim::CudaUpdateSlot<F<T, kF>>::run = &Launch<F<T, kF>>), ...);
  ((optim::CudaUpdateSlot<F<T, kF>>::run_batch = &LaunchBatch<F<T, kF>>), ...);
}

template <template <typename, unsigned> class F>
void Register() {
  constexpr unsigned kCombos = 1u << F<float, 0>::kNumFlags;
  RegisterFlags<F, float>(std::make_integer_sequence<unsigned, kCombos>{});
  RegisterFlags<F, double>(std::make_integer_sequence<unsigned, kCombos>{});
  RegisterFlags<F, Half>(std::make_integer_sequence<unsigned, kCombos>{});
  RegisterFlags<F, BFloat16>(std::make_integer_sequence<unsigned, kCombos>{});
}

}  // namespace

// Called once when the module loads (cuda/cuda_bind.cpp).
void RegisterOptimizerUpdates() {
  using namespace optim;
  Register<SgdStep>();
  Register<AdamStep>();
  Register<AdamaxStep>();
  Register<RmspropStep>();
  Register<AdagradStep>();
  Register<AdadeltaStep>();
  Register<NadamStep>();
  Register<RadamStep>();
  Register<LambDirectionStep>();
}

}  // namespace oneflow::cuda
