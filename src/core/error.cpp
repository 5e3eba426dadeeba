#include "core/error.h"

#include <cstdlib>
#include <exception>

#include "core/profiler.h"

namespace oneflow {

namespace {
thread_local const char* current_op = nullptr;
thread_local int64_t op_start_ns = 0;
thread_local const char* last_unwound_op = nullptr;
thread_local const char* binding_op = nullptr;  // of the outermost op, while a profiler is active

// The debug frame (where the check fired) is only shown with ONEFLOW_DEBUG=1 (docs/env.md).
bool DebugEnabled() {
  static const bool on = [] {
    const char* v = std::getenv("ONEFLOW_DEBUG");
    return v && v[0] == '1';
  }();
  return on;
}
}  // namespace

Error::Error(ErrorKind kind, std::string msg, int missing_kernel_device)
    : kind_(kind), msg_(std::move(msg)), missing_kernel_device_(missing_kernel_device) {}

// The outermost op is the one the user called (matmul, not the mm it delegates to).
// Note [Op profiler]: the outermost op is also what the profiler records.
OpScope::OpScope(const char* name) : prev_(current_op) {
  if (current_op) return;
  current_op = name;
  op_start_ns = profiler::g_enabled.load(std::memory_order_relaxed) ? profiler::NowNs() : 0;
}
OpScope::~OpScope() {
  if (!prev_) last_unwound_op = std::uncaught_exceptions() ? current_op : nullptr;
  if (!prev_ && op_start_ns && profiler::g_enabled.load(std::memory_order_relaxed))
    profiler::Record(current_op, op_start_ns, profiler::NowNs());
  current_op = prev_;
}
const char* OpScope::Current() { return current_op; }
const char* OpScope::LastUnwound() { return last_unwound_op; }

BindingScope::BindingScope(const char* name) : prev_(binding_op) {
  binding_op = name;
  last_unwound_op = nullptr;
}
BindingScope::~BindingScope() {
  // An exception from the conversions (no OpScope ran) is the binding's op's.
  if (std::uncaught_exceptions() && !last_unwound_op) last_unwound_op = binding_op;
  binding_op = prev_;
}
const char* BindingScope::Current() { return binding_op; }

ErrorBuilder::~ErrorBuilder() noexcept(false) {
  // A message part that threw (a Python repr failing while the message is built) is already in
  // flight: throwing a second exception during its unwinding would call std::terminate (SIGABRT).
  if (std::uncaught_exceptions() > 0) return;
  std::string msg;
  if (const char* op = current_op ? current_op : binding_op) msg = std::string(op) + "(): ";
  msg += ss_.str();
  if (DebugEnabled() && current_op) msg += "\n  [op stack top: " + std::string(current_op) + "]";
  throw Error(kind_, std::move(msg), missing_kernel_device_);
}

}  // namespace oneflow
