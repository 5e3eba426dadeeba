#include "core/device.h"

#include "core/device_runtime.h"
#include "core/error.h"

namespace oneflow {

Device Device::Parse(const std::string& s) {
  Device d;
  std::string type = s, idx;
  if (auto c = s.find(':'); c != std::string::npos) {
    type = s.substr(0, c);
    idx = s.substr(c + 1);
  }
  if (type == "cpu") {
    d.type = DeviceType::kCPU;
  } else if (type == "meta") {
    d.type = DeviceType::kMeta;
  } else if (type == "cuda" || type == "gpu") {
    d.type = DeviceType::kCUDA;
  } else {
    OF_THROW(kRuntime) << "Expected one of cpu, cuda, meta device type at start of device string: " << s;
  }
  if (!idx.empty()) {
    OF_CHECK(idx.find_first_not_of("0123456789") == std::string::npos && idx.size() < 6)
        << "Invalid device string: '" << s << "'";
    d.index = std::stoi(idx);
  } else if (d.type != DeviceType::kCUDA) {
    d.index = -1;
  } else {
    d.index = 0;
  }
  return d;
}

std::string Device::str() const {
  if (type == DeviceType::kCPU) return "cpu";
  if (type == DeviceType::kMeta) return "meta";
  return "cuda:" + std::to_string(index < 0 ? 0 : index);
}

// Through the CUDA runtime's table (Note [Device runtime]): null in a build without CUDA.
int CudaDeviceCount() {
  const DeviceRuntime* rt = CudaRuntime();
  return rt ? rt->device_count() : 0;
}
bool CudaAvailable() { return CudaDeviceCount() > 0; }

void CheckDeviceUsable(const Device& d) {
  if (d.type == DeviceType::kCUDA) RequireCudaRuntime(d).check_device(d.index < 0 ? 0 : d.index);
}

}  // namespace oneflow
