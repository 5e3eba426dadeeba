// Devices: "cpu" and "cuda[:N]". CUDA names parse in every build; using one is a RuntimeError in a
// build without the CUDA backend (ONEFLOW_CUDA, docs/cuda.md) or for a device that does not exist
// (see CheckDeviceUsable).
#pragma once
#include <cstdint>
#include <string>

namespace oneflow {

// kMeta tensors carry shape and dtype but no data: ops on them run meta inference only.
enum class DeviceType : int8_t { kCPU = 0, kCUDA = 1, kMeta = 2 };

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = -1;  // -1: "the current one" (cuda) / unused (cpu)

  static Device Parse(const std::string& s);  // "cpu", "cuda", "cuda:1", "gpu" (legacy alias)
  std::string str() const;                   // "cpu", "cuda:0"
  bool operator==(const Device& o) const {
    return type == o.type && (type == DeviceType::kCPU || index == o.index || index < 0 || o.index < 0);
  }
  bool is_cpu() const { return type == DeviceType::kCPU; }
};

bool CudaAvailable();
int CudaDeviceCount();
// Raises the documented RuntimeError for devices this build cannot run on.
void CheckDeviceUsable(const Device& d);

}  // namespace oneflow
