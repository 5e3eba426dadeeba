// Note [cuFFT transforms]: FFTs of CUDA tensors (the CUDA kernels of kernels/fft.h).
//
// cuFFT's batched layout is one batch stride over signals of up to 3 dims nested with one
// element stride, where FFTW's guru interface (kernels/fft.cpp) takes any strides. So a transform
// works on the input permuted to [batch dims..., transform dims...] (dims.back() last: the halved
// dim of r2c / c2r) and made contiguous, writes a contiguous result in that order, and the
// result is copied into `out` through the same permutation unless the permuted view of `out` is
// already that layout (transforms over the last dims). More than 3 transform dims take several
// passes: c2c over the last three, then the rest; r2c over the last three, then c2c over the
// rest; c2r the other way round. The normalisation is one scaling kernel at the end.
//
// Plans are cached by (type, sizes, batch, device) and run on the device's stream; their work
// areas come from the caching allocator at each run (cufftSetAutoAllocation(0)), so idle plans
// hold no device memory. A plan is not safe for concurrent use: runs hold the cache's lock.

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "cuda/runtime.h"
#include "decl/empty.h"
#include "kernels/fft.h"
#include "ops/copy.h"

#ifdef ONEFLOW_WITH_CUFFT
#include <cuda_runtime.h>
#include <cufft.h>

#include "cuda/launch.cuh"
#endif

namespace oneflow::cuda {

#ifndef ONEFLOW_WITH_CUFFT

// Without cuFFT no FFT kernel is registered: CUDA FFTs take the registry's host fallback
// (Note [Kernel registry]).
void RegisterFftKernels() {}

#else

namespace {

#define OF_CUFFT_CHECK(expr)                                                               \
  do {                                                                                     \
    cufftResult of_r_ = (expr);                                                            \
    OF_CHECK(of_r_ == CUFFT_SUCCESS) << "cuFFT error " << static_cast<int>(of_r_) << " (" #expr ")"; \
  } while (0)

enum class Kind { kC2C, kR2C, kC2R };

cufftType TypeOf(Kind k, bool dbl) {
  if (k == Kind::kC2C) return dbl ? CUFFT_Z2Z : CUFFT_C2C;
  if (k == Kind::kR2C) return dbl ? CUFFT_D2Z : CUFFT_R2C;
  return dbl ? CUFFT_Z2D : CUFFT_C2R;
}

struct Plan {
  cufftHandle handle = 0;
  size_t work = 0;
};

std::mutex& PlanMutex() {
  static std::mutex mu;
  return mu;
}

// The plan of `batch` contiguous signals of logical sizes n (the real length for the halved dim).
Plan& PlanFor(cufftType type, const std::vector<long long>& n, long long batch, int device) {
  static std::map<std::vector<long long>, Plan> cache;  // guarded by PlanMutex()
  std::vector<long long> key = {static_cast<long long>(type), batch, device};
  key.insert(key.end(), n.begin(), n.end());
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Plan p;
  OF_CUFFT_CHECK(cufftCreate(&p.handle));
  OF_CUFFT_CHECK(cufftSetAutoAllocation(p.handle, 0));
  // Contiguous signals: the embeds are the sizes, the complex side of r2c / c2r halves the last.
  std::vector<long long> real_n = n, cpx_n = n;
  const bool halved = type != CUFFT_C2C && type != CUFFT_Z2Z;
  if (halved) cpx_n.back() = n.back() / 2 + 1;
  auto prod = [](const std::vector<long long>& v) {
    long long s = 1;
    for (long long x : v) s *= x;
    return s;
  };
  const bool in_real = type == CUFFT_R2C || type == CUFFT_D2Z, out_real = type == CUFFT_C2R || type == CUFFT_Z2D;
  std::vector<long long> inembed = in_real ? real_n : cpx_n, onembed = out_real ? real_n : cpx_n;
  const long long idist = prod(inembed), odist = prod(onembed);
  std::vector<long long> dims = n;
  OF_CUFFT_CHECK(cufftMakePlanMany64(p.handle, static_cast<int>(dims.size()), dims.data(), inembed.data(), 1, idist,
                                     onembed.data(), 1, odist, type, batch, &p.work));
  return cache.emplace(key, p).first->second;
}

template <typename V>
__global__ void ScaleKernel(V* p, int64_t n, V s) {
  OF_GRID_LOOP(i, n) p[i] *= s;
}

void ScaleInPlace(const Tensor& t, double scale) {
  if (scale == 1.0 || t.numel() == 0) return;
  const int dev = t.device().index;
  DeviceGuard guard(dev);
  const bool dbl = t.dtype() == DType::kFloat64 || t.dtype() == DType::kComplex128;
  const int64_t n = t.numel() * (IsComplex(t.dtype()) ? 2 : 1);  // contiguous: scale every part
  cudaStream_t s = static_cast<cudaStream_t>(Stream(dev));
  if (dbl) ScaleKernel<double><<<GridFor(n), kGridThreads, 0, s>>>(t.ptr<double>(), n, scale);
  else ScaleKernel<float><<<GridFor(n), kGridThreads, 0, s>>>(t.ptr<float>(), n, static_cast<float>(scale));
  CheckLaunch("the FFT normalisation");
}

// t's dims reordered: the ones not in `dims` first (in order), then `dims` in their order.
DimVector Permutation(int nd, const DimVector& dims) {
  DimVector perm;
  for (int i = 0; i < nd; ++i)
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) perm.push_back(i);
  for (int64_t d : dims) perm.push_back(d);
  return perm;
}

Tensor Permuted(const Tensor& t, const DimVector& perm) {
  DimVector sizes, strides;
  for (int64_t p : perm) {
    sizes.push_back(t.sizes()[p]);
    strides.push_back(t.strides()[p]);
  }
  return MakeView(t, sizes, strides, t.offset());
}

bool IsContiguousLayout(const Tensor& t) {
  int64_t expect = 1;
  for (int i = t.dim() - 1; i >= 0; --i) {
    if (t.sizes()[i] != 1 && t.strides()[i] != expect) return false;
    expect *= t.sizes()[i];
  }
  return true;
}

// One pass over at most 3 dims: out = unnormalised transform of in (out contiguous, any kind).
void Pass(Kind kind, const Tensor& in, const Tensor& out, const DimVector& dims, bool forward) {
  if (out.numel() == 0) return;
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  const DimVector perm = Permutation(in.dim(), dims);
  const int nb = in.dim() - static_cast<int>(dims.size());
  // The input, permuted and contiguous (always a private copy for c2r, which overwrites it).
  Tensor pin = Permuted(in, perm);
  if (kind == Kind::kC2R || !IsContiguousLayout(pin)) {
    Tensor c = Empty(pin.sizes(), pin.dtype(), pin.device());
    CopyInto(c, pin);
    pin = c;
  }
  Tensor pout = Permuted(out, perm);
  Tensor target = IsContiguousLayout(pout) ? pout : Empty(pout.sizes(), pout.dtype(), pout.device());
  long long batch = 1;
  for (int i = 0; i < nb; ++i) batch *= pin.sizes()[i];
  std::vector<long long> n;
  for (size_t k = 0; k < dims.size(); ++k) {
    const bool last = k + 1 == dims.size();
    // the halved dim's logical length: the real side's size
    n.push_back(last && kind == Kind::kC2R ? pout.sizes()[nb + k] : pin.sizes()[nb + k]);
  }
  const bool dbl = in.dtype() == DType::kFloat64 || in.dtype() == DType::kComplex128;
  const cufftType type = TypeOf(kind, dbl);
  {
    std::lock_guard<std::mutex> lock(PlanMutex());
    Plan& p = PlanFor(type, n, batch, dev);
    const Tensor work = p.work ? Empty(DimVector{static_cast<int64_t>(p.work)}, DType::kUInt8, out.device()) : Tensor();
    OF_CUFFT_CHECK(cufftSetStream(p.handle, static_cast<cudaStream_t>(Stream(dev))));
    OF_CUFFT_CHECK(cufftSetWorkArea(p.handle, work.defined() ? work.raw_ptr() : nullptr));
    void* ip = pin.raw_ptr();
    void* op = target.raw_ptr();
    const int dir = forward ? CUFFT_FORWARD : CUFFT_INVERSE;
    switch (type) {
      case CUFFT_C2C: OF_CUFFT_CHECK(cufftExecC2C(p.handle, (cufftComplex*)ip, (cufftComplex*)op, dir)); break;
      case CUFFT_Z2Z:
        OF_CUFFT_CHECK(cufftExecZ2Z(p.handle, (cufftDoubleComplex*)ip, (cufftDoubleComplex*)op, dir));
        break;
      case CUFFT_R2C: OF_CUFFT_CHECK(cufftExecR2C(p.handle, (cufftReal*)ip, (cufftComplex*)op)); break;
      case CUFFT_D2Z: OF_CUFFT_CHECK(cufftExecD2Z(p.handle, (cufftDoubleReal*)ip, (cufftDoubleComplex*)op)); break;
      case CUFFT_C2R: OF_CUFFT_CHECK(cufftExecC2R(p.handle, (cufftComplex*)ip, (cufftReal*)op)); break;
      case CUFFT_Z2D: OF_CUFFT_CHECK(cufftExecZ2D(p.handle, (cufftDoubleComplex*)ip, (cufftDoubleReal*)op)); break;
      default: break;
    }
    // `work` is freed here; the allocator reuses it only for work queued after this transform.
  }
  if (!target.is_same(pout)) CopyInto(pout, target);
}

// dims split into [leading..., last three].
DimVector Slice(const DimVector& d, size_t begin, size_t end) {
  DimVector r;
  for (size_t i = begin; i < end; ++i) r.push_back(d[i]);
  return r;
}
DimVector Head(const DimVector& d) { return Slice(d, 0, d.size() - std::min<size_t>(3, d.size())); }
DimVector Tail(const DimVector& d) { return Slice(d, d.size() - std::min<size_t>(3, d.size()), d.size()); }

void C2cPasses(const Tensor& in, const Tensor& out, DimVector dims, bool forward) {
  Pass(Kind::kC2C, in, out, Tail(dims), forward);
  for (DimVector rest = Head(dims); !rest.empty(); rest = Head(rest)) Pass(Kind::kC2C, out, out, Tail(rest), forward);
}

void FftC2c(const Tensor& in, const Tensor& out, const DimVector& dims, bool forward, double scale) {
  C2cPasses(in, out, dims, forward);
  ScaleInPlace(out, scale);
}

void FftR2c(const Tensor& in, const Tensor& out, const DimVector& dims, double scale) {
  Pass(Kind::kR2C, in, out, Tail(dims), true);
  if (dims.size() > 3) C2cPasses(out, out, Head(dims), true);
  ScaleInPlace(out, scale);
}

void FftC2r(const Tensor& in, const Tensor& out, const DimVector& dims, double scale) {
  Tensor src = in;
  if (dims.size() > 3) {  // the leading dims first (complex to complex), then the real pass
    src = Empty(in.sizes(), in.dtype(), in.device());
    C2cPasses(in, src, Head(dims), false);
  }
  Pass(Kind::kC2R, src, out, Tail(dims), false);
  ScaleInPlace(out, scale);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterFftKernels() {
  kernels::RegisterKernel<kernels::FftC2cKernel>(DeviceType::kCUDA, &FftC2c);
  kernels::RegisterKernel<kernels::FftR2cKernel>(DeviceType::kCUDA, &FftR2c);
  kernels::RegisterKernel<kernels::FftC2rKernel>(DeviceType::kCUDA, &FftC2r);
}

#endif  // ONEFLOW_WITH_CUFFT

}  // namespace oneflow::cuda
