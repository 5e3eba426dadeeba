// Random factories: rand randn randint randperm normal and the *_like forms.
#include <cmath>
#include <limits>

#include "core/default_device.h"
#include "ops/random_util.h"
#include "decl/add.h"
#include "decl/any.h"
#include "decl/empty.h"
#include "decl/lt.h"
#include "decl/mul.h"
#include "decl/normal.h"
#include "decl/rand.h"
#include "decl/rand_like.h"
#include "decl/randint.h"
#include "decl/randint_like.h"
#include "decl/randn.h"
#include "decl/randn_like.h"
#include "decl/randperm.h"
#include "decl/view_as_real.h"

namespace oneflow {

const char* CTypeName(DType t) {
  switch (t) {
    case DType::kBool:
      return "bool";
    case DType::kInt8:
      return "signed char";
    case DType::kUInt8:
      return "unsigned char";
    case DType::kInt16:
      return "short int";
    case DType::kInt32:
      return "int";
    case DType::kInt64:
      return "long int";
    case DType::kFloat16:
      return "c10::Half";
    case DType::kBFloat16:
      return "c10::BFloat16";
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
  }
  return "?";
}

void CheckRandomBounds(DType t, int64_t from, int64_t to_inclusive) {
  OF_CHECK(!IsComplex(t)) << "random integers handle only integral, floating-point and boolean dtypes, got "
                          << DTypeName(t);
  if (IsFloating(t)) return;
  int64_t lo = 0, hi = 1;
  switch (t) {
    case DType::kInt8:
      lo = -128, hi = 127;
      break;
    case DType::kUInt8:
      lo = 0, hi = 255;
      break;
    case DType::kInt16:
      lo = -32768, hi = 32767;
      break;
    case DType::kInt32:
      lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
      break;
    case DType::kInt64:
      lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
      break;
    default:
      break;
  }
  OF_CHECK(from >= lo && from <= hi) << "from is out of bounds for " << CTypeName(t);
  OF_CHECK(to_inclusive >= lo && to_inclusive <= hi)
      << "to - 1 is out of bounds for " << CTypeName(t);
}

void CheckFloatingFill(DType t, const char* what, bool complex_ok) {
  // NotImplementedError (a RuntimeError) as PyTorch's dispatch refusal ("not implemented for 'Int'").
  OF_CHECK_KIND(IsFloating(t) || (complex_ok && IsComplex(t)), ErrorKind::kNotImplemented)
      << what << " expects a floating point tensor, but got dtype "
                          << DTypeName(t);
}

void FillContinuousParts(const Tensor& t, RandDist dist, double a, double b, Generator& g) {
  if (!IsComplex(t.dtype())) return FillContinuous(t, dist, a, b, g);
  FillContinuous(ViewAsReal(t), dist, a, dist == RandDist::kNormal ? b * std::sqrt(0.5) : b, g);
}

namespace {

Device Dev(const std::optional<Device>& d) { return d ? *d : DefaultFactoryDevice(); }

// A new tensor of a continuous distribution (the factories' common body).
Tensor NewContinuous(const DimVector& size, std::optional<DType> dtype,
                     const std::optional<Device>& device, bool requires_grad,
                     const GeneratorPtr& generator, RandDist dist, double a, double b) {
  const DType dt = dtype.value_or(DefaultFloatDType());
  CheckFloatingFill(dt, OpScope::Current(), true);
  Tensor t = Empty(size, dt, Dev(device));
  Generator& g = GeneratorFor(generator, t.device());
  SetRequiresGrad(t, requires_grad);
  if (!IsMeta(t)) FillContinuousParts(t, dist, a, b, g);
  return t;
}

}  // namespace

Tensor Rand(const DimVector& size, const GeneratorPtr& generator, std::optional<DType> dtype,
            std::optional<Device> device, bool requires_grad) {
  OpScope scope("rand");
  return NewContinuous(size, dtype, device, requires_grad, generator, RandDist::kUniform, 0.0, 1.0);
}

Tensor Randn(const DimVector& size, const GeneratorPtr& generator, std::optional<DType> dtype,
             std::optional<Device> device, bool requires_grad) {
  OpScope scope("randn");
  return NewContinuous(size, dtype, device, requires_grad, generator, RandDist::kNormal, 0.0, 1.0);
}

Tensor Randint(int64_t low, int64_t high, const DimVector& size, const GeneratorPtr& generator,
               std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("randint");
  OF_CHECK(low < high) << "random_ expects 'from' to be less than 'to', but got from=" << low
                       << " >= to=" << high;
  const DType dt = dtype.value_or(DType::kInt64);
  CheckRandomBounds(dt, low, high - 1);
  Tensor t = Empty(size, dt, Dev(device));
  Generator& g = GeneratorFor(generator, t.device());
  SetRequiresGrad(t, requires_grad);
  if (!IsMeta(t)) FillIntegers(t, low, uint64_t(high) - uint64_t(low), g);
  return t;
}

Tensor Randperm(int64_t n, const GeneratorPtr& generator, std::optional<DType> dtype,
                std::optional<Device> device, bool requires_grad) {
  OpScope scope("randperm");
  OF_CHECK(n >= 0) << "Trying to create tensor with negative dimension " << n << ": [" << n << "]";  // PyTorch's
  const DType dt = dtype.value_or(DType::kInt64);
  OF_CHECK(dt != DType::kBool) << "randperm is not implemented for bool";
  if (IsFloating(dt)) {
    // Every value must be exact: n - 1 <= 2^digits.
    const int digits = dt == DType::kFloat16    ? 11
                       : dt == DType::kBFloat16 ? 8
                       : dt == DType::kFloat32  ? 24
                                                : 53;
    OF_CHECK(n <= (int64_t(1) << digits) + 1)
        << "n cannot be greater than 2^" << digits << "+1 for " << DTypeName(dt) << " type.";
  } else if (n > 0) {
    OF_CHECK(dt == DType::kInt64 || n - 1 <= (dt == DType::kInt32   ? 2147483647
                                              : dt == DType::kUInt8 ? 255
                                              : dt == DType::kInt16 ? 32767
                                                                    : 127))
        << "value cannot be converted to type " << DTypeName(dt) << " without overflow";
  }
  Tensor t = Empty(DimVector{n}, dt, Dev(device));
  Generator& g = GeneratorFor(generator, t.device());
  SetRequiresGrad(t, requires_grad);
  if (IsMeta(t) || n == 0) return t;
  // Fisher-Yates with its n - 1 random words drawn in parallel first (two words per swap when
  // n exceeds 32 bits).
  const bool wide = n > (int64_t(1) << 32);
  std::vector<uint32_t> words((n - 1) * (wide ? 2 : 1));
  RandomWords(words.data(), int64_t(words.size()), g);
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  for (int64_t i = n - 1, w = 0; i > 0; --i) {
    uint64_t r = words[w++];
    if (wide) r = r << 32 | words[w++];
    std::swap(perm[i], perm[r % uint64_t(i + 1)]);
  }
  // A CUDA result is written on the host and uploaded (the shuffle itself is sequential).
  const Tensor h = t.device().type == DeviceType::kCUDA ? Empty(DimVector{n}, dt) : t;
  DispatchAll(dt, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* p = h.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<OpMath<T>>(perm[i]));
  });
  if (!h.is_same(t)) CopyInto(t, h);
  return t;
}

Tensor Normal(const Tensor& mean, const Tensor& std, std::optional<DimVector> size,
              const GeneratorPtr& generator, std::optional<DType> dtype,
              std::optional<Device> device, bool requires_grad) {
  OpScope scope("normal");
  if (mean.is_wrapped_number() && std.is_wrapped_number()) {
    // normal(float mean, float std, size): a factory.
    OF_CHECK_TYPE(size)
        << "with a number mean and std, a size is required: normal(mean, std, size)";
    // (Meta inference of the boxed form has meta numbers: no values to draw with or check.)
    const bool values = !IsMeta(mean) && !IsMeta(std);
    const double m = values ? ItemOf(mean).ToDouble() : 0.0,
                 s = values ? ItemOf(std).ToDouble() : 1.0;
    OF_CHECK(s >= 0.0) << "normal expects std >= 0.0, but found std " << s;
    return NewContinuous(*size, dtype, device, requires_grad, generator, RandDist::kNormal, m, s);
  }
  // normal(Tensor mean, Tensor|float std) / normal(float mean, Tensor std): mean + std * z over
  // the broadcast shape, in the tensors' floating dtype.
  const Tensor& any = mean.is_wrapped_number() ? std : mean;
  // (A device equal to the tensors' is accepted: meta inference passes device="meta".)
  OF_CHECK_TYPE(!size && !dtype && (!device || *device == any.device()))
      << "size, dtype and device are only accepted with a number mean and std "
         "(normal(mean, std, size, dtype=..., device=...))";
  DType dt = mean.is_wrapped_number()  ? std.dtype()
             : std.is_wrapped_number() ? mean.dtype()
                                       : PromoteTypes(mean.dtype(), std.dtype());
  OF_CHECK(IsFloating(dt)) << "normal expects floating point mean and std, but got "
                           << DTypeName(dt);
  CheckSameDevice(mean.is_wrapped_number() ? std : mean, any);
  const DimVector shape = BroadcastShapes(mean.sizes(), std.sizes());
  Tensor z = Empty(shape, dt, any.device());
  Generator& g = GeneratorFor(generator, any.device());
  if (IsMeta(z)) {
    SetRequiresGrad(z, requires_grad);
    return z;
  }
  if (!std.is_wrapped_number()) {
    Tensor negative = Lt(std, WrappedNumber(Scalar(0.0)));
    OF_CHECK(!ItemOf(Any(negative, std::nullopt, false)).ToInt())
        << "normal expects all elements of std >= 0.0";
  } else {
    OF_CHECK(ItemOf(std).ToDouble() >= 0.0)
        << "normal expects std >= 0.0, but found std " << ItemOf(std).ToDouble();
  }
  FillContinuous(z, RandDist::kNormal, 0.0, 1.0, g);
  Tensor out = Add(mean, Mul(std, z), Scalar(1));
  SetRequiresGrad(out, requires_grad);
  return out;
}

Tensor RandLike(const Tensor& input, const GeneratorPtr& generator, std::optional<DType> dtype,
                std::optional<Device> device, bool requires_grad) {
  OpScope scope("rand_like");
  return Rand(input.sizes(), generator, dtype.value_or(input.dtype()),
              device.value_or(input.device()), requires_grad);
}

Tensor RandnLike(const Tensor& input, const GeneratorPtr& generator, std::optional<DType> dtype,
                 std::optional<Device> device, bool requires_grad) {
  OpScope scope("randn_like");
  return Randn(input.sizes(), generator, dtype.value_or(input.dtype()),
               device.value_or(input.device()), requires_grad);
}

Tensor RandintLike(const Tensor& input, int64_t low, int64_t high, const GeneratorPtr& generator,
                   std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("randint_like");
  return Randint(low, high, input.sizes(), generator, dtype.value_or(input.dtype()),
                 device.value_or(input.device()), requires_grad);
}

}  // namespace oneflow
