#include "core/generator.h"

namespace oneflow {

namespace {
Generator& CpuGenerator() {
  static Generator g;
  return g;
}
}  // namespace

Generator& DefaultGenerator(const Device& device) {
  CheckDeviceUsable(device);
  return CpuGenerator();
}

void ManualSeedAll(uint64_t seed) { CpuGenerator().ManualSeed(seed); }

}  // namespace oneflow
