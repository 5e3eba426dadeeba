// One random generator per device; flow.manual_seed(s) makes every random op reproducible.
#pragma once
#include <cstdint>
#include <random>

#include "core/device.h"

namespace oneflow {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL) { ManualSeed(seed); }
  void ManualSeed(uint64_t seed) {
    seed_ = seed;
    engine_.seed(seed);
  }
  uint64_t InitialSeed() const { return seed_; }
  uint64_t NextU64() { return engine_(); }
  std::mt19937_64& engine() { return engine_; }

 private:
  uint64_t seed_;
  std::mt19937_64 engine_;
};

Generator& DefaultGenerator(const Device& device);
void ManualSeedAll(uint64_t seed);  // flow.manual_seed / flow.seed for every device

}  // namespace oneflow
