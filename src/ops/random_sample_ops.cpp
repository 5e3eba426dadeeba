// Sampling ops whose elements take a data-dependent number of draws: multinomial, poisson,
// binomial, standard_gamma.
// Each row / element owns one Philox counter and draws from it sequentially (ElementStream), so
// rows and elements run in parallel and the result does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/parallel.h"
#include "ops/random_util.h"
#include "decl/any.h"
#include "decl/binomial.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/lt.h"
#include "decl/multinomial.h"
#include "decl/poisson.h"
#include "decl/standard_gamma.h"

namespace oneflow {

namespace {

// Poisson(lam): Knuth's product of uniforms for small rates; for lam >= 10 Hormann's
// transformed rejection with squeeze (PTRS, "The transformed rejection method for generating
// Poisson random variables", 1993), the method of numpy and PyTorch.
double SamplePoisson(double lam, ElementStream& s) {
  if (lam <= 0.0) return 0.0;
  if (lam < 10.0) {
    const double limit = std::exp(-lam);
    double prod = s.NextUniform();
    int64_t k = 0;
    while (prod > limit) {
      prod *= s.NextUniform();
      ++k;
    }
    return double(k);
  }
  const double slam = std::sqrt(lam), loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  while (true) {
    const double u = s.NextUniform() - 0.5, v = s.NextOpenUniform();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
        -lam + k * loglam - std::lgamma(k + 1))
      return k;
  }
}

// Binomial(n, p): with q = min(p, 1 - p), n q < 10 counts geometric waiting times between
// successes (about n q + 1 draws); otherwise Hormann's BTRS transformed rejection ("The
// generation of binomial random variates", 1993), PyTorch's and numpy's method; p > 1/2 samples
// the failures. n is taken as given (not rounded), NaN p gives NaN, p outside [0, 1] clamps.
double SampleBinomial(double n, double p, ElementStream& s) {
  if (p != p || n != n) return std::numeric_limits<double>::quiet_NaN();
  if (n <= 0.0 || p <= 0.0) return 0.0;
  if (p >= 1.0) return n;
  const bool flip = p > 0.5;
  const double q = flip ? 1.0 - p : p;
  double k = 0.0;
  if (n * q < 10.0) {
    const double log1mq = std::log1p(-q);
    double trials = 0.0;
    while (true) {
      trials += std::ceil(std::log(s.NextOpenUniform()) / log1mq);
      if (trials > n) break;
      k += 1.0;
    }
  } else {
    const double spq = std::sqrt(n * q * (1.0 - q));
    const double b = 1.15 + 2.53 * spq, a = -0.0873 + 0.0248 * b + 0.01 * q, c = n * q + 0.5;
    const double vr = 0.92 - 4.2 / b, alpha = (2.83 + 5.1 / b) * spq, lpq = std::log(q / (1.0 - q));
    const double m = std::floor((n + 1.0) * q), h = std::lgamma(m + 1.0) + std::lgamma(n - m + 1.0);
    while (true) {
      const double u = s.NextUniform() - 0.5, v = s.NextOpenUniform();
      const double us = 0.5 - std::fabs(u);
      k = std::floor((2.0 * a / us + b) * u + c);
      if (k < 0.0 || k > n) continue;
      if (us >= 0.07 && v <= vr) break;
      if (std::log(v * alpha / (a / (us * us) + b)) <= h - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) + (k - m) * lpq)
        break;
    }
  }
  return flip ? n - k : k;
}

// Gamma(alpha, 1): Marsaglia and Tsang's squeeze method ("A simple method for generating gamma
// variables", 2000) on a Box-Muller normal and a uniform per try; alpha < 1 draws
// Gamma(alpha + 1) * u^(1/alpha). alpha = 0 gives 0, NaN or a negative alpha NaN.
double SampleStandardGamma(double alpha, ElementStream& s) {
  if (alpha != alpha || alpha < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (alpha == 0.0) return 0.0;
  if (std::isinf(alpha)) return alpha;
  double boost = 1.0, a = alpha;
  if (a < 1.0) {
    boost = std::pow(s.NextOpenUniform(), 1.0 / a);
    a += 1.0;
  }
  const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    const double r = std::sqrt(-2.0 * std::log(s.NextOpenUniform()));
    const double x = r * std::cos(6.283185307179586 * s.NextUniform());
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = s.NextOpenUniform(), x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2 || std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v * boost;
  }
}

template <typename T>
void PoissonKernel(const T* rate, T* out, int64_t n, PhiloxSeed seed) {
  ParallelFor(0, n, 1024, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      ElementStream s(seed, uint64_t(i));
      out[i] = static_cast<T>(
          static_cast<OpMath<T>>(SamplePoisson(double(static_cast<OpMath<T>>(rate[i])), s)));
    }
  });
}

// One row of multinomial. With replacement: inverse CDF by binary search. Without: the
// exponential race (Efraimidis-Spirakis): category i gets key p_i / E_i with E_i ~ Exp(1); the
// categories in decreasing key order are a sample without replacement, in draw order.
void MultinomialRow(const double* p, int64_t n, int64_t k, bool replacement, ElementStream& s,
                    int64_t* out, std::vector<double>& work, std::vector<int64_t>& idx) {
  work.resize(n);
  if (replacement) {
    std::partial_sum(p, p + n, work.begin());
    const double total = work[n - 1];
    for (int64_t j = 0; j < k; ++j) {
      const double x = s.NextUniform() * total;
      // The first category whose cumulative mass exceeds x: zero-mass categories never win.
      out[j] =
          std::min<int64_t>(std::upper_bound(work.begin(), work.end(), x) - work.begin(), n - 1);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) work[i] = p[i] / -std::log(s.NextOpenUniform());
  idx.resize(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) {
    return work[a] > work[b] || (work[a] == work[b] && a < b);
  });
  std::copy(idx.begin(), idx.begin() + k, out);
}

}  // namespace

Tensor Poisson(const Tensor& input, const GeneratorPtr& generator) {
  OpScope scope("poisson");
  OF_CHECK(IsFloating(input.dtype()))
      << "poisson expects a floating point rate tensor, but got " << DTypeName(input.dtype());
  Generator& g = GeneratorFor(generator, input.device());
  // CUDA: drawn on the host from the device generator's counters (the CPU's numbers under the
  // same seed, as the other CUDA random ops), then moved; the draws are sequential per element.
  const bool cuda = input.device().type == DeviceType::kCUDA;
  Tensor out = Empty(input.sizes(), input.dtype(), cuda ? Device{} : input.device());
  if (IsMeta(out)) return out;
  Tensor rate = Contiguous(OnHost(input));
  OF_CHECK(!ItemOf(Any(Lt(rate, WrappedNumber(Scalar(0.0))), std::nullopt, false)).ToInt())
      << "invalid Poisson rate, expected rate to be non-negative";
  const PhiloxSeed seed = g.Reserve(uint64_t(out.numel()));
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    PoissonKernel<T>(rate.data<T>(), out.data<T>(), out.numel(), seed);
  });
  return cuda ? MovedTo(out, input.device()) : out;
}

Tensor StandardGamma(const Tensor& input, const GeneratorPtr& generator) {
  OpScope scope("_standard_gamma");
  OF_CHECK(IsFloating(input.dtype())) << "expected a floating point concentration tensor, got "
                                      << DTypeName(input.dtype());
  Generator& g = GeneratorFor(generator, input.device());
  // CUDA: drawn on the host from the device generator's counters, then moved (as poisson).
  const bool cuda = input.device().type == DeviceType::kCUDA;
  Tensor out = Empty(input.sizes(), input.dtype(), cuda ? Device{} : input.device());
  if (IsMeta(out)) return out;
  const Tensor alpha = Contiguous(CastTo(OnHost(input), DType::kFloat64));
  const PhiloxSeed seed = g.Reserve(uint64_t(out.numel()));
  const double* ap = alpha.data<double>();
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* o = out.data<T>();
    // The smallest normal number of T at least, for alpha > 0 (PyTorch's clamp): a boosted draw
    // of a tiny alpha underflows (u^(1/alpha)), and log-densities of 0 are -inf.
    const double tiny = static_cast<double>(std::numeric_limits<T>::min());
    ParallelFor(0, out.numel(), 256, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        ElementStream s(seed, uint64_t(i));
        const double x = SampleStandardGamma(ap[i], s);
        o[i] = static_cast<T>(static_cast<OpMath<T>>(ap[i] > 0.0 ? std::max(x, tiny) : x));
      }
    });
  });
  return cuda ? MovedTo(out, input.device()) : out;
}

Tensor Binomial(const Tensor& count, const Tensor& prob, const GeneratorPtr& generator) {
  OpScope scope("binomial");
  OF_CHECK_VALUE(IsFloating(count.dtype()))
      << "binomial only supports floating-point dtypes for count, got: " << DTypeName(count.dtype());
  OF_CHECK_VALUE(IsFloating(prob.dtype()))
      << "binomial only supports floating-point dtypes for prob, got: " << DTypeName(prob.dtype());
  // PyTorch samples in one dtype and refuses a mixed pair ("Found dtype Float but expected Double").
  OF_CHECK(count.dtype() == prob.dtype()) << "expected count and prob of the same dtype, got "
                                          << DTypeName(count.dtype()) << " and " << DTypeName(prob.dtype());
  OF_CHECK(count.device() == prob.device()) << "expected count and prob on the same device, got "
                                            << count.device().str() << " and " << prob.device().str();
  const DimVector shape = BroadcastShapes(count.sizes(), prob.sizes());
  const DType dt = PromoteTypes(count.dtype(), prob.dtype());
  Generator& g = GeneratorFor(generator, count.device());
  // CUDA: drawn on the host from the device generator's counters, then moved (as poisson).
  const bool cuda = count.device().type == DeviceType::kCUDA;
  Tensor out = Empty(shape, dt, cuda ? Device{} : count.device());
  if (IsMeta(out)) return out;
  const Tensor n = Contiguous(CastTo(Expand(OnHost(count), shape), DType::kFloat64));
  const Tensor p = Contiguous(CastTo(Expand(OnHost(prob), shape), DType::kFloat64));
  const PhiloxSeed seed = g.Reserve(uint64_t(out.numel()));
  const double* np = n.data<double>();
  const double* pp = p.data<double>();
  DispatchFloat(dt, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* o = out.data<T>();
    ParallelFor(0, out.numel(), 256, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        ElementStream s(seed, uint64_t(i));
        o[i] = static_cast<T>(static_cast<OpMath<T>>(SampleBinomial(np[i], pp[i], s)));
      }
    });
  });
  return cuda ? MovedTo(out, count.device()) : out;
}

Tensor Multinomial(const Tensor& input, int64_t num_samples, bool replacement,
                   const GeneratorPtr& generator) {
  OpScope scope("multinomial");
  OF_CHECK(input.dim() == 1 || input.dim() == 2) << "prob_dist must be 1 or 2 dim";
  OF_CHECK(IsFloating(input.dtype()))
      << "multinomial only supports floating-point dtypes for input, got: "
      << DTypeName(input.dtype());
  OF_CHECK(num_samples > 0) << "cannot sample n_sample <= 0 samples";
  const int64_t n = input.sizes().back(), rows = input.dim() == 2 ? input.sizes()[0] : 1;
  OF_CHECK(replacement || num_samples <= n)
      << "cannot sample n_sample > prob_dist.size(-1) samples without replacement";
  OF_CHECK(n <= (int64_t(1) << 24)) << "number of categories cannot exceed 2^24";
  Generator& g = GeneratorFor(generator, input.device());
  // CUDA: checked and drawn on the host (as poisson), the samples moved to the device.
  const bool cuda = input.device().type == DeviceType::kCUDA;
  Tensor out = Empty(input.dim() == 2 ? DimVector{rows, num_samples} : DimVector{num_samples},
                     DType::kInt64, cuda ? Device{} : input.device());
  if (IsMeta(out)) return out;
  if (out.numel() == 0) return cuda ? MovedTo(out, input.device()) : out;
  Tensor p = CastTo(Contiguous(OnHost(input)), DType::kFloat64);
  p = Contiguous(p);
  const double* pd = p.data<double>();
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = pd[r * n + i];
      OF_CHECK(std::isfinite(v) && v >= 0.0)
          << "probability tensor contains either `inf`, `nan` or element < 0";
      sum += v;
    }
    OF_CHECK(sum > 0.0) << "invalid multinomial distribution (sum of probabilities <= 0)";
  }
  const PhiloxSeed seed = g.Reserve(uint64_t(rows));
  int64_t* o = out.data<int64_t>();
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, num_samples));
  ParallelFor(0, rows, grain, [&](int64_t b, int64_t e) {
    std::vector<double> work;
    std::vector<int64_t> idx;
    for (int64_t r = b; r < e; ++r) {
      ElementStream s(seed, uint64_t(r));
      MultinomialRow(pd + r * n, n, num_samples, replacement, s, o + r * num_samples, work, idx);
    }
  });
  return cuda ? MovedTo(out, input.device()) : out;
}

}  // namespace oneflow
