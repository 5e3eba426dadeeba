// In-place random fills (uniform_ normal_ exponential_ geometric_ log_normal_ cauchy_ random_)
// and bernoulli / bernoulli_.
#include <cmath>
#include <limits>

#include "ops/random_util.h"
#include "decl/bernoulli.h"
#include "decl/bernoulli_.h"
#include "decl/cauchy_.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/exponential_.h"
#include "decl/geometric_.h"
#include "decl/log_normal_.h"
#include "decl/normal_.h"
#include "decl/random_.h"
#include "decl/uniform_.h"

namespace oneflow {

Tensor& Uniform_(Tensor& input, double from, double to, const GeneratorPtr& generator) {
  OpScope scope("uniform_");
  OF_CHECK(from <= to) << "uniform_ expects to return a [from, to) range, but found from=" << from
                       << " > to=" << to;
  CheckFloatingFill(input.dtype(), "uniform_", true);
  Generator& g = GeneratorFor(generator, input.device());
  return FillInPlace(input,
                     [&](const Tensor& t) { FillContinuousParts(t, RandDist::kUniform, from, to, g); });
}

Tensor& Normal_(Tensor& input, double mean, double std, const GeneratorPtr& generator) {
  OpScope scope("normal_");
  OF_CHECK(std >= 0.0) << "normal expects std >= 0.0, but found std " << std;
  CheckFloatingFill(input.dtype(), "normal_", true);
  Generator& g = GeneratorFor(generator, input.device());
  return FillInPlace(input,
                     [&](const Tensor& t) { FillContinuousParts(t, RandDist::kNormal, mean, std, g); });
}

Tensor& Exponential_(Tensor& input, double lambd, const GeneratorPtr& generator) {
  OpScope scope("exponential_");
  OF_CHECK(lambd > 0.0) << "exponential_ expects lambda > 0.0, but found lambda=" << lambd;
  OF_CHECK(IsFloating(input.dtype()))
      << "Exponential distribution is a continuous probability distribution. dtype must be a "
         "floating point but you specified "
      << DTypeName(input.dtype());
  Generator& g = GeneratorFor(generator, input.device());
  return FillInPlace(
      input, [&](const Tensor& t) { FillContinuous(t, RandDist::kExponential, lambd, 0.0, g); });
}

Tensor& Geometric_(Tensor& input, double p, const GeneratorPtr& generator) {
  OpScope scope("geometric_");
  OF_CHECK(p > 0.0 && p < 1.0) << "geometric_ expects p to be in (0, 1), but got p=" << p;
  OF_CHECK(input.dtype() != DType::kBool) << "geometric_ is not implemented for bool tensors";
  Generator& g = GeneratorFor(generator, input.device());
  return FillInPlace(input, [&](const Tensor& t) { FillGeometric(t, p, g); });
}

Tensor& LogNormal_(Tensor& input, double mean, double std, const GeneratorPtr& generator) {
  OpScope scope("log_normal_");
  OF_CHECK(std > 0.0) << "log_normal_ expects std > 0.0, but found std=" << std;
  CheckFloatingFill(input.dtype(), "log_normal_");
  Generator& g = GeneratorFor(generator, input.device());
  return FillInPlace(
      input, [&](const Tensor& t) { FillContinuous(t, RandDist::kLogNormal, mean, std, g); });
}

Tensor& Cauchy_(Tensor& input, double median, double sigma, const GeneratorPtr& generator) {
  OpScope scope("cauchy_");
  OF_CHECK(sigma > 0.0) << "cauchy_ expects sigma > 0.0, but found sigma=" << sigma;
  OF_CHECK(IsFloating(input.dtype()))
      << "Cauchy distribution is a continuous probability distribution. dtype must be a floating "
         "point but you specified "
      << DTypeName(input.dtype());
  Generator& g = GeneratorFor(generator, input.device());
  return FillInPlace(
      input, [&](const Tensor& t) { FillContinuous(t, RandDist::kCauchy, median, sigma, g); });
}

namespace {
// The largest value random_() draws for a dtype without `to`: the dtype's maximum for integers,
// 2^digits for floats (every integer up to it is exact), as PyTorch.
int64_t RandomMax(DType t) {
  switch (t) {
    case DType::kBool:
      return 1;
    case DType::kInt8:
      return 127;
    case DType::kUInt8:
      return 255;
    case DType::kInt16:
      return 32767;
    case DType::kInt32:
      return std::numeric_limits<int32_t>::max();
    case DType::kInt64:
      return std::numeric_limits<int64_t>::max();
    case DType::kFloat16:
      return int64_t(1) << 11;
    case DType::kBFloat16:
      return int64_t(1) << 8;
    case DType::kFloat32:
      return int64_t(1) << 24;
    case DType::kFloat64:
      return int64_t(1) << 53;
  }
  return 1;
}
}  // namespace

Tensor& Random_(Tensor& input, int64_t from, std::optional<int64_t> to,
                const GeneratorPtr& generator) {
  OpScope scope("random_");
  int64_t last;  // inclusive upper end
  if (to) {
    OF_CHECK(from < *to) << "random_ expects 'from' to be less than 'to', but got from=" << from
                         << " >= to=" << *to;
    last = *to - 1;
  } else {
    last = RandomMax(input.dtype());
    OF_CHECK(from <= last) << "random_ expects 'from' casted to dtype to be less than or equal to "
                              "'to' casted to dtype, but got from="
                           << from << " > to=" << last;
  }
  CheckRandomBounds(input.dtype(), from, last);
  // range 0 stands for the whole 2^64 (from = int64 min without `to` on int64).
  const uint64_t range = uint64_t(last) - uint64_t(from) + 1;
  Generator& g = GeneratorFor(generator, input.device());
  return FillInPlace(input, [&](const Tensor& t) { FillIntegers(t, from, range, g); });
}

namespace {

// p as per-element float32 probabilities of `shape` (p must expand to it), checked in [0, 1] in
// its own dtype first. p itself when it already is that (no copy).
Tensor Probabilities(const Tensor& p, const DimVector& shape, const char* op) {
  OF_CHECK(IsFloating(p.dtype())) << op << ": expected a floating point probability tensor p, "
                                  << "but got " << DTypeName(p.dtype());
  bool ok = p.dim() <= int(shape.size());
  for (int i = 1; ok && i <= p.dim(); ++i) {
    const int64_t ps = p.sizes()[p.dim() - i], s = shape[shape.size() - i];
    ok = ps == s || ps == 1;
  }
  OF_CHECK(ok) << op << ": the probability tensor of shape " << ShapeStr(p.sizes())
               << " can't be expanded to the shape " << ShapeStr(shape) << " of the result";
  if (IsMeta(p)) return Tensor();
  Tensor c = Contiguous(p);
  const Tensor hc = OnHost(c);  // CUDA probabilities are checked in a host copy
  bool in_range = true;
  DispatchFloat(hc.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T* d = hc.data<T>();
    for (int64_t i = 0; i < hc.numel(); ++i) {
      const OpMath<T> v = static_cast<OpMath<T>>(d[i]);
      in_range &= v >= 0 && v <= 1;  // false for NaN too
    }
  });
  OF_CHECK(in_range) << op
                     << ": expected all probabilities in [0, 1] (Expected p_in >= 0 && "
                        "p_in <= 1 to be true, but got false)";
  if (c.dtype() == DType::kFloat32 && c.sizes() == shape) return c;
  Tensor probs = Empty(shape, DType::kFloat32, p.device());
  CopyInto(probs, p);
  return probs;
}

// The draw itself: `out` (contiguous or not) gets 0/1 with probability p or probs.
Tensor& BernoulliInto(Tensor& out, const std::optional<Tensor>& p, double default_p, Generator& g,
                      const char* op) {
  const bool has_tensor_p = p && p->defined() && !p->is_wrapped_number();
  double scalar_p = default_p;
  if (p && p->defined() && p->is_wrapped_number() && !IsMeta(*p)) scalar_p = ItemOf(*p).ToDouble();
  OF_CHECK(has_tensor_p || (scalar_p >= 0.0 && scalar_p <= 1.0))
      << op << " expects p to be in [0, 1], but got p=" << scalar_p;
  Tensor probs = has_tensor_p ? Probabilities(*p, out.sizes(), op) : Tensor();
  return FillInPlace(out, [&](const Tensor& t) { FillBernoulli(t, scalar_p, probs, g); });
}

}  // namespace

Tensor Bernoulli(const Tensor& input, std::optional<double> p, const GeneratorPtr& generator,
                 std::optional<DType> dtype) {
  OpScope scope("bernoulli");
  Generator& g = GeneratorFor(generator, input.device());
  Tensor out = Empty(input.sizes(), dtype.value_or(input.dtype()), input.device());
  if (p) return BernoulliInto(out, std::nullopt, *p, g, "bernoulli");
  // p=None: `input` holds the probabilities.
  return BernoulliInto(out, input, 0.5, g, "bernoulli");
}

Tensor& Bernoulli_(Tensor& input, std::optional<Tensor> p, const GeneratorPtr& generator,
                   std::optional<DType> dtype) {
  OpScope scope("bernoulli_");
  // upstream OneFlow's bernoulli_ takes dtype= too; in place the result keeps the tensor's dtype
  OF_CHECK(!dtype || *dtype == input.dtype())
      << "bernoulli_: dtype=" << DTypeName(*dtype) << " differs from the tensor's "
      << DTypeName(input.dtype()) << " (an in-place result keeps its dtype)";
  Generator& g = GeneratorFor(generator, input.device());
  return BernoulliInto(input, p, 0.5, g, "bernoulli_");
}

}  // namespace oneflow
