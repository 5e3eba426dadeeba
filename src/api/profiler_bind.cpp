// flow._C's side of oneflow.profiler (Note [Op profiler] in core/profiler.cpp).
#include <string>

#include "api/bind_registry.h"
#include "api/convert.h"
#include "core/profiler.h"

namespace oneflow {

void BindProfiler(nb::module_& m) {
  m.def("_profiler_enable", [](bool on) { profiler::Enable(on); });
  m.def("_profiler_enabled", [] { return profiler::g_enabled.load(); });
  m.def("_profiler_now_ns", [] { return profiler::NowNs(); });
  m.def("_profiler_record_range", [](const std::string& name, int64_t start_ns, int64_t end_ns) {
    if (profiler::g_enabled.load()) profiler::Record(profiler::Intern(name), start_ns, end_ns, /*user=*/true);
  });
  m.def("_profiler_take_events", [] {
    nb::list out;
    for (const auto& e : profiler::TakeEvents())
      out.append(nb::make_tuple(e.name, e.start_ns, e.end_ns, e.thread, e.user));
    return out;
  }, "the ops and ranges recorded since _profiler_enable(True): (name, start_ns, end_ns, thread, user)");
}
OF_BIND(100, BindProfiler);

}  // namespace oneflow
