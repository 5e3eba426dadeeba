// The op profiler behind flow.profiler / flow.autograd.profiler (Note [Op profiler]).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace oneflow::profiler {

struct Event {
  const char* name;  // the op's name: a string literal of the op table's generated code
  int64_t start_ns, end_ns;  // steady clock (CLOCK_MONOTONIC: Python's time.monotonic_ns)
  uint64_t thread;
  bool user;  // a record_function range (else an op)
};

extern std::atomic<bool> g_enabled;
int64_t NowNs();
void Record(const char* name, int64_t start_ns, int64_t end_ns, bool user = false);
void Enable(bool on);               // on: clears the events recorded so far
std::vector<Event> TakeEvents();    // the events recorded since Enable(true), in end order
// A copy of `name` that lives as long as the process, for names that do not (record_function's,
// Python autograd.Function nodes'); a program has few distinct ones.
const char* Intern(const std::string& name);

}  // namespace oneflow::profiler
