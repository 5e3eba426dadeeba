// Functors of the complex family (Note [Complex functors] in kernels/functors.h).
#pragma once
#include <cmath>
#include <complex>

#include "core/hd.h"

namespace oneflow {

// arg(z); on real input 0 or pi by sign, NaN kept (PyTorch's angle).
struct AngleFunctor {
  static constexpr int kComplex = 2;
  template <typename T> OF_HD auto operator()(T x) const {
    if constexpr (kIsCplx<T>) {
      return std::arg(x);
    } else {
      if (x != x) return x;
      return x < T(0) ? T(3.14159265358979323846) : T(0);
    }
  }
};

struct ConjFunctor {
  static constexpr int kComplex = 1;
  template <typename T> OF_HD T operator()(T x) const {
    if constexpr (kIsCplx<T>) return std::conj(x); else return x;
  }
};

}  // namespace oneflow
