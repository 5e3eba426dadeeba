// Overflow-checked size arithmetic: the one place where sizes computed from user integers are
// multiplied (NumelOf, the ops that derive a size from a factor: pixel_shuffle's r^2, ...).
#pragma once
#include <cstdint>

#include "core/error.h"

namespace oneflow {

// a * b, or an error of `kind` "<what> overflowed (a * b)": a wrapped product (a negative or zero
// size, then a division by zero: SIGFPE) never reaches a kernel.
inline int64_t CheckedMul(int64_t a, int64_t b, const char* what, ErrorKind kind = ErrorKind::kRuntime) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]]
    ErrorBuilder(kind) << what << " overflowed (" << a << " * " << b << ")";
  return r;
}

// a + b, checked as CheckedMul.
inline int64_t CheckedAdd(int64_t a, int64_t b, const char* what, ErrorKind kind = ErrorKind::kRuntime) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) [[unlikely]]
    ErrorBuilder(kind) << what << " overflowed (" << a << " + " << b << ")";
  return r;
}

}  // namespace oneflow
