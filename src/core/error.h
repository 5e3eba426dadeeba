// One error type for every user-facing failure (docs/architecture.md §5). The kind picks the Python exception;
// the message names the op (taken from the innermost OpScope) and says what was wrong.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace oneflow {

// kLinAlg: a LAPACK / cuSOLVER failure on the input's values (singular, not positive-definite,
// no convergence): Python's oneflow.linalg.LinAlgError, a RuntimeError (as PyTorch's).
enum class ErrorKind { kRuntime, kValue, kIndex, kType, kNotImplemented, kLinAlg };

class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string msg, int missing_kernel_device = -1);
  const char* what() const noexcept override { return msg_.c_str(); }
  ErrorKind kind() const { return kind_; }
  // Note [Host fallback] (ops/host_fallback.h): >= 0 when the error only says that the op has no
  // kernel for this CUDA device's tensors (the op may then run on host copies of its inputs).
  int missing_kernel_device() const { return missing_kernel_device_; }

 private:
  ErrorKind kind_;
  std::string msg_;
  int missing_kernel_device_;
};

// Names the op being run so that every check inside it can say which op failed.
class OpScope {
 public:
  explicit OpScope(const char* name);
  ~OpScope();
  static const char* Current();
  // The outermost op left by an exception other than Error (std::bad_alloc, std::length_error):
  // the binding layer's translator names it in the message (Note [Foreign exceptions]).
  static const char* LastUnwound();

 private:
  const char* prev_;
};

// Names the op whose Python arguments a generated binding converts: an error raised outside any
// OpScope (a conversion's "expected a Tensor, got str") is prefixed with it. Inside the entry the
// entry's own OpScope names errors (and may name the op differently: linalg.inv for inverse).
class BindingScope {
 public:
  explicit BindingScope(const char* name);
  ~BindingScope();
  static const char* Current();

 private:
  const char* prev_;
};

// Builds the message with <<, throws when the statement ends (user errors, never internal bugs).
class ErrorBuilder {
 public:
  explicit ErrorBuilder(ErrorKind kind, int missing_kernel_device = -1)
      : kind_(kind), missing_kernel_device_(missing_kernel_device) {}
  template <typename T>
  ErrorBuilder& operator<<(const T& v) {
    ss_ << v;
    return *this;
  }
  ~ErrorBuilder() noexcept(false);

 private:
  ErrorKind kind_;
  int missing_kernel_device_;
  std::ostringstream ss_;
};

}  // namespace oneflow

#define OF_CHECK_KIND(cond, kind) \
  if (__builtin_expect(!!(cond), 1)) {} else ::oneflow::ErrorBuilder(kind)
#define OF_CHECK(cond) OF_CHECK_KIND(cond, ::oneflow::ErrorKind::kRuntime)
#define OF_CHECK_VALUE(cond) OF_CHECK_KIND(cond, ::oneflow::ErrorKind::kValue)
#define OF_CHECK_INDEX(cond) OF_CHECK_KIND(cond, ::oneflow::ErrorKind::kIndex)
#define OF_CHECK_TYPE(cond) OF_CHECK_KIND(cond, ::oneflow::ErrorKind::kType)
#define OF_THROW(kind) ::oneflow::ErrorBuilder(::oneflow::ErrorKind::kind)
// NotImplementedError for an op without a kernel for CUDA device `index`'s tensors.
#define OF_THROW_NO_KERNEL(index) \
  ::oneflow::ErrorBuilder(::oneflow::ErrorKind::kNotImplemented, (index) < 0 ? 0 : (index))
// Internal invariants: a failure here is a framework bug, reported as such.
#define OF_ASSERT(cond) \
  OF_CHECK_KIND(cond, ::oneflow::ErrorKind::kRuntime) << "internal error (" #cond ") at " << __FILE__ << ":" << __LINE__ << ": "
