// The fused optimizer updates on the device (Note [CUDA optimizer updates] in
// kernels/optim_steps.h): one grid-stride kernel per parameter running the CPU loop's step
// functor per element, instantiated for every optimizer, dtype and option combination.
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

template <template <typename, unsigned> class F, typename T, unsigned... kF>
void RegisterFlags(std::integer_sequence<unsigned, kF...>) {
  ((optim::CudaUpdateSlot<F<T, kF>>::run = &Launch<F<T, kF>>), ...);
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

// Called once when the module loads (api/cuda_bind.cpp).
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
