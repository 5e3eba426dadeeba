#include "core/generator.h"

#include "core/auto_generator.h"

#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/philox.h"

namespace oneflow {

void Generator::ManualSeed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::InitialSeed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seed_;
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> lock(mu_);
  return offset_;
}

uint64_t Generator::Seed() {
  // 63 bits, as PyTorch's default_rng_seed_val, so the value round-trips through signed int64.
  std::random_device rd;
  const uint64_t s = ((uint64_t(rd()) << 32) | rd()) & ((uint64_t(1) << 63) - 1);
  ManualSeed(s);
  return s;
}

PhiloxSeed Generator::Reserve(uint64_t blocks) {
  std::lock_guard<std::mutex> lock(mu_);
  PhiloxSeed r{seed_, offset_};
  offset_ += blocks;
  return r;
}

std::vector<uint8_t> Generator::GetState() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint8_t> s(kStateBytes);
  for (int i = 0; i < 8; ++i) {
    s[i] = uint8_t(seed_ >> (8 * i));
    s[8 + i] = uint8_t(offset_ >> (8 * i));
  }
  return s;
}

void Generator::SetState(const uint8_t* data, int64_t nbytes) {
  OF_CHECK(nbytes == kStateBytes) << "Expected a Philox generator state of size " << kStateBytes
                                  << " but found the input RNG state size to be " << nbytes;
  uint64_t seed = 0, offset = 0;
  for (int i = 0; i < 8; ++i) {
    seed |= uint64_t(data[i]) << (8 * i);
    offset |= uint64_t(data[8 + i]) << (8 * i);
  }
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = offset;
}

namespace {
GeneratorPtr& CpuDefault() {
  static GeneratorPtr* g = new GeneratorPtr(MakeIntrusive<Generator>(Device()));  // never freed
  return *g;
}

const char* TypeName(DeviceType t) {
  return t == DeviceType::kCPU ? "cpu" : t == DeviceType::kCUDA ? "cuda" : "meta";
}
}  // namespace

// One default generator per CUDA device (PyTorch's torch.cuda.default_generators), made when
// first asked for; flow.manual_seed seeds them all.
static std::vector<GeneratorPtr>& CudaDefaults() {
  static auto* v = new std::vector<GeneratorPtr>(CudaDeviceCount());  // never freed
  return *v;
}

GeneratorPtr DefaultGeneratorPtr(const Device& device) {
  CheckDeviceUsable(device);
  if (device.type != DeviceType::kCUDA) return CpuDefault();
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  const int i = device.index < 0 ? 0 : device.index;
  GeneratorPtr& g = CudaDefaults()[i];
  if (!g) g = MakeIntrusive<Generator>(Device{DeviceType::kCUDA, i});
  return g;
}

Generator& DefaultGenerator(const Device& device) { return *DefaultGeneratorPtr(device); }

Generator& GeneratorFor(const GeneratorPtr& g, const Device& device) {
  if (!g) return DefaultGenerator(device);
  if (IsAutoGenerator(*g)) return *g;  // Note [Auto generator]
  // Meta tensors never draw; a CPU generator may drive them (shapes only).
  OF_CHECK(g->device().type == device.type || device.type == DeviceType::kMeta)
      << "Expected a '" << TypeName(device.type) << "' device type for generator but found '"
      << TypeName(g->device().type) << "'";
  return *g;
}

void ManualSeedAll(uint64_t seed) {
  CpuDefault()->ManualSeed(seed);
  for (int i = 0; i < CudaDeviceCount(); ++i) DefaultGenerator(Device{DeviceType::kCUDA, i}).ManualSeed(seed);
}

void PhiloxFill(uint64_t seed, uint64_t lo, uint64_t hi, int64_t n, uint32_t* out) {
  constexpr int kLanes = 64;
  const uint32_t key0 = uint32_t(seed), key1 = uint32_t(seed >> 32);
  alignas(64) uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
  for (int64_t done = 0; done < n; done += kLanes) {
    const int m = int(std::min<int64_t>(kLanes, n - done));
    for (int i = 0; i < kLanes; ++i) {
      const uint64_t c = lo + uint64_t(done + i);
      c0[i] = uint32_t(c);
      c1[i] = uint32_t(c >> 32);
      c2[i] = uint32_t(hi);
      c3[i] = uint32_t(hi >> 32);
    }
    uint32_t k0 = key0, k1 = key1;
    for (int r = 0; r < Philox4x32::kRounds; ++r) {
      for (int i = 0; i < kLanes; ++i) {
        const uint64_t p0 = uint64_t(Philox4x32::kM0) * c0[i],
                       p1 = uint64_t(Philox4x32::kM1) * c2[i];
        const uint32_t n0 = uint32_t(p1 >> 32) ^ c1[i] ^ k0, n2 = uint32_t(p0 >> 32) ^ c3[i] ^ k1;
        c1[i] = uint32_t(p1);
        c3[i] = uint32_t(p0);
        c0[i] = n0;
        c2[i] = n2;
      }
      k0 += Philox4x32::kW0;
      k1 += Philox4x32::kW1;
    }
    uint32_t* o = out + 4 * done;
    for (int i = 0; i < m; ++i) {
      o[4 * i] = c0[i];
      o[4 * i + 1] = c1[i];
      o[4 * i + 2] = c2[i];
      o[4 * i + 3] = c3[i];
    }
  }
}

}  // namespace oneflow
