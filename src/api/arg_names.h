// Note [Argument names]: the generated bindings name the parameter each conversion reads
// (`(BindingArg(2, "other"), ToTensor(other))`), so that a conversion's TypeError says
// `add(): argument 'other' (position 2) must be Tensor, not str`, as PyTorch's parser does. The
// position counts from 1 and, for a Tensor method, after self (PyTorch's numbering). Each
// generated binding opens an ArgFrame beside its BindingScope: it starts with no argument and
// gives the caller's back on exit (a conversion may run Python that calls another binding). The
// name is read only under a BindingScope and outside any OpScope (an entry's own checks, and the
// hand-written bindings' conversions, keep "expected a Tensor, got str").
#pragma once
#include <nanobind/nanobind.h>

namespace oneflow {

namespace nb = nanobind;

struct CurrentArg {
  const char* name = nullptr;
  int position = 0;
};
inline thread_local CurrentArg current_arg;

// One store per argument: the bindings' per-call cost stays a few nanoseconds.
inline void BindingArg(int position, const char* name) {
  current_arg.name = name;
  current_arg.position = position;
}

class ArgFrame {
 public:
  ArgFrame() : saved_(current_arg) { current_arg = CurrentArg(); }
  ~ArgFrame() { current_arg = saved_; }
  ArgFrame(const ArgFrame&) = delete;
  ArgFrame& operator=(const ArgFrame&) = delete;

 private:
  CurrentArg saved_;
};

// A conversion's TypeError: `op(): argument 'other' (position 2) must be Tensor, not str` (`type`
// is PyTorch's name of the kind) where a binding named the argument, `op(): expected a Tensor,
// got str` (`plain`) elsewhere. `got` overrides the type name of `h` ("a Tensor of 6 element(s)").
[[noreturn]] void ThrowArgType(const char* type, const char* plain, nb::handle h, const char* got = nullptr);

}  // namespace oneflow
