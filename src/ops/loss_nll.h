// Internal helpers shared by the nll_loss / cross_entropy kernels (loss_nll_ops.cpp) and their
// backward kernels (loss_nll_backward_ops.cpp).
#pragma once
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "kernels/nll.h"
#include "ops/copy.h"
#include "ops/loss_common.h"
#include "decl/contiguous.h"

namespace oneflow::nll {

// [outer, C, inner] geometry of a class-dim input.
struct ClassGeom {
  int64_t outer = 1, classes = 1, inner = 1;
  int64_t positions() const { return outer * inner; }
};

inline ClassGeom GeomOf(const DimVector& sizes) {
  ClassGeom g;
  if (sizes.size() == 1) {
    g.classes = sizes[0];
    return g;
  }
  g.outer = sizes[0];
  g.classes = sizes[1];
  for (int d = 2; d < sizes.size(); ++d) g.inner *= sizes[d];
  return g;
}

// The class-index target's expected shape: input without its class dim.
inline void CheckClassTargetShape(const Tensor& input, const Tensor& target) {
  OF_CHECK_VALUE(input.dim() >= 1) << "Expected 1 or more dimensions (got 0)";
  CheckClassIndexTarget(target);
  if (input.dim() == 1) {
    OF_CHECK(target.dim() == 0 || (target.dim() == 1 && target.numel() == 1))
        << "0D or 1D target tensor expected, multi-target not supported";
    return;
  }
  OF_CHECK_VALUE(target.dim() >= 1 && target.sizes()[0] == input.sizes()[0])
      << "Expected input batch_size (" << input.sizes()[0] << ") to match target batch_size ("
      << (target.dim() >= 1 ? target.sizes()[0] : 0) << ").";
  DimVector want = input.sizes();
  want.erase(1);
  OF_CHECK(target.sizes() == want) << "Expected target size " << ShapeStr(want) << ", got "
                                   << ShapeStr(target.sizes());
}

inline bool OnCuda(const Tensor& t) { return t.device().type == DeviceType::kCUDA; }

// input, target and the optional weight on one device.
inline void CheckSameDevices(const Tensor& input, const Tensor& target, const Tensor& weight) {
  CheckSameDevice(input, target);
  if (weight.defined()) CheckSameDevice(input, weight);
}

// `differentiable`: probability targets make the loss linear in the weights (as PyTorch's
// composite); class-index targets refuse a weight requiring grad (as PyTorch's nll kernels).
inline void CheckWeight(const Tensor& weight, int64_t classes, bool differentiable = false) {
  if (!weight.defined()) return;
  OF_CHECK(weight.dim() == 1 && weight.numel() == classes)
      << "weight tensor should be defined either for all " << classes
      << " classes or no classes but got weight tensor of shape: " << ShapeStr(weight.sizes());
  if (!differentiable) CheckNoGradFor(weight, "weight");
}

// Targets as contiguous int64 on the host (CUDA targets are copied: the check reads them),
// range-checked (IndexError, PyTorch's wording) before any output.
inline Tensor CheckedTargets(const Tensor& target, int64_t classes, int64_t ignore_index) {
  Tensor t = Contiguous(CastTo(OnHost(target), DType::kInt64));
  const int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    OF_CHECK_INDEX(p[i] == ignore_index || (p[i] >= 0 && p[i] < classes))
        << "Target " << p[i] << " is out of bounds.";
  }
  return t;
}

// Class weights as doubles (1 when absent).
inline std::vector<double> WeightsOf(const Tensor& weight, int64_t classes) {
  std::vector<double> w(classes, 1.0);
  if (!weight.defined()) return w;
  Tensor c = Contiguous(OnHost(weight));
  DispatchFloat(c.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    for (int64_t k = 0; k < classes; ++k) w[k] = static_cast<double>(static_cast<OpMath<T>>(c.data<T>()[k]));
  });
  return w;
}

// The mean reduction's denominator for class targets (host int64, range-checked): the sum of the
// weights of the targets that are not ignored.
inline double TargetWeightSum(const Tensor& t, const std::vector<double>& w, int64_t ignore_index) {
  const int64_t* tp = t.data<int64_t>();
  double denom = 0;
  for (int64_t i = 0; i < t.numel(); ++i) denom += tp[i] == ignore_index ? 0.0 : w[tp[i]];
  return denom;
}

struct CeArgs {
  const Tensor* weight;
  int64_t ignore_index;
  Reduction reduction;
  double smoothing;
  bool log_softmax;  // cross_entropy (true) or nll_loss on log-probabilities (false)
};

inline bool IsProbTarget(const Tensor& input, const Tensor& target) {
  return IsFloating(target.dtype()) && target.sizes() == input.sizes();
}

}  // namespace oneflow::nll
