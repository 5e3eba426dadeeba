// Functors of three-operand pointwise ops (src/ops/table/ternary.yaml). T is the OpMath type.
#pragma once
#include <cmath>

#include "core/hd.h"

namespace oneflow {

// lerp: start + weight * (end - start), written from the nearer end for weight >= 0.5 so that
// weight = 1 gives exactly `end` (as PyTorch does).
// Complex operands take the same rule on |weight|.
struct LerpFunctor {
  static constexpr int kComplex = 1;
  template <typename T> OF_HD T operator()(T start, T end, T weight) const {
    const T diff = end - start;
    return std::abs(weight) < 0.5 ? start + weight * diff : end - diff * (T(1) - weight);
  }
};

}  // namespace oneflow
