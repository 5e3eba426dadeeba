// Dropout kernels (src/ops/table/dropout.yaml) and the random noise of dropout/rrelu
// (ops/random_kernels.h). Draws come from Philox4x32 (core/philox.h) over counter blocks reserved
// from the device's generator (Note [Philox offsets]): element i uses word i % 4 of block i / 4,
// so results are the same for any thread count and reproducible under flow.manual_seed.
#include "autograd/functional.h"
#include "autograd/grad_mode.h"
#include "core/generator.h"
#include "kernels/loop.h"
#include "core/philox.h"
#include "kernels/dropout_draws.h"
#include "ops/copy.h"
#include "ops/random_kernels.h"
#include "decl/alpha_dropout.h"
#include "decl/contiguous.h"
#include "decl/dropout.h"
#include "decl/dropout_backward.h"
#include "decl/empty.h"
#include "decl/feature_alpha_dropout.h"
#include "decl/feature_dropout.h"
#include "decl/mul.h"
#include "decl/native_dropout.h"
#include "decl/where.h"
#ifdef ONEFLOW_WITH_CUDA
#include "cuda/ops.h"
#endif

#include <cmath>

namespace oneflow {

namespace {

// The counter blocks of n draws (one word each), from the device's generator; CUDA kernels draw
// the same words from them (cuda/random.cu).
PhiloxSeed ReserveDraws(const Device& device, int64_t n) { return ReserveDropoutDraws(DefaultGenerator(device), n); }

// Calls f(i, u) for i in [0, n) with u the i-th 32-bit draw of a fresh key, in parallel blocks.
template <typename F>
void ForEachDraw(const Device& device, int64_t n, const F& f) {
  const int64_t blocks = (n + 3) / 4;
  const PhiloxSeed key = ReserveDraws(device, n);
  const uint32_t k0 = static_cast<uint32_t>(key.seed), k1 = static_cast<uint32_t>(key.seed >> 32);
  ParallelFor(0, blocks, kGrainSize / 4, [&](int64_t b, int64_t e) {
    for (int64_t blk = b; blk < e; ++blk) {
      const uint64_t c = key.offset + static_cast<uint64_t>(blk);
      uint32_t r[4] = {static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0};
      Philox4x32::Block(r, k0, k1);
      const int64_t base = blk * 4, lim = std::min<int64_t>(4, n - base);
      for (int64_t j = 0; j < lim; ++j) f(base + j, r[j]);
    }
  });
}

void CheckDropoutP(double p) {
  OF_CHECK(p >= 0 && p <= 1) << "dropout probability has to be between 0 and 1, but got " << p;
}

}  // namespace

Tensor BernoulliNoise(const DimVector& sizes, DType dtype, const Device& device, double p,
                      double keep_value) {
  Tensor noise = Empty(sizes, dtype, device);
  if (device.type == DeviceType::kMeta) return noise;
  const uint32_t bound = DropoutKeepBound(p);
#ifdef ONEFLOW_WITH_CUDA
  if (device.type == DeviceType::kCUDA) {
    const PhiloxSeed key = ReserveDraws(device, noise.numel());
    cuda::BernoulliNoise(noise, bound, keep_value, key.seed, key.offset);
    return noise;
  }
#endif
  DispatchFloat(dtype, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* o = noise.data<T>();
    const T kv = static_cast<T>(static_cast<OpMath<T>>(keep_value)), zero = static_cast<T>(0.0f);
    ForEachDraw(device, noise.numel(), [&](int64_t i, uint32_t u) { o[i] = (u >> 8) < bound ? kv : zero; });
  });
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
    ForEachDraw(x.device(), x.numel(), [&](int64_t i, uint32_t u) {
      const M slope = lo + static_cast<M>(static_cast<float>(u >> 8) * (1.0f / 16777216.0f)) * span;
      o[i] = static_cast<M>(xp[i]) >= M(0) ? static_cast<T>(M(1)) : static_cast<T>(slope);
    });
  });
  return noise;
}

// Output and keep-mask in one pass; in eval mode a copy and an all-true mask (as PyTorch).
std::tuple<Tensor, Tensor> NativeDropout(const Tensor& input, double p, bool train) {
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
#ifdef ONEFLOW_WITH_CUDA
  if (x.device().type == DeviceType::kCUDA) {
    const PhiloxSeed key = ReserveDraws(x.device(), x.numel());
    cuda::Dropout(x, out, mask, bound, scale, key.seed, key.offset);
    return {out, mask};
  }
#endif
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    bool* mp = mask.data<bool>();
    const M sc = static_cast<M>(scale);
    ForEachDraw(x.device(), x.numel(), [&](int64_t i, uint32_t u) {
      const bool keep = (u >> 8) < bound;
      mp[i] = keep;
      op[i] = static_cast<T>(keep ? static_cast<M>(xp[i]) * sc : M(0));
    });
  });
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
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {
    if (grad_output.sizes() == shape && mask.sizes() == shape) {  // the CPU's arithmetic, in one kernel
      cuda::DropoutBackward(Contiguous(grad_output), Contiguous(mask), scale, out);
      return out;
    }
    // A broadcast mask (feature dropout): the pointwise kernels (scale rounded to the dtype).
    const DType dt = out.dtype();
    return Where(mask, Mul(grad_output, ScalarToTensor(Scalar(scale), dt)), ScalarToTensor(Scalar(0.0), dt));
  }
#endif
  // (the host plan after the CUDA branch: a plan of host pointers refuses CUDA tensors)
  const Tensor* ops[3] = {&out, &grad_output, &mask};
  const LoopPlan plan = MakePlan(shape, ops, 3);
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const M sc = static_cast<M>(scale);
    RunLoop(plan, [sc](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const M g = static_cast<M>(*reinterpret_cast<const T*>(p[1] + i * s[1]));
        const bool k = *reinterpret_cast<const bool*>(p[2] + i * s[2]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) = static_cast<T>(k ? g * sc : M(0));
      }
    });
  });
  return out;
}

// Kernel entries of the composite dropout ops (src/autograd/composite/dropout.cpp).
#define OF_COMPOSITE_DROPOUT(Name)                                      \
  Tensor Name(const Tensor& input, double p, bool train) {              \
    AutoGradMode no_grad(false);                                        \
    return functional::Name(input, p, train);                           \
  }                                                                     \
  Tensor& Name##_(Tensor& input, double p, bool train) {                \
    AutoGradMode no_grad(false);                                        \
    return functional::Name##_(input, p, train);                        \
  }
OF_COMPOSITE_DROPOUT(Dropout)
OF_COMPOSITE_DROPOUT(FeatureDropout)
OF_COMPOSITE_DROPOUT(AlphaDropout)
OF_COMPOSITE_DROPOUT(FeatureAlphaDropout)
#undef OF_COMPOSITE_DROPOUT

}  // namespace oneflow
