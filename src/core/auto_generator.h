// Note [Auto generator]: upstream OneFlow's `flow.Generator(device="auto")` is one generator that
// any device's random op may take. Philox needs no device-side state (Note [Philox offsets] in
// core/generator.h), so here it is one (seed, offset) pair serving every device: a Generator
// whose device check GeneratorFor lifts; its draws on a device are those of that device's
// generator under the same seed and offset. (Upstream keeps one sub-generator per device.)
// A subclass in its own header, so that core/generator.h, which every op's file includes,
// stays as it is.
#pragma once
#include "core/generator.h"

namespace oneflow {

class AutoGenerator final : public Generator {
 public:
  explicit AutoGenerator(uint64_t seed = kDefaultSeed) : Generator(Device(), seed) {}
};

inline GeneratorPtr MakeAutoGenerator() { return GeneratorPtr(new AutoGenerator()); }
inline bool IsAutoGenerator(const Generator& g) { return dynamic_cast<const AutoGenerator*>(&g) != nullptr; }

}  // namespace oneflow
