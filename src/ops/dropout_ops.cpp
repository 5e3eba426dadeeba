// Dropout kernels (src/ops/table/dropout.yaml) and the random noise of dropout/rrelu
// (ops/random_kernels.h). Draws come from Philox4x32 (core/philox.h) over counter blocks reserved
// from the device's generator (Note [Philox offsets]): element i uses word i % 4 of block i / 4,
// so results are the same for any thread count and reproducible under flow.manual_seed.
#include "autograd/functional.h"
#include "autograd/grad_mode.h"
#include "core/generator.h"
#include "kernels/loop.h"
#include "core/philox.h"
#include "kernels/dropout.h"
#include "kernels/dropout_draws.h"
#include "ops/copy.h"
#include "ops/random_kernels.h"

#include <cmath>
#include "decl/alpha_dropout.h"
#include "decl/contiguous.h"
#include "decl/dropout.h"
#include "decl/dropout_backward.h"
#include "decl/empty.h"
#include "decl/feature_alpha_dropout.h"
#include "decl/feature_dropout.h"
#include "decl/native_dropout.h"

namespace oneflow {

namespace {

// The counter blocks of n draws (one word each), from `g` or the device's generator; every
// device's kernel draws the same words from them (kernels/dropout.h).
PhiloxSeed ReserveDraws(const Device& device, int64_t n, const GeneratorPtr& g = GeneratorPtr()) {
  return ReserveDropoutDraws(GeneratorFor(g, device), n);
}

void CheckDropoutP(double p) {
  OF_CHECK(p >= 0 && p <= 1) << "dropout probability has to be between 0 and 1, but got " << p;
}

}  // namespace

Tensor BernoulliNoise(const DimVector& sizes, DType dtype, const Device& device, double p,
                      double keep_value, const GeneratorPtr& generator) {
  Tensor noise = Empty(sizes, dtype, device);
  if (device.type == DeviceType::kMeta) return noise;
  DropoutNoise(noise, DropoutKeepBound(p), keep_value, ReserveDraws(device, noise.numel(), generator));
  return noise;
}

Tensor RreluNoise(const Tensor& input, double lower, double upper) {
  Tensor x = Contiguous(input);
  Tensor noise = Empty(x.sizes(), x.dtype(), x.device());
  if (x.device().type == DeviceType::kMeta) return noise;
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* xp = x.data<T>();
    T* o = noise.data<T>();
    const M lo = static_cast<M>(lower), span = static_cast<M>(upper - lower);
    ForEachDraw(ReserveDraws(x.device(), x.numel()), x.numel(), [&](int64_t i, uint32_t u) {
      const M slope = lo + static_cast<M>(static_cast<float>(u >> 8) * (1.0f / 16777216.0f)) * span;
      o[i] = static_cast<M>(xp[i]) >= M(0) ? static_cast<T>(M(1)) : static_cast<T>(slope);
    });
  });
  return noise;
}

// Output and keep-mask in one pass; in eval mode a copy and an all-true mask (as PyTorch).
std::tuple<Tensor, Tensor> NativeDropout(const Tensor& input, double p, bool train, const GeneratorPtr& generator) {
  OpScope scope("native_dropout");
  CheckDropoutP(p);
  OF_CHECK(IsFloating(input.dtype())) << "dropout expects a floating point input, got "
                                      << DTypeName(input.dtype());
  Tensor out = Empty(input.sizes(), input.dtype(), input.device());
  Tensor mask = Empty(input.sizes(), DType::kBool, input.device());
  if (input.device().type == DeviceType::kMeta) return {out, mask};
  if (!train) {
    CopyInto(out, input);
    FillWith(mask, Scalar(true));
    return {out, mask};
  }
  Tensor x = Contiguous(input);
  const uint32_t bound = DropoutKeepBound(p);
  const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  DropoutRows(x, out, mask, bound, scale, ReserveDraws(x.device(), x.numel(), generator));
  return {out, mask};
}

// grad * mask * scale (the mask broadcasts like an operand of a binary op).
Tensor DropoutBackward(const Tensor& grad_output, const Tensor& mask, double scale) {
  OpScope scope("dropout_backward");
  OF_CHECK(mask.dtype() == DType::kBool) << "dropout_backward expects a bool mask, got "
                                         << DTypeName(mask.dtype());
  OF_CHECK(IsFloating(grad_output.dtype())) << "dropout_backward expects a floating point gradient";
  CheckSameDevice(grad_output, mask);
  const DimVector shape = BroadcastShapes(grad_output.sizes(), mask.sizes());
  Tensor out = Empty(shape, grad_output.dtype(), grad_output.device());
  if (out.device().type == DeviceType::kMeta) return out;
  DropoutGrad(grad_output, mask, scale, out);
  return out;
}

// Kernel entries of the composite dropout ops (src/autograd/composite/dropout.cpp).
#define OF_COMPOSITE_DROPOUT(Name)                                             \
  Tensor Name(const Tensor& input, double p, bool train, const GeneratorPtr& g) { \
    AutoGradMode no_grad(false);                                               \
    return functional::Name(input, p, train, g);                               \
  }                                                                            \
  Tensor& Name##_(Tensor& input, double p, bool train, const GeneratorPtr& g) {  \
    AutoGradMode no_grad(false);                                               \
    return functional::Name##_(input, p, train, g);                            \
  }
Tensor Dropout(const Tensor& input, double p, bool train, const GeneratorPtr& g, const Tensor& addend) {
  AutoGradMode no_grad(false);
  return functional::Dropout(input, p, train, g, addend);
}
Tensor& Dropout_(Tensor& input, double p, bool train, const GeneratorPtr& g, const Tensor& addend) {
  AutoGradMode no_grad(false);
  return functional::Dropout_(input, p, train, g, addend);
}
OF_COMPOSITE_DROPOUT(FeatureDropout)
OF_COMPOSITE_DROPOUT(AlphaDropout)
OF_COMPOSITE_DROPOUT(FeatureAlphaDropout)
#undef OF_COMPOSITE_DROPOUT

}  // namespace oneflow
