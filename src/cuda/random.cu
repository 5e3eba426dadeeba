// Random fills and dropout on CUDA (cuda/ops.h). The host reserves the counter blocks from the
// device's generator exactly as the CPU fill would (Note [Philox offsets]); each CUDA thread then
// computes its element from the Philox blocks it needs, with the CPU's word layout and value
// transforms (kernels/random_units.h). Uniforms, integers, Bernoulli draws and dropout masks are
// therefore the CPU's bit for bit under the same seed; normals and other transcendental
// transforms agree to the device's libm accuracy (a few ulp).
#include <cuda_runtime.h>

#include <cmath>

#include "core/philox.h"
#include "cuda/ops.h"
#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "kernels/random_fill.h"
#include "kernels/random_units.h"

namespace oneflow::cuda {

namespace {

constexpr int kThreads = kGridThreads;

// Word `k` of the stream that starts at counter block `offset` (hi word 0, as PhiloxFill).
struct Words {
  uint64_t seed, offset;
  __device__ uint32_t operator()(int64_t k) const {
    uint32_t r[4];
    Block(k / 4, r);
    return r[k % 4];
  }
  // Words 4b .. 4b + 3 (one Philox block).
  __device__ void Block(int64_t b, uint32_t r[4]) const {
    const uint64_t c = offset + static_cast<uint64_t>(b);
    r[0] = static_cast<uint32_t>(c), r[1] = static_cast<uint32_t>(c >> 32), r[2] = r[3] = 0;
    Philox4x32::Block(r, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  }
};

// Note [One Philox block per thread]: the kernels whose element e takes word e alone (dropout,
// its noise, Bernoulli) give each thread the four elements of one block, so each Philox block
// is computed once rather than four times; dropout and its backward then also move those four
// elements with one vector access each when the pointers allow.
template <typename T>
struct alignas(4 * sizeof(T)) Pack4 {
  T v[4];
};

inline bool Aligned4(const void* p, size_t elem) { return reinterpret_cast<uintptr_t>(p) % (4 * elem) == 0; }

// Element e's [0, 1) value (W words per element).
template <typename T>
__device__ RandCompute<T> UnitAt(const Words& w, int64_t e, bool open) {
  constexpr int W = kRandWords<T>;
  uint32_t v[2] = {w(e * W), W == 2 ? w(e * W + 1) : 0u};
  return RandUnit<T>(v, 0, open);
}

__device__ inline float Sqrt(float x) { return sqrtf(x); }
__device__ inline double Sqrt(double x) { return sqrt(x); }
__device__ inline float Log(float x) { return logf(x); }
__device__ inline double Log(double x) { return log(x); }
__device__ inline float Exp(float x) { return expf(x); }
__device__ inline double Exp(double x) { return exp(x); }
__device__ inline float Sin(float x) { return sinf(x); }
__device__ inline double Sin(double x) { return sin(x); }
__device__ inline float Cos(float x) { return cosf(x); }
__device__ inline double Cos(double x) { return cos(x); }

// Element e of a standard normal fill of n values: the Box-Muller pairs of the CPU's batches.
template <typename T>
__device__ RandCompute<T> StandardNormalAt(const Words& w, int64_t e, int64_t n) {
  using C = RandCompute<T>;
  constexpr int64_t kPerBatch = kRandBatchBlocks * (4 / kRandWords<T>);
  const int64_t first = e / kPerBatch * kPerBatch;
  const int64_t cnt = n - first < kPerBatch ? n - first : kPerBatch, h = cnt / 2, k = e - first;
  const C two_pi = C(6.283185307179586476925);
  if (k < 2 * h) {
    const int64_t j = k < h ? k : k - h;
    const C r = Sqrt(C(-2) * Log(UnitAt<T>(w, first + j, true)));
    const C t = two_pi * UnitAt<T>(w, first + j + h, false);
    return k < h ? r * Cos(t) : r * Sin(t);
  }
  // the odd last value: its angle from the batch's spare word
  const C r = Sqrt(C(-2) * Log(UnitAt<T>(w, first + cnt - 1, true)));
  return r * Cos(two_pi * UnitAt<T>(w, first + cnt, false));
}

template <typename T>
__global__ void ContinuousKernel(T* out, int64_t n, Words w, int dist, double a, double b) {
  using C = RandCompute<T>;
  const C ca = C(a), cb = C(b), span = C(b - a), inv_rate = C(-1.0 / a);
  OF_GRID_LOOP(e, n) {
    C v;
    switch (dist) {
      case 0: v = ca + span * UnitAt<T>(w, e, false); break;              // uniform
      case 1: v = ca + cb * StandardNormalAt<T>(w, e, n); break;          // normal
      case 2: v = inv_rate * Log(UnitAt<T>(w, e, true)); break;           // exponential
      case 3: {                                                           // cauchy
        const C u = C(3.141592653589793238463) * (UnitAt<T>(w, e, true) - C(0.5));
        v = ca + cb * (Sin(u) / Cos(u));
        break;
      }
      default: v = Exp(ca + cb * StandardNormalAt<T>(w, e, n)); break;    // log-normal
    }
    out[e] = static_cast<T>(v);
  }
}

template <typename T>
__global__ void IntegersKernel(T* out, int64_t n, Words w, int64_t from, uint64_t range) {
  OF_GRID_LOOP(e, n) {
    int64_t v;
    if (range <= (uint64_t(1) << 32)) {  // one word, as the CPU (range >= 1)
      v = from + static_cast<int64_t>(w(e) % range);
    } else {
      const uint64_t x = uint64_t(w(2 * e)) << 32 | w(2 * e + 1);
      v = static_cast<int64_t>(uint64_t(from) + (range == 0 ? x : x % range));
    }
    out[e] = static_cast<T>(static_cast<OpMath<T>>(v));
  }
}

template <typename T>
__global__ void BernoulliKernel(T* out, int64_t n, Words w, int64_t threshold, const float* probs) {
  OF_GRID_LOOP(b, (n + 3) / 4) {  // Note [One Philox block per thread]
    uint32_t r[4];
    w.Block(b, r);
    for (int k = 0; k < 4 && 4 * b + k < n; ++k) {
      const int64_t e = 4 * b + k;
      const bool one = probs ? RandUnit<float>(&r[k], 0, false) < probs[e] : int64_t(r[k]) < threshold;
      out[e] = static_cast<T>(static_cast<OpMath<T>>(one ? 1 : 0));
    }
  }
}

template <typename T>
__global__ void GeometricKernel(T* out, int64_t n, Words w, double inv_log_q) {
  OF_GRID_LOOP(e, n) {
    const double x = ceil(log(UnitAt<double>(w, e, true)) * inv_log_q);
    out[e] = static_cast<T>(static_cast<OpMath<T>>(x > 1.0 ? x : 1.0));
  }
}

// Dropout's words: element i keeps when (word i >> 8) < bound (ops/dropout_ops.cpp). `vec`: x,
// out (4 T) and mask (4 bytes) are aligned for the vector accesses.
template <typename T>
__global__ void DropoutKernel(const T* x, T* out, bool* mask, int64_t n, Words w, uint32_t bound, double scale,
                              bool vec) {
  using M = OpMath<T>;
  const M sc = static_cast<M>(scale);
  OF_GRID_LOOP(b, (n + 3) / 4) {
    uint32_t r[4];
    w.Block(b, r);
    const int64_t e = 4 * b;
    if (vec && e + 4 <= n) {
      const Pack4<T> in = *reinterpret_cast<const Pack4<T>*>(x + e);
      Pack4<T> o;
      Pack4<bool> m;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        m.v[k] = (r[k] >> 8) < bound;
        o.v[k] = static_cast<T>(m.v[k] ? static_cast<M>(in.v[k]) * sc : M(0));
      }
      *reinterpret_cast<Pack4<T>*>(out + e) = o;
      *reinterpret_cast<Pack4<bool>*>(mask + e) = m;
    } else {
      for (int k = 0; k < 4 && e + k < n; ++k) {
        const bool keep = (r[k] >> 8) < bound;
        mask[e + k] = keep;
        out[e + k] = static_cast<T>(keep ? static_cast<M>(x[e + k]) * sc : M(0));
      }
    }
  }
}

template <typename T>
__global__ void DropoutGradKernel(const T* g, const bool* mask, T* out, int64_t n, double scale, bool vec) {
  using M = OpMath<T>;
  const M sc = static_cast<M>(scale);
  OF_GRID_LOOP(b, (n + 3) / 4) {
    const int64_t e = 4 * b;
    if (vec && e + 4 <= n) {
      const Pack4<T> in = *reinterpret_cast<const Pack4<T>*>(g + e);
      const Pack4<bool> m = *reinterpret_cast<const Pack4<bool>*>(mask + e);
      Pack4<T> o;
#pragma unroll
      for (int k = 0; k < 4; ++k) o.v[k] = static_cast<T>(m.v[k] ? static_cast<M>(in.v[k]) * sc : M(0));
      *reinterpret_cast<Pack4<T>*>(out + e) = o;
    } else {
      for (int k = 0; k < 4 && e + k < n; ++k)
        out[e + k] = static_cast<T>(mask[e + k] ? static_cast<M>(g[e + k]) * sc : M(0));
    }
  }
}

template <typename T>
__global__ void NoiseKernel(T* out, int64_t n, Words w, uint32_t bound, double keep_value) {
  const T kv = static_cast<T>(static_cast<OpMath<T>>(keep_value)), zero = static_cast<T>(0.0f);
  OF_GRID_LOOP(b, (n + 3) / 4) {
    uint32_t r[4];
    w.Block(b, r);
    for (int k = 0; k < 4 && 4 * b + k < n; ++k) out[4 * b + k] = (r[k] >> 8) < bound ? kv : zero;
  }
}

// per_thread: elements each thread's step covers (4 under Note [One Philox block per thread]).
template <typename F>
void Launch(const Tensor& out, const char* what, const F& f, int per_thread = 1) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  f(GridFor((n + per_thread - 1) / per_thread), static_cast<cudaStream_t>(Stream(dev)), n);
  CheckLaunch(what);
}

void RandomContinuous(const Tensor& out, int dist, double a, double b, uint64_t seed, uint64_t offset) {
  Launch(out, "a random fill kernel", [&](unsigned blocks, cudaStream_t st, int64_t n) {
    DispatchFloat(out.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      ContinuousKernel<T><<<blocks, kThreads, 0, st>>>(out.ptr<T>(), n, Words{seed, offset}, dist, a, b);
    });
  });
}

void RandomIntegers(const Tensor& out, int64_t from, uint64_t range, uint64_t seed, uint64_t offset) {
  Launch(out, "a random integer kernel", [&](unsigned blocks, cudaStream_t st, int64_t n) {
    DispatchAll(out.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      IntegersKernel<T><<<blocks, kThreads, 0, st>>>(out.ptr<T>(), n, Words{seed, offset}, from, range);
    });
  });
}

void RandomBernoulli(const Tensor& out, double p, const Tensor& probs, uint64_t seed, uint64_t offset) {
  const int64_t threshold = static_cast<int64_t>(std::ldexp(p, 32));
  Launch(out, "the bernoulli kernel", [&](unsigned blocks, cudaStream_t st, int64_t n) {
    DispatchAll(out.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      BernoulliKernel<T><<<blocks, kThreads, 0, st>>>(out.ptr<T>(), n, Words{seed, offset}, threshold,
                                                      probs.defined() ? probs.ptr<float>() : nullptr);
    });
  }, 4);
}

void RandomGeometric(const Tensor& out, double p, uint64_t seed, uint64_t offset) {
  const double inv_log_q = 1.0 / std::log1p(-p);
  Launch(out, "the geometric kernel", [&](unsigned blocks, cudaStream_t st, int64_t n) {
    DispatchNumber(out.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      GeometricKernel<T><<<blocks, kThreads, 0, st>>>(out.ptr<T>(), n, Words{seed, offset}, inv_log_q);
    });
  });
}

// The fills of kernels/random_fill.h: the reservation of the CPU kernels, then one launch.
void FillContinuousCuda(const Tensor& out, RandDist dist, double a, double b, Generator& g) {
  const PhiloxSeed s = g.Reserve(BlocksFor(out.numel(), out.dtype() == DType::kFloat64 ? 2 : 1));
  RandomContinuous(out, static_cast<int>(dist), a, b, s.seed, s.offset);
}
void FillIntegersCuda(const Tensor& out, int64_t from, uint64_t range, Generator& g) {
  const PhiloxSeed s = g.Reserve(BlocksFor(out.numel(), range <= (uint64_t(1) << 32) ? 1 : 2));
  RandomIntegers(out, from, range, s.seed, s.offset);
}
void FillBernoulliCuda(const Tensor& out, double p, const Tensor& probs, Generator& g) {
  const PhiloxSeed s = g.Reserve(BlocksFor(out.numel(), 1));
  RandomBernoulli(out, p, probs, s.seed, s.offset);
}
void FillGeometricCuda(const Tensor& out, double p, Generator& g) {
  const PhiloxSeed s = g.Reserve(BlocksFor(out.numel(), 2));
  RandomGeometric(out, p, s.seed, s.offset);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterRandomKernels() {
  kernels::RegisterKernel<kernels::FillContinuousKernel>(DeviceType::kCUDA, &FillContinuousCuda);
  kernels::RegisterKernel<kernels::FillIntegersKernel>(DeviceType::kCUDA, &FillIntegersCuda);
  kernels::RegisterKernel<kernels::FillBernoulliKernel>(DeviceType::kCUDA, &FillBernoulliCuda);
  kernels::RegisterKernel<kernels::FillGeometricKernel>(DeviceType::kCUDA, &FillGeometricCuda);
}

void Dropout(const Tensor& x, const Tensor& out, const Tensor& mask, uint32_t bound, double scale, uint64_t seed,
             uint64_t offset) {
  Launch(out, "the dropout kernel", [&](unsigned blocks, cudaStream_t st, int64_t n) {
    DispatchFloat(out.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      const bool vec = Aligned4(x.ptr<T>(), sizeof(T)) && Aligned4(out.ptr<T>(), sizeof(T)) &&
                       Aligned4(mask.ptr<bool>(), 1);
      DropoutKernel<T><<<blocks, kThreads, 0, st>>>(x.ptr<T>(), out.ptr<T>(), mask.ptr<bool>(), n,
                                                    Words{seed, offset}, bound, scale, vec);
    });
  }, 4);
}

void DropoutBackwardSameShape(const Tensor& grad, const Tensor& mask, double scale, const Tensor& out) {
  Launch(out, "the dropout backward kernel", [&](unsigned blocks, cudaStream_t st, int64_t n) {
    DispatchFloat(out.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      const bool vec = Aligned4(grad.ptr<T>(), sizeof(T)) && Aligned4(out.ptr<T>(), sizeof(T)) &&
                       Aligned4(mask.ptr<bool>(), 1);
      DropoutGradKernel<T><<<blocks, kThreads, 0, st>>>(grad.ptr<T>(), mask.ptr<bool>(), out.ptr<T>(), n,
                                                        scale, vec);
    });
  }, 4);
}

void BernoulliNoise(const Tensor& out, uint32_t bound, double keep_value, uint64_t seed, uint64_t offset) {
  Launch(out, "the dropout noise kernel", [&](unsigned blocks, cudaStream_t st, int64_t n) {
    DispatchFloat(out.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      NoiseKernel<T><<<blocks, kThreads, 0, st>>>(out.ptr<T>(), n, Words{seed, offset}, bound, keep_value);
    });
  }, 4);
}

}  // namespace oneflow::cuda
