// Grad mode: a thread-local switch read on every op (docs/architecture.md §3: recording is part of the op entry).
// inference_mode is the same switch here: no graph is recorded while it is on.
#pragma once

namespace oneflow {

namespace detail {
inline thread_local bool g_grad_enabled = true;
}

struct GradMode {
  static bool is_enabled() { return detail::g_grad_enabled; }
  static void set_enabled(bool on) { detail::g_grad_enabled = on; }
};

// RAII switch: restores the previous mode when it goes out of scope (also on exceptions).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool on) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(on); }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

}  // namespace oneflow
