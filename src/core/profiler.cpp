// Note [Op profiler]: while a profiler is active, every op the user calls (the outermost
// OpScope: `linear`, not the `addmm` it runs) is recorded with its host-side start and end. The
// cost when no profiler is active is one relaxed atomic load per op. Ops run on the calling
// thread, so the times are those of the op's kernels on the CPU; a CUDA op's time is that of its
// launch (kernels run asynchronously). A backward pass is the op `backward` holding one event per
// graph node it runs (MulBackward0, ...: autograd/engine.cpp), as PyTorch's profiler shows them.
#include "core/profiler.h"

#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

namespace oneflow::profiler {

std::atomic<bool> g_enabled{false};

namespace {
std::mutex mu;
std::vector<Event>& Events() {
  static std::vector<Event> events;
  return events;
}
}  // namespace

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Record(const char* name, int64_t start_ns, int64_t end_ns, bool user) {
  const uint64_t thread = std::hash<std::thread::id>{}(std::this_thread::get_id());
  std::lock_guard<std::mutex> lock(mu);
  Events().push_back({name, start_ns, end_ns, thread, user});
}

void Enable(bool on) {
  std::lock_guard<std::mutex> lock(mu);
  if (on) Events().clear();
  g_enabled.store(on, std::memory_order_relaxed);
}

const char* Intern(const std::string& name) {
  static std::mutex names_mu;
  static std::set<std::string> names;
  std::lock_guard<std::mutex> lock(names_mu);
  return names.insert(name).first->c_str();
}

std::vector<Event> TakeEvents() {
  std::lock_guard<std::mutex> lock(mu);
  std::vector<Event> out;
  out.swap(Events());
  return out;
}

}  // namespace oneflow::profiler
