// A Python number crossing into C++: bool, int, float or complex, remembered as such for type
// promotion.
#pragma once
#include <cstdint>

#include "core/dtype.h"
#include "core/hd.h"

namespace oneflow {

class Scalar {
 public:
  enum Kind : int8_t { kBool, kInt, kFloat, kComplex };
  Scalar() : kind_(kInt), i_(0) {}
  Scalar(bool b) : kind_(kBool), i_(b) {}       // NOLINT
  Scalar(int v) : kind_(kInt), i_(v) {}         // NOLINT
  Scalar(int64_t v) : kind_(kInt), i_(v) {}     // NOLINT
  Scalar(double v) : kind_(kFloat), d_(v) {}    // NOLINT
  Scalar(std::complex<double> v) : kind_(kComplex), d_(v.real()), im_(v.imag()) {}  // NOLINT
  Kind kind() const { return kind_; }
  bool is_float() const { return kind_ == kFloat; }
  bool is_complex() const { return kind_ == kComplex; }
  std::complex<double> ToComplex() const { return {ToDouble(), im_}; }
  bool is_int() const { return kind_ == kInt; }
  bool is_bool() const { return kind_ == kBool; }
  // A complex value converts to a real type through its real part (as PyTorch's casts do).
  // OF_HD: functors holding a Scalar (addcmul's value) read it in device code.
  OF_HD double ToDouble() const { return kind_ >= kFloat ? d_ : static_cast<double>(i_); }
  OF_HD int64_t ToInt() const { return kind_ >= kFloat ? static_cast<int64_t>(d_) : i_; }
  OF_HD double ImagPart() const { return kind_ == kComplex ? im_ : 0.0; }
  template <typename T> T To() const {
    if constexpr (kIsComplexT<T>) {
      using V = typename T::value_type;
      return T(static_cast<V>(ToDouble()), static_cast<V>(kind_ == kComplex ? im_ : 0.0));
    }
    if (kind_ >= kFloat) return static_cast<T>(static_cast<OpMath<T>>(d_));
    return static_cast<T>(static_cast<OpMath<T>>(i_));
  }
  // The dtype a bare Python number has in promotion (before category rules).
  DType dtype() const {
    return kind_ == kComplex ? DType::kComplex128
           : kind_ == kFloat ? DType::kFloat64 : kind_ == kInt ? DType::kInt64 : DType::kBool;
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
  double im_ = 0.0;
};

}  // namespace oneflow
