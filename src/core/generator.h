// Random generators: one default per device plus user-made `flow.Generator` objects.
// Note [Philox offsets]: a generator is (seed, offset) over the counter-based Philox4x32-10
// (core/philox.h). A random op reserves the counter blocks it will consume (Reserve), then any
// thread computes any block of that range from (seed, counter) alone, so results do not depend
// on the thread count and the state stays 16 bytes (as PyTorch's CUDA generator).
// Ops that need an unbounded number of draws per element (poisson, multinomial) reserve one
// counter per element and use the high 64 bits of the counter as that element's draw index.
#pragma once
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/device.h"
#include "core/intrusive_ptr.h"

namespace oneflow {

struct PhiloxSeed {
  uint64_t seed;
  uint64_t offset;  // first reserved counter block
};

class Generator : public RefCounted {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;  // PyTorch's default CPU seed
  static constexpr int kStateBytes = 16;                       // seed, offset (little endian)

  explicit Generator(Device device, uint64_t seed = kDefaultSeed) : device_(device), seed_(seed) {}

  const Device& device() const { return device_; }
  void ManualSeed(uint64_t seed);
  uint64_t InitialSeed() const;
  uint64_t Seed();  // a fresh nondeterministic seed, set and returned (flow.seed)
  PhiloxSeed Reserve(uint64_t blocks);
  std::vector<uint8_t> GetState() const;
  void SetState(const uint8_t* data, int64_t nbytes);
  uint64_t offset() const;

 private:
  Device device_;
  mutable std::mutex mu_;  // ops on several threads may share one generator
  uint64_t seed_;
  uint64_t offset_ = 0;
};
using GeneratorPtr = IntrusivePtr<Generator>;

Generator& DefaultGenerator(const Device& device);
GeneratorPtr DefaultGeneratorPtr(const Device& device);
// The generator a random op on `device` uses: `g` when given (checked to be of that device
// type, as PyTorch), else the device's default.
Generator& GeneratorFor(const GeneratorPtr& g, const Device& device);
void ManualSeedAll(uint64_t seed);  // flow.manual_seed: every device's default generator

}  // namespace oneflow
