// Random fills of contiguous buffers from a Philox stream (Note [Philox offsets] in
// core/generator.h). Every kernel reserves its counter blocks first and then fills chunks in
// parallel: element i's value depends only on (seed, offset, i), never on the thread count.
#pragma once
#include <cstdint>

#include "core/generator.h"
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// Continuous distributions of floating tensors (parameters a, b):
enum class RandDist {
  kUniform,      // U[a, b)
  kNormal,       // N(a, b^2), Box-Muller
  kExponential,  // rate a
  kCauchy,       // median a, scale b
  kLogNormal,    // exp(N(a, b^2))
};

// out: a contiguous floating tensor with data.
void FillContinuous(const Tensor& out, RandDist dist, double a, double b, Generator& g);
// Integers uniform in [from, from + range) (any dtype; range >= 1, up to 2^64 - 1).
void FillIntegers(const Tensor& out, int64_t from, uint64_t range, Generator& g);
// 1 with probability p, else 0 (any dtype). p: a double, or per element (a contiguous float32
// tensor of out's shape) when `probs` is defined.
void FillBernoulli(const Tensor& out, double p, const Tensor& probs, Generator& g);
// Number of trials up to the first success, each with probability p (values >= 1).
void FillGeometric(const Tensor& out, double p, Generator& g);
// n uniform 32-bit words (used by randperm's shuffle), generated in parallel.
void RandomWords(uint32_t* out, int64_t n, Generator& g);
// Counter blocks a fill of n elements reserves with `words_per_element` 32-bit words each (1, 2 or
// 4); every device's kernel reserves the same, so a generator's state does not depend on it.
uint64_t BlocksFor(int64_t n, int words_per_element);

// The kernel interfaces of the fills (Note [Kernel registry]): CPU in kernels/random_fill.cpp,
// CUDA in cuda/random.cu; each reserves its blocks from `g` itself.
namespace kernels {
struct FillContinuousKernel {
  static constexpr const char* kName = "fill_continuous";
  using Fn = void (*)(const Tensor& out, RandDist dist, double a, double b, Generator& g);
  using Writes = KernelWrites<0>;
};
struct FillIntegersKernel {
  static constexpr const char* kName = "fill_integers";
  using Fn = void (*)(const Tensor& out, int64_t from, uint64_t range, Generator& g);
  using Writes = KernelWrites<0>;
};
struct FillBernoulliKernel {
  static constexpr const char* kName = "fill_bernoulli";
  using Fn = void (*)(const Tensor& out, double p, const Tensor& probs, Generator& g);
  using Writes = KernelWrites<0>;
};
struct FillGeometricKernel {
  static constexpr const char* kName = "fill_geometric";
  using Fn = void (*)(const Tensor& out, double p, Generator& g);
  using Writes = KernelWrites<0>;
};
}  // namespace kernels

// Per-element streams with unbounded draws (poisson, multinomial): element e of a reservation
// draws word k from block (offset + e, k / 4). Sequential within one element.
class ElementStream {
 public:
  ElementStream(PhiloxSeed s, uint64_t element) : s_(s), e_(element) {}
  uint32_t NextWord();
  double NextUniform();      // [0, 1), 53 bits
  double NextOpenUniform();  // (0, 1)

 private:
  PhiloxSeed s_;
  uint64_t e_;
  uint64_t k_ = 0;
  uint32_t buf_[4];
};

}  // namespace oneflow
