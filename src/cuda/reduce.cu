// The CUDA reduce kernel (Note [CUDA reductions] in kernels/reduce.h): one block per output, the
// reduced range split into one contiguous chunk per thread, the partials combined in a shared
// memory tree by the reducer's own Combine. The tree does not keep index order (thread 0's partial
// meets thread 128's before thread 64's), so Combine must not rely on it: argmax/argmin break ties
// by index there. The reducers are those of the CPU loops (kernels/reducers.h).
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/complex.cuh"
#include "cuda/runtime.h"
#include "kernels/reduce.h"
#include "kernels/reducers.h"
#include "decl/empty.h"

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

// Note [Split CUDA reductions]: the kernel above gives an output one block, which walks the whole
// reduced range. A full reduction (x.sum(), a loss's mean) then runs on one SM, and a reduction
// over a leading dim (a Linear layer's bias gradient, summed over the batch) reads one element per
// 32-byte sector. Two shapes take two stages instead: (A) a long reduced range with few outputs:
// several blocks per output, each a grid-strided share (coalesced where the range is); (B) one reduced dim
// over contiguous outputs: blocks of 32 outputs x 8 row lanes over chunks of rows. Stage 1 writes
// partial accumulators, stage 2 combines each output's partials (Combine is order-blind, as in the
// tree above) and finishes. Steps still see each element's index along the reduced range.
constexpr int kColumnLanes = 8;  // row lanes of a (B) block: kReduceThreads / 32

template <typename Acc, typename R>
__device__ Acc BlockCombine(Acc acc, Acc* part, const R& r) {
  const int t = threadIdx.x;
  part[t] = acc;
  __syncthreads();
  for (int s = kReduceThreads / 2; s > 0; s >>= 1) {
    if (t < s) part[t] = r.Combine(part[t], part[t + s]);
    __syncthreads();
  }
  return part[0];
}

template <typename T, typename R, typename Acc>
__global__ void __launch_bounds__(kReduceThreads) RowsPartialKernel(const T* in, Acc* partial, ReduceGeom g, R r) {
  using M = OpMath<T>;
  __shared__ alignas(16) unsigned char part_bytes[sizeof(Acc) * kReduceThreads];
  const int64_t o = blockIdx.y, parts = gridDim.x;
  const T* base = in + Unravel(o, g.no, g.osize, g.ostride_in);
  const bool flat = g.ni == 1 && g.istride[0] == 1;
  Acc acc = r.Init();
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x; i < g.inner;
       i += parts * kReduceThreads)
    acc = r.Step(acc, static_cast<M>(base[flat ? i : Unravel(i, g.ni, g.isize, g.istride)]), i);
  acc = BlockCombine(acc, reinterpret_cast<Acc*>(part_bytes), r);
  if (threadIdx.x == 0) partial[o * parts + blockIdx.x] = acc;
}

template <typename T, typename R, typename Acc>
__global__ void __launch_bounds__(kReduceThreads) ColumnsPartialKernel(const T* in, Acc* partial, ReduceGeom g, R r,
                                                                        int64_t per) {
  using M = OpMath<T>;
  __shared__ alignas(16) unsigned char part_bytes[sizeof(Acc) * kReduceThreads];
  Acc* part = reinterpret_cast<Acc*>(part_bytes);
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * 32 + tx, parts = gridDim.y;
  const int64_t rows = g.isize[0], k0 = static_cast<int64_t>(blockIdx.y) * per;
  const int64_t k1 = rows - k0 < per ? rows : k0 + per;
  Acc acc = r.Init();
  if (o < g.outer) {
    const T* base = in + o * g.ostride_in[0];
    for (int64_t k = k0 + ty; k < k1; k += kColumnLanes) acc = r.Step(acc, static_cast<M>(base[k * g.istride[0]]), k);
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  if (ty == 0 && o < g.outer) {
    for (int y = 1; y < kColumnLanes; ++y) acc = r.Combine(acc, part[y * 32 + tx]);
    partial[o * parts + blockIdx.y] = acc;
  }
}

template <typename O, typename R, typename Acc>
__global__ void __launch_bounds__(kReduceThreads) FinishKernel(const Acc* partial, int64_t parts, O* out, ReduceGeom g,
                                                               R r) {
  __shared__ alignas(16) unsigned char part_bytes[sizeof(Acc) * kReduceThreads];
  const int64_t o = blockIdx.x;
  Acc acc = r.Init();
  for (int64_t k = threadIdx.x; k < parts; k += kReduceThreads) acc = r.Combine(acc, partial[o * parts + k]);
  acc = BlockCombine(acc, reinterpret_cast<Acc*>(part_bytes), r);
  if (threadIdx.x == 0) out[Unravel(o, g.no, g.osize, g.ostride_out)] = static_cast<O>(r.Finish(acc, g.inner));
}

// Which two-stage shape (Note [Split CUDA reductions]) takes g, if any: 'A' or 'B' with the
// number of partials per output (and B's rows per chunk); 0 for the one-stage kernel.
struct Split {
  char shape = 0;
  int64_t parts = 1, per = 0;
};
Split SplitOf(const ReduceGeom& g) {
  constexpr int64_t kWantBlocks = 1024;  // several waves over 132 SMs
  Split sp;
  if (g.ni == 1 && g.no == 1 && g.ostride_in[0] == 1 && g.isize[0] >= 64 && g.istride[0] != 1) {
    sp.shape = 'B';
    const int64_t col_blocks = (g.outer + 31) / 32, rows = g.isize[0];
    const int64_t chunks = std::min<int64_t>({std::max<int64_t>(1, kWantBlocks / col_blocks), (rows + 63) / 64, 65535});
    sp.per = (rows + chunks - 1) / chunks;
    sp.parts = (rows + sp.per - 1) / sp.per;
  } else if (g.inner >= 8192 && g.outer < kWantBlocks) {  // (also several reduced dims: a per-channel
    sp.shape = 'A';                                        // mean over (0, 2, 3), read through Unravel)
    sp.parts = std::min<int64_t>((g.inner + 4095) / 4096, std::max<int64_t>(2, kWantBlocks / g.outer));
    sp.parts = std::min<int64_t>(sp.parts, 65535);
  }
  return sp;
}

template <typename T, typename OT, typename R>
void RunSplit(const Tensor& in, const Tensor& out, const ReduceGeom& g, const Split& sp, cudaStream_t st) {
  using Acc = decltype(R{}.Init());
  const Tensor work = Empty(DimVector{static_cast<int64_t>(g.outer * sp.parts * sizeof(Acc))}, DType::kUInt8,
                            out.device());
  Acc* partial = reinterpret_cast<Acc*>(work.raw_ptr());
  if (sp.shape == 'A') {
    const dim3 grid(static_cast<unsigned>(sp.parts), static_cast<unsigned>(g.outer));
    RowsPartialKernel<T, R, Acc><<<grid, kReduceThreads, 0, st>>>(in.ptr<T>(), partial, g, R{});
  } else {
    const dim3 grid(static_cast<unsigned>((g.outer + 31) / 32), static_cast<unsigned>(sp.parts));
    ColumnsPartialKernel<T, R, Acc><<<grid, kReduceThreads, 0, st>>>(in.ptr<T>(), partial, g, R{}, sp.per);
  }
  FinishKernel<OT, R, Acc><<<static_cast<unsigned>(g.outer), kReduceThreads, 0, st>>>(partial, sp.parts,
                                                                                     out.ptr<OT>(), g, R{});
}

template <template <typename> class R>
void Run(const Tensor& in, const Tensor& out, const ReduceGeom& g) {
  if (g.outer == 0) return;
  OF_CHECK(g.outer < (int64_t(1) << 31)) << "too many outputs for one CUDA reduction launch";
  const Split sp = SplitOf(g);
  DispatchAll(in.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    DispatchAll(out.dtype(), [&](auto otag) {
      using OT = typename std::decay_t<decltype(otag)>::type;
      if constexpr (R<T>::template kOutOk<OT>) {
        const int dev = out.device().index;
        DeviceGuard guard(dev);
        const auto st = static_cast<cudaStream_t>(Stream(dev));
        if (sp.shape) RunSplit<T, OT, R<T>>(in, out, g, sp, st);
        else ReduceKernel<T, OT><<<static_cast<unsigned>(g.outer), kReduceThreads, 0, st>>>(in.ptr<T>(), out.ptr<OT>(), g, R<T>{});
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

// Called once when the module loads (cuda/cuda_bind.cpp).
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
