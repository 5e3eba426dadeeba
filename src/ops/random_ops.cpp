// Random creation ops on the per-device generator (core/generator.h).
#include <cmath>
#include <numeric>

#include "core/generator.h"
#include "ops/copy.h"
#include "ops_decl.h"

namespace oneflow {

namespace {
Device Dev(const std::optional<Device>& d) { return d ? *d : Device(); }

// Draws doubles with `draw` into a float tensor of the requested dtype (sequential: reproducible
// independent of the thread count).
template <typename Draw>
Tensor Sample(const DimVector& size, DType dt, const std::optional<Device>& device, bool rg, Draw draw) {
  OF_CHECK(IsFloating(dt)) << "expected a floating point dtype, got " << DTypeName(dt);
  Tensor t = Empty(size, dt, Dev(device));
  if (t.device().type == DeviceType::kMeta) return t;
  Generator& g = DefaultGenerator(t.device());
  DispatchFloat(dt, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(static_cast<OpMath<T>>(draw(g)));
  });
  t.impl()->requires_grad_ = rg;
  return t;
}

double Uniform01(Generator& g) { return (g.NextU64() >> 11) * (1.0 / 9007199254740992.0); }
}  // namespace

Tensor Rand(const DimVector& size, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("rand");
  return Sample(size, dtype.value_or(DefaultFloatDType()), device, requires_grad, Uniform01);
}

Tensor Randn(const DimVector& size, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("randn");
  return Sample(size, dtype.value_or(DefaultFloatDType()), device, requires_grad, [](Generator& g) {
    std::normal_distribution<double> nd(0.0, 1.0);
    return nd(g.engine());
  });
}

Tensor Normal(double mean, double std, const DimVector& size, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("normal");
  OF_CHECK(std >= 0) << "normal expects std >= 0.0, but found std " << std;
  return Sample(size, dtype.value_or(DefaultFloatDType()), device, requires_grad, [&](Generator& g) {
    std::normal_distribution<double> nd(mean, std);
    return nd(g.engine());
  });
}

Tensor Randint(int64_t low, int64_t high, const DimVector& size, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("randint");
  OF_CHECK(low < high) << "random_ expects 'from' to be less than 'to', but got from=" << low
                       << " >= to=" << high;
  DType dt = dtype.value_or(DType::kInt64);
  Tensor t = Empty(size, dt, Dev(device));
  if (t.device().type == DeviceType::kMeta) return t;
  Generator& g = DefaultGenerator(t.device());
  const uint64_t range = static_cast<uint64_t>(high - low);
  DispatchAll(dt, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i)
      p[i] = static_cast<T>(static_cast<OpMath<T>>(low + static_cast<int64_t>(g.NextU64() % range)));
  });
  t.impl()->requires_grad_ = requires_grad;
  return t;
}

Tensor Randperm(int64_t n, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("randperm");
  OF_CHECK(n >= 0) << "n must be non-negative, got" << n;
  DType dt = dtype.value_or(DType::kInt64);
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  Tensor t = Empty(DimVector{n}, dt, Dev(device));
  if (t.device().type == DeviceType::kMeta) return t;
  Generator& g = DefaultGenerator(t.device());
  for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[g.NextU64() % (i + 1)]);  // Fisher-Yates
  DispatchAll(dt, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<OpMath<T>>(perm[i]));
  });
  t.impl()->requires_grad_ = requires_grad;
  return t;
}

}  // namespace oneflow
