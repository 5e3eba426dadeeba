// The CUDA reduce kernel (Note [CUDA reductions] in kernels/reduce.h): one block per output, the
// reduced range split into one contiguous chunk per thread, the partials combined in a shared
// memory tree by the reducer's own Combine. The tree does not keep index order (thread 0's partial
// meets thread 128's before thread 64's), so Combine must not rely on it: argmax/argmin break ties
// by index there. The reducers are those of the CPU loops (kernels/reducers.h).
#include <cuda_runtime.h>

#include "cuda/complex.cuh"
#include "cuda/runtime.h"
#include "kernels/reduce.h"
#include "kernels/reducers.h"

namespace oneflow::cuda {

namespace {

constexpr int kReduceThreads = 256;

template <typename T, typename O, typename R>
__global__ void __launch_bounds__(kReduceThreads) ReduceKernel(const T* in, O* out, ReduceGeom g, R r) {
  using M = OpMath<T>;
  using Acc = decltype(r.Init());
  // Raw shared bytes: an accumulator with constructors (complex) can't be a __shared__ array.
  __shared__ alignas(16) unsigned char part_bytes[sizeof(Acc) * kReduceThreads];
  Acc* part = reinterpret_cast<Acc*>(part_bytes);
  const int64_t o = blockIdx.x;
  const int t = threadIdx.x;
  const T* base = in + Unravel(o, g.no, g.osize, g.ostride_in);
  const int64_t count = g.inner;
  const int64_t chunk = (count + kReduceThreads - 1) / kReduceThreads;
  const int64_t b = t * chunk, e = b + chunk < count ? b + chunk : count;
  Acc acc = r.Init();
  const bool flat = g.ni == 1 && g.istride[0] == 1;
  for (int64_t i = b; i < e; ++i)
    acc = r.Step(acc, static_cast<M>(base[flat ? i : Unravel(i, g.ni, g.isize, g.istride)]), i);
  part[t] = acc;
  __syncthreads();
  for (int s = kReduceThreads / 2; s > 0; s >>= 1) {
    if (t < s) part[t] = r.Combine(part[t], part[t + s]);
    __syncthreads();
  }
  if (t == 0) out[Unravel(o, g.no, g.osize, g.ostride_out)] = static_cast<O>(r.Finish(part[0], count));
}

template <template <typename> class R>
void Run(const Tensor& in, const Tensor& out, const ReduceGeom& g) {
  if (g.outer == 0) return;
  OF_CHECK(g.outer < (int64_t(1) << 31)) << "too many outputs for one CUDA reduction launch";
  DispatchAll(in.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    DispatchAll(out.dtype(), [&](auto otag) {
      using OT = typename std::decay_t<decltype(otag)>::type;
      if constexpr (R<T>::template kOutOk<OT>) {
        const int dev = out.device().index;
        DeviceGuard guard(dev);
        ReduceKernel<T, OT><<<static_cast<unsigned>(g.outer), kReduceThreads, 0,
                              static_cast<cudaStream_t>(Stream(dev))>>>(in.ptr<T>(), out.ptr<OT>(), g, R<T>{});
        CheckLaunch("a reduction kernel");
      }
    });
  });
}

// Complex sum / mean / prod: libcu++'s complex in the kernel (Note [Complex on CUDA]).
template <template <typename> class R>
void RunComplex(const Tensor& in, const Tensor& out, const ReduceGeom& g) {
  if (g.outer == 0) return;
  OF_CHECK(g.outer < (int64_t(1) << 31)) << "too many outputs for one CUDA reduction launch";
  DispatchComplex(in.dtype(), [&](auto tag) {
    using T = DevType<typename std::decay_t<decltype(tag)>::type>;
    const int dev = out.device().index;
    DeviceGuard guard(dev);
    ReduceKernel<T, T><<<static_cast<unsigned>(g.outer), kReduceThreads, 0, static_cast<cudaStream_t>(Stream(dev))>>>(
        in.ptr<T>(), out.ptr<T>(), g, R<T>{});
    CheckLaunch("a complex reduction kernel");
  });
}

template <template <typename> class R>
void Register() {
  CudaReduceSlot<R<bool>>::run = &Run<R>;
}
template <template <typename> class R>
void RegisterComplex() {
  CudaReduceSlot<R<std::complex<float>>>::run = &RunComplex<R>;
}

}  // namespace

// Called once when the module loads (api/cuda_bind.cpp).
void RegisterReductions() {
  using namespace reducers;
  Register<SumR>();
  Register<MeanR>();
  Register<ProdR>();
  Register<MaxR>();
  Register<MinR>();
  Register<ArgmaxR>();
  Register<ArgminR>();
  Register<AllR>();
  Register<AnyR>();
  RegisterComplex<CSumR>();
  RegisterComplex<CMeanR>();
  RegisterComplex<CProdR>();
}

}  // namespace oneflow::cuda
