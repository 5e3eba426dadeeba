// Differentiable entries of the dropout ops (`backward: manual` in src/ops/table/dropout.yaml):
// compositions of table ops with random noise from ops/random_kernels.h, so their gradients
// (grad * noise) come from Mul's formula. PyTorch's _dropout_impl semantics: the input itself
// when not training, p == 0 or empty; input * 0 when p == 1.
#include <cmath>

#include "autograd/formulas.h"
#include "ops/random_kernels.h"
#include "decl/add.h"
#include "decl/alpha_dropout.h"
#include "decl/dropout.h"
#include "decl/feature_alpha_dropout.h"
#include "decl/feature_dropout.h"
#include "decl/mul.h"
#include "decl/native_dropout.h"

namespace oneflow::functional {

namespace {

constexpr double kSeluAlpha = 1.7580993408473766;  // -scale * alpha of SELU

// p is checked first; the input itself comes back (any dtype, as PyTorch's) when not training,
// p == 0 or empty, before the dtype is asked for.
bool Identity(const Tensor& input, double p, bool train) {
  OF_CHECK(p >= 0 && p <= 1) << "dropout probability has to be between 0 and 1, but got " << p;
  if (!train || p == 0 || input.numel() == 0) return true;
  OF_CHECK(IsFloating(input.dtype())) << "dropout expects a floating point input, got "
                                      << DTypeName(input.dtype());
  return false;
}

// [N, C, 1, ..., 1] for channel-wise noise, else the input's shape. Only drawing noise needs the
// channel dim: p == 0 and p == 1 take any input (PyTorch checks here too, in make_feature_noise).
DimVector NoiseSizes(const Tensor& input, bool feature) {
  if (!feature) return input.sizes();
  OF_CHECK(input.dim() >= 2) << "Feature dropout requires at least 2 dimensions in the input";
  DimVector s(input.dim(), 1);
  s[0] = input.sizes()[0];
  s[1] = input.sizes()[1];
  return s;
}

Tensor Noise(const Tensor& input, double p, bool feature, double keep_value, const GeneratorPtr& g) {
  return BernoulliNoise(NoiseSizes(input, feature), input.dtype(), input.device(), p, keep_value, g);
}

template <bool kInplace>
Tensor Scale(Tensor& input, const Tensor& by) {
  if constexpr (kInplace) return functional::Mul_(input, by); else return functional::Mul(input, by);
}

template <bool kInplace>
Tensor PlainDropout(Tensor& input, double p, bool train, bool feature, const GeneratorPtr& g) {
  if (Identity(input, p, train)) return input;
  if (p == 1) return Scale<kInplace>(input, S(0));
  if (!kInplace && !feature) return std::get<0>(functional::NativeDropout(input, p, true, g));
  return Scale<kInplace>(input, Noise(input, p, feature, 1.0 / (1.0 - p), g));
}

// input * a * noise + b with b = alpha' a (noise - 1 + p): dropped units take SELU's saturation
// value, and a, b restore zero mean and unit variance.
template <bool kInplace>
Tensor AlphaDropoutImpl(Tensor& input, double p, bool train, bool feature, const GeneratorPtr& g) {
  if (Identity(input, p, train)) return input;
  if (p == 1) return Scale<kInplace>(input, S(0));
  const double a = 1.0 / std::sqrt((kSeluAlpha * kSeluAlpha * p + 1) * (1 - p));
  Tensor noise = Noise(input, p, feature, 1.0, g);
  Tensor b = (noise + (p - 1.0)) * (kSeluAlpha * a);
  if constexpr (kInplace) {
    functional::Mul_(input, noise * a);
    return functional::Add_(input, b, Scalar(1));
  } else {
    return functional::Mul(input, noise * a) + b;
  }
}

}  // namespace

Tensor Dropout(const Tensor& input, double p, bool train, const GeneratorPtr& g, const Tensor& addend) {
  OpScope scope("dropout");
  Tensor x = input;
  Tensor out = PlainDropout<false>(x, p, train, false, g);
  return addend.defined() ? functional::Add(out, addend, Scalar(1)) : out;
}
Tensor& Dropout_(Tensor& input, double p, bool train, const GeneratorPtr& g, const Tensor& addend) {
  OpScope scope("dropout_");
  PlainDropout<true>(input, p, train, false, g);
  if (addend.defined()) functional::Add_(input, addend, Scalar(1));
  return input;
}
Tensor FeatureDropout(const Tensor& input, double p, bool train, const GeneratorPtr& g) {
  OpScope scope("feature_dropout");
  Tensor x = input;
  return PlainDropout<false>(x, p, train, true, g);
}
Tensor& FeatureDropout_(Tensor& input, double p, bool train, const GeneratorPtr& g) {
  OpScope scope("feature_dropout_");
  PlainDropout<true>(input, p, train, true, g);
  return input;
}
Tensor AlphaDropout(const Tensor& input, double p, bool train, const GeneratorPtr& g) {
  OpScope scope("alpha_dropout");
  Tensor x = input;
  return AlphaDropoutImpl<false>(x, p, train, false, g);
}
Tensor& AlphaDropout_(Tensor& input, double p, bool train, const GeneratorPtr& g) {
  OpScope scope("alpha_dropout_");
  AlphaDropoutImpl<true>(input, p, train, false, g);
  return input;
}
Tensor FeatureAlphaDropout(const Tensor& input, double p, bool train, const GeneratorPtr& g) {
  OpScope scope("feature_alpha_dropout");
  Tensor x = input;
  return AlphaDropoutImpl<false>(x, p, train, true, g);
}
Tensor& FeatureAlphaDropout_(Tensor& input, double p, bool train, const GeneratorPtr& g) {
  OpScope scope("feature_alpha_dropout_");
  AlphaDropoutImpl<true>(input, p, train, true, g);
  return input;
}

}  // namespace oneflow::functional
