// Philox-driven fills (random_fill.h). Each parallel chunk generates its counter blocks in
// batches of 64 (256 words, L1-resident), turns the words into values with loops the compiler
// vectorises, and stores them.
#include "kernels/random_fill.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/parallel.h"
#include "core/philox.h"
#include "kernels/random_units.h"

// Note [Vector libm]: glibc's libmvec has SIMD variants of log/exp/sin/cos. <math.h> declares
// them to GCC's vectoriser only under -ffast-math; declaring the scalar functions with the simd
// attribute here lets the transform loops below call the vector versions without fast-math.
// This file is compiled with -fno-math-errno (CMakeLists.txt) so that sqrt does not branch.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define OF_SIMD_MATH __attribute__((__simd__("notinbranch")))
extern "C" {
OF_SIMD_MATH float logf(float) noexcept;
OF_SIMD_MATH float expf(float) noexcept;
OF_SIMD_MATH float sinf(float) noexcept;
OF_SIMD_MATH float cosf(float) noexcept;
OF_SIMD_MATH double log(double) noexcept;
OF_SIMD_MATH double exp(double) noexcept;
OF_SIMD_MATH double sin(double) noexcept;
OF_SIMD_MATH double cos(double) noexcept;
}
#endif

namespace oneflow {

namespace {

constexpr int64_t kBatchBlocks = kRandBatchBlocks;
constexpr int64_t kBatch = 4 * kBatchBlocks;  // words per batch
constexpr int64_t kGrainBlocks = 8192;        // at least 32K words per thread
constexpr double kTwoPi = 6.283185307179586476925;
constexpr double kPi = 3.141592653589793238463;

// Calls body(words, first, count) over [0, n) in batches: batch q holds the words of blocks
// [64 q, 64 q + 64) (fewer in the last one), so batch boundaries, like the words themselves,
// do not depend on how threads split the work. Element first + k owns words [k*W, (k+1)*W) of
// `words`; the batch has whole blocks, so words past the last element may be read.
template <int W, typename Body>
void ForEachBatch(int64_t n, PhiloxSeed s, const Body& body) {
  constexpr int64_t kPer = 4 / W;
  const int64_t blocks = (n + kPer - 1) / kPer;
  const int64_t batches = (blocks + kBatchBlocks - 1) / kBatchBlocks;
  ParallelFor(0, batches, kGrainBlocks / kBatchBlocks, [&](int64_t q0, int64_t q1) {
    alignas(64) uint32_t words[kBatch];
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t b = q * kBatchBlocks, m = std::min(kBatchBlocks, blocks - b);
      PhiloxFill(s.seed, s.offset + b, 0, m, words);
      const int64_t first = b * kPer;
      body(words, first, std::min(n, (b + m) * kPer) - first);
    }
  });
}

}  // namespace

uint64_t BlocksFor(int64_t n, int words_per_element) {
  const int64_t per = 4 / words_per_element;
  return uint64_t((n + per - 1) / per);
}

namespace {

// Standard normals for the `cnt` values of a batch into v: Box-Muller on the pairs (j, j + h),
// h = cnt / 2, so that loads and stores stay contiguous; an odd last value takes its angle from
// the batch's next (spare) word. Pairs are fixed by the batch, which the thread split can't move.
template <typename T>
void StandardNormal(const uint32_t* w, int64_t cnt, RandCompute<T>* v) {
  using C = RandCompute<T>;
  alignas(64) C r[kBatch / 2 + 1], t[kBatch / 2 + 1];
  const int64_t h = cnt / 2, odd = cnt % 2;
  for (int64_t j = 0; j < h; ++j) r[j] = std::sqrt(C(-2) * std::log(RandUnit<T>(w, j, true)));
  for (int64_t j = 0; j < h; ++j) t[j] = C(kTwoPi) * RandUnit<T>(w, j + h, false);
  for (int64_t j = 0; j < h; ++j) v[j] = r[j] * std::cos(t[j]);
  for (int64_t j = 0; j < h; ++j) v[j + h] = r[j] * std::sin(t[j]);
  if (odd) {
    const C radius = std::sqrt(C(-2) * std::log(RandUnit<T>(w, cnt - 1, true)));
    v[cnt - 1] = radius * std::cos(C(kTwoPi) * RandUnit<T>(w, cnt, false));
  }
}

template <typename T>
void Continuous(T* out, int64_t n, RandDist dist, double a, double b, Generator& g) {
  using C = RandCompute<T>;
  const PhiloxSeed seed = g.Reserve(BlocksFor(n, kRandWords<T>));
  const C ca = C(a), cb = C(b), span = C(b - a), inv_rate = C(-1.0 / a);
  ForEachBatch<kRandWords<T>>(n, seed, [&](const uint32_t* w, int64_t first, int64_t cnt) {
    alignas(64) C v[kBatch];
    T* o = out + first;
    switch (dist) {
      case RandDist::kUniform:
        for (int64_t k = 0; k < cnt; ++k) v[k] = ca + span * RandUnit<T>(w, k, false);
        break;
      case RandDist::kNormal:
        StandardNormal<T>(w, cnt, v);
        for (int64_t k = 0; k < cnt; ++k) v[k] = ca + cb * v[k];
        break;
      case RandDist::kLogNormal:
        StandardNormal<T>(w, cnt, v);
        for (int64_t k = 0; k < cnt; ++k) v[k] = std::exp(ca + cb * v[k]);
        break;
      case RandDist::kExponential:
        for (int64_t k = 0; k < cnt; ++k) v[k] = inv_rate * std::log(RandUnit<T>(w, k, true));
        break;
      case RandDist::kCauchy: {
        // tan(pi (u - 1/2)) as sin/cos: libmvec has no tan before glibc 2.35.
        alignas(64) C s[kBatch], c[kBatch];
        for (int64_t k = 0; k < cnt; ++k) v[k] = C(kPi) * (RandUnit<T>(w, k, true) - C(0.5));
        for (int64_t k = 0; k < cnt; ++k) s[k] = std::sin(v[k]);
        for (int64_t k = 0; k < cnt; ++k) c[k] = std::cos(v[k]);
        for (int64_t k = 0; k < cnt; ++k) v[k] = ca + cb * (s[k] / c[k]);
        break;
      }
    }
    for (int64_t k = 0; k < cnt; ++k) o[k] = static_cast<T>(v[k]);
  });
}

template <typename T>
void Integers(T* out, int64_t n, int64_t from, uint64_t range, Generator& g) {
  // 32-bit words suffice (and are faster) for ranges up to 2^32; larger ones take two words.
  if (range <= (uint64_t(1) << 32)) {
    const PhiloxSeed seed = g.Reserve(BlocksFor(n, 1));
    ForEachBatch<1>(n, seed, [&](const uint32_t* w, int64_t first, int64_t cnt) {
      for (int64_t k = 0; k < cnt; ++k)
        out[first + k] = static_cast<T>(static_cast<OpMath<T>>(from + int64_t(w[k] % range)));
    });
  } else {
    const PhiloxSeed seed = g.Reserve(BlocksFor(n, 2));
    ForEachBatch<2>(n, seed, [&](const uint32_t* w, int64_t first, int64_t cnt) {
      for (int64_t k = 0; k < cnt; ++k) {
        const uint64_t x = uint64_t(w[2 * k]) << 32 | w[2 * k + 1];
        const uint64_t r = range == 0 ? x : x % range;  // range 0: the full 2^64
        out[first + k] = static_cast<T>(static_cast<OpMath<T>>(int64_t(uint64_t(from) + r)));
      }
    });
  }
}

template <typename T>
void Bernoulli(T* out, int64_t n, double p, const float* probs, Generator& g) {
  const PhiloxSeed seed = g.Reserve(BlocksFor(n, 1));
  // One 32-bit word per draw. Scalar p: w < p * 2^32 (p = 1 always, p = 0 never; p is resolved
  // to 2^-32). Per-element p: a 24-bit uniform < p, as PyTorch's CPU kernel.
  const int64_t threshold = int64_t(std::ldexp(p, 32));
  ForEachBatch<1>(n, seed, [&](const uint32_t* w, int64_t first, int64_t cnt) {
    T* o = out + first;
    if (probs) {
      const float* pk = probs + first;
      for (int64_t k = 0; k < cnt; ++k)
        o[k] = static_cast<T>(static_cast<OpMath<T>>(RandUnit<float>(w, k, false) < pk[k] ? 1 : 0));
    } else {
      for (int64_t k = 0; k < cnt; ++k)
        o[k] = static_cast<T>(static_cast<OpMath<T>>(int64_t(w[k]) < threshold ? 1 : 0));
    }
  });
}

template <typename T>
void Geometric(T* out, int64_t n, double p, Generator& g) {
  const PhiloxSeed seed = g.Reserve(BlocksFor(n, 2));
  const double inv_log_q = 1.0 / std::log1p(-p);
  ForEachBatch<2>(n, seed, [&](const uint32_t* w, int64_t first, int64_t cnt) {
    for (int64_t k = 0; k < cnt; ++k) {
      // P(X > m) = q^m: X = ceil(log u / log q) for u uniform on (0, 1).
      const double x = std::ceil(std::log(RandUnit<double>(w, k, true)) * inv_log_q);
      out[first + k] = static_cast<T>(static_cast<OpMath<T>>(std::max(x, 1.0)));
    }
  });
}

void FillContinuousCpu(const Tensor& out, RandDist dist, double a, double b, Generator& g) {
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    Continuous<T>(out.data<T>(), out.numel(), dist, a, b, g);
  });
}

void FillIntegersCpu(const Tensor& out, int64_t from, uint64_t range, Generator& g) {
  DispatchAll(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    Integers<T>(out.data<T>(), out.numel(), from, range, g);
  });
}

void FillBernoulliCpu(const Tensor& out, double p, const Tensor& probs, Generator& g) {
  DispatchAll(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    Bernoulli<T>(out.data<T>(), out.numel(), p, probs.defined() ? probs.data<float>() : nullptr, g);
  });
}

void FillGeometricCpu(const Tensor& out, double p, Generator& g) {
  DispatchNumber(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    Geometric<T>(out.data<T>(), out.numel(), p, g);
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::FillContinuousKernel>(DeviceType::kCPU, &FillContinuousCpu);
  kernels::RegisterKernel<kernels::FillIntegersKernel>(DeviceType::kCPU, &FillIntegersCpu);
  kernels::RegisterKernel<kernels::FillBernoulliKernel>(DeviceType::kCPU, &FillBernoulliCpu);
  kernels::RegisterKernel<kernels::FillGeometricKernel>(DeviceType::kCPU, &FillGeometricCpu);
  return true;
}();

}  // namespace

void FillContinuous(const Tensor& out, RandDist dist, double a, double b, Generator& g) {
  kernels::CallKernel<kernels::FillContinuousKernel>(out.device(), out, dist, a, b, g);
}
void FillIntegers(const Tensor& out, int64_t from, uint64_t range, Generator& g) {
  kernels::CallKernel<kernels::FillIntegersKernel>(out.device(), out, from, range, g);
}
void FillBernoulli(const Tensor& out, double p, const Tensor& probs, Generator& g) {
  kernels::CallKernel<kernels::FillBernoulliKernel>(out.device(), out, p, probs, g);
}
void FillGeometric(const Tensor& out, double p, Generator& g) {
  kernels::CallKernel<kernels::FillGeometricKernel>(out.device(), out, p, g);
}

void RandomWords(uint32_t* out, int64_t n, Generator& g) {
  const PhiloxSeed seed = g.Reserve(BlocksFor(n, 1));
  ForEachBatch<1>(n, seed, [&](const uint32_t* w, int64_t first, int64_t cnt) {
    std::copy(w, w + cnt, out + first);
  });
}

uint32_t ElementStream::NextWord() {
  if (k_ % 4 == 0) {
    // One block: PhiloxFill's (lo, hi) = (offset + element, block index) counter and seed key,
    // without its 64-lane batch (which computes 64 blocks for one).
    const uint64_t lo = s_.offset + e_, hi = k_ / 4;
    buf_[0] = uint32_t(lo);
    buf_[1] = uint32_t(lo >> 32);
    buf_[2] = uint32_t(hi);
    buf_[3] = uint32_t(hi >> 32);
    Philox4x32::Block(buf_, uint32_t(s_.seed), uint32_t(s_.seed >> 32));
  }
  return buf_[k_++ % 4];
}

double ElementStream::NextUniform() {
  const uint64_t x = (uint64_t(NextWord()) << 32 | NextWord()) >> 11;
  return double(x) * 0x1.0p-53;
}

double ElementStream::NextOpenUniform() {
  const uint64_t x = (uint64_t(NextWord()) << 32 | NextWord()) >> 11;
  return (double(x) + 0.5) * 0x1.0p-53;
}

}  // namespace oneflow
