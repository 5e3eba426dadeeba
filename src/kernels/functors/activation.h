// Functors of the activation family (src/ops/table/activation.yaml). T is the OpMath type.
#pragma once
#include <cmath>

namespace oneflow {

struct LeakyReluFunctor {
  double negative_slope;
  template <typename T> T operator()(T x) const { return x > T(0) ? x : x * T(negative_slope); }
};

}  // namespace oneflow
