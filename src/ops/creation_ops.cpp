// Creation ops: zeros ones empty full arange linspace eye and the *_like forms.
#include <cmath>
#include <complex>

#include "core/default_device.h"
#include "core/parallel.h"
#include "ops/copy.h"
#include "decl/arange.h"
#include "decl/empty.h"
#include "decl/empty_like.h"
#include "decl/eye.h"
#include "decl/full.h"
#include "decl/full_like.h"
#include "decl/linspace.h"
#include "decl/ones.h"
#include "decl/ones_like.h"
#include "decl/zeros.h"
#include "decl/zeros_like.h"

namespace oneflow {

namespace {
Device Dev(const std::optional<Device>& d) { return d ? *d : DefaultFactoryDevice(); }

Tensor Filled(const DimVector& size, const Scalar& v, DType dt, const std::optional<Device>& dev,
              bool requires_grad) {
  Tensor t = Empty(size, dt, Dev(dev));
  FillWith(t, v);
  t.impl()->requires_grad_ = requires_grad;
  return t;
}

void CheckRequiresGrad(bool rg, DType dt) {
  OF_CHECK(!rg || IsFloating(dt) || IsComplex(dt)) << "Only Tensors of floating point dtype can require gradients";
}
}  // namespace

Tensor Zeros(const DimVector& size, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("zeros");
  DType dt = dtype.value_or(DefaultFloatDType());
  CheckRequiresGrad(requires_grad, dt);
  return Filled(size, Scalar(0), dt, device, requires_grad);
}

Tensor Ones(const DimVector& size, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("ones");
  DType dt = dtype.value_or(DefaultFloatDType());
  CheckRequiresGrad(requires_grad, dt);
  return Filled(size, Scalar(1), dt, device, requires_grad);
}

Tensor Empty(const DimVector& size, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("empty");
  DType dt = dtype.value_or(DefaultFloatDType());
  CheckRequiresGrad(requires_grad, dt);
  Tensor t = Empty(size, dt, Dev(device));
  t.impl()->requires_grad_ = requires_grad;
  return t;
}

Tensor Full(const DimVector& size, const Scalar& fill_value, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("full");
  // Like PyTorch: the fill value's kind picks the dtype when none is given.
  DType dt = dtype ? *dtype : fill_value.is_float() ? DefaultFloatDType() : fill_value.dtype();
  // A complex value into a real dtype lost its imaginary part (PyTorch's conversion refuses it).
  OF_CHECK(!fill_value.is_complex() || IsComplex(dt))
      << "value cannot be converted to type " << DTypeName(dt) << " without overflow";
  CheckRequiresGrad(requires_grad, dt);
  return Filled(size, fill_value, dt, device, requires_grad);
}

Tensor Arange(const Scalar& start, std::optional<Scalar> end, const Scalar& step, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("arange");
  Scalar s0 = end ? start : Scalar(int64_t(0)), s1 = end ? *end : start;
  // A complex bound or step has no order (its real part was used): PyTorch's conversion error.
  OF_CHECK(!s0.is_complex() && !s1.is_complex() && !step.is_complex())
      << "value cannot be converted to type double without overflow";
  const bool any_float = s0.is_float() || s1.is_float() || step.is_float();
  DType dt = dtype ? *dtype : any_float ? DefaultFloatDType() : DType::kInt64;
  const double a = s0.ToDouble(), b = s1.ToDouble(), st = step.ToDouble();
  OF_CHECK(st != 0) << "step must be nonzero";
  OF_CHECK(std::isfinite(a) && std::isfinite(b)) << "unsupported range: " << a << " -> " << b;
  OF_CHECK((st > 0 && b >= a) || (st < 0 && b <= a))
      << "upper bound and larger bound inconsistent with step sign";
  int64_t n;
  if (any_float) n = static_cast<int64_t>(std::ceil((b - a) / st));
  else {
    const int64_t ia = s0.ToInt(), ib = s1.ToInt(), is = step.ToInt();
    n = (ib - ia + is + (is > 0 ? -1 : 1)) / is;
  }
  // Values are filled on the host; a CUDA tensor gets them in one copy.
  const Device target = Dev(device);
  Tensor t = Empty(DimVector{n}, dt, target.type == DeviceType::kCUDA ? Device{} : target);
  if (t.device().type != DeviceType::kMeta) {
    DispatchAll(dt, [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      T* p = t.data<T>();
      if (any_float || IsFloating(dt)) {
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<OpMath<T>>(a + st * i));
      } else {
        const int64_t ia = s0.ToInt(), is = step.ToInt();
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(ia + is * i);
      }
    });
  }
  if (target.type == DeviceType::kCUDA) t = MovedTo(t, target);
  CheckRequiresGrad(requires_grad, dt);
  t.impl()->requires_grad_ = requires_grad;
  return t;
}

Tensor Linspace(const Scalar& start, const Scalar& end, int64_t steps, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("linspace");
  OF_CHECK(steps >= 0) << "number of steps must be non-negative";
  // A complex end point makes the result complex (the default complex dtype), as PyTorch.
  const bool complex_ends = start.is_complex() || end.is_complex();
  const DType inferred = complex_ends ? ToComplexDType(DefaultFloatDType()) : DefaultFloatDType();
  DType dt = dtype.value_or(inferred);
  OF_CHECK(!complex_ends || IsComplex(dt)) << "inferred dtype " << TorchTypeName(inferred)
                                           << " can't be safely cast to passed dtype " << TorchTypeName(dt);
  const Device target = Dev(device);  // filled on the host, as arange
  Tensor t = Empty(DimVector{steps}, dt, target.type == DeviceType::kCUDA ? Device{} : target);
  const double a = start.ToDouble(), b = end.ToDouble();
  const double step = steps > 1 ? (b - a) / (steps - 1) : 0.0;
  if (t.device().type != DeviceType::kMeta && IsComplex(dt)) {
    // Complex: the same symmetric fill in complex arithmetic (each part spaced linearly).
    const std::complex<double> ca = start.ToComplex(), cb = end.ToComplex();
    const std::complex<double> cstep = steps > 1 ? (cb - ca) / double(steps - 1) : 0.0;
    DispatchComplex(dt, [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      T* p = t.data<T>();
      const int64_t half = steps / 2;
      for (int64_t i = 0; i < steps; ++i) {
        const std::complex<double> v = (i < half || steps == 1) ? ca + cstep * double(i)
                                                                 : cb - cstep * double(steps - 1 - i);
        p[i] = T(v);
      }
    });
  } else if (t.device().type != DeviceType::kMeta) {
    DispatchAll(dt, [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      T* p = t.data<T>();
      // Fill symmetric halves from both ends, as PyTorch does, so the last value is exactly `end`.
      const int64_t half = steps / 2;
      for (int64_t i = 0; i < steps; ++i) {
        double v = (i < half || steps == 1) ? a + step * i : b - step * (steps - 1 - i);
        if constexpr (std::is_integral_v<T>) p[i] = static_cast<T>(static_cast<int64_t>(v));
        else p[i] = static_cast<T>(static_cast<OpMath<T>>(v));
      }
    });
  }
  if (target.type == DeviceType::kCUDA) t = MovedTo(t, target);
  CheckRequiresGrad(requires_grad, dt);
  t.impl()->requires_grad_ = requires_grad;
  return t;
}

Tensor Eye(int64_t n, std::optional<int64_t> m, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  OpScope scope("eye");
  OF_CHECK(n >= 0) << "n must be greater or equal to 0, got " << n;
  const int64_t cols = m.value_or(n);
  OF_CHECK(cols >= 0) << "m must be greater or equal to 0, got " << cols;
  DType dt = dtype.value_or(DefaultFloatDType());
  Tensor t = Filled(DimVector{n, cols}, Scalar(0), dt, device, false);
  if (t.device().type != DeviceType::kMeta) {
    const int64_t k = std::min(n, cols);
    Tensor diag = MakeView(t, DimVector{k}, DimVector{cols + 1}, 0);
    FillWith(diag, Scalar(1));
  }
  CheckRequiresGrad(requires_grad, dt);
  t.impl()->requires_grad_ = requires_grad;
  return t;
}

#define OF_LIKE(Name, fn)                                                                   \
  Tensor Name(const Tensor& input, std::optional<DType> dtype, std::optional<Device> device, \
              bool requires_grad) {                                                          \
    return fn(input.sizes(), dtype.value_or(input.dtype()), device.value_or(input.device()), \
              requires_grad);                                                                \
  }
OF_LIKE(ZerosLike, Zeros)
OF_LIKE(OnesLike, Ones)
OF_LIKE(EmptyLike, Empty)
#undef OF_LIKE

Tensor FullLike(const Tensor& input, const Scalar& fill_value, std::optional<DType> dtype, std::optional<Device> device, bool requires_grad) {
  return Full(input.sizes(), fill_value, dtype.value_or(input.dtype()), device.value_or(input.device()), requires_grad);
}

}  // namespace oneflow
