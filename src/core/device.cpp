#include "core/device.h"

#include "core/error.h"
#ifdef ONEFLOW_WITH_CUDA
#include "cuda/runtime.h"
#endif

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

#ifdef ONEFLOW_WITH_CUDA
bool CudaAvailable() { return cuda::DeviceCount() > 0; }
int CudaDeviceCount() { return cuda::DeviceCount(); }

void CheckDeviceUsable(const Device& d) {
  if (d.type == DeviceType::kCUDA) cuda::CheckDeviceIndex(d.index < 0 ? 0 : d.index);
}
#else
bool CudaAvailable() { return false; }
int CudaDeviceCount() { return 0; }

void CheckDeviceUsable(const Device& d) {
  OF_CHECK(d.type != DeviceType::kCUDA) << "device '" << d.str()
                       << "' is not available: this build of oneflow has no CUDA support "
                          "(flow.cuda.is_available() is False)";
}
#endif

}  // namespace oneflow
