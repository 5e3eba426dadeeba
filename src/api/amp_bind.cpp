// The autocast state behind flow.autocast (src/autograd/autocast.h), per device type.
#include "api/bind_registry.h"
#include "api/convert.h"
#include "autograd/autocast.h"

namespace oneflow {

namespace {
DeviceType AutocastDevice(const std::string& s) {
  if (s == "cpu") return DeviceType::kCPU;
  if (s == "cuda" || s == "gpu") return DeviceType::kCUDA;
  OF_THROW(kRuntime) << "autocast: unsupported device_type '" << s
                     << "' (this build of oneflow supports 'cpu' and 'cuda')";
}
}  // namespace

void BindAmp(nb::module_& m) {
  namespace ac = autocast;
  m.def("_autocast_is_enabled",
        [](const std::string& d) { return ac::IsEnabled(AutocastDevice(d)); });
  m.def("_autocast_set_enabled",
        [](const std::string& d, bool on) { ac::SetEnabled(AutocastDevice(d), on); });
  m.def("_autocast_get_dtype",
        [](const std::string& d) { return DTypeObject(ac::GetDType(AutocastDevice(d))); });
  m.def("_autocast_set_dtype", [](const std::string& d, nb::handle t) {
    const DType dt = ToDType(t);
    OF_CHECK(dt == DType::kFloat16 || dt == DType::kBFloat16)
        << "autocast: the autocast dtype must be oneflow.float16 or oneflow.bfloat16, got "
        << DTypeName(dt);
    ac::SetDType(AutocastDevice(d), dt);
  });
  m.def("_autocast_is_cache_enabled", &ac::IsCacheEnabled);
  m.def("_autocast_set_cache_enabled", &ac::SetCacheEnabled);
  m.def("_autocast_increment_nesting", &ac::IncrementNesting);
  m.def("_autocast_decrement_nesting", &ac::DecrementNesting);
  m.def("_autocast_clear_cache", &ac::ClearCache);
}
OF_BIND(50, BindAmp);

}  // namespace oneflow
