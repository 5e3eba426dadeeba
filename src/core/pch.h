// The precompiled header of the core library (CMakeLists.txt, docs/build.md "Precompiled
// headers"): the standard library and the src/core headers that nearly every translation unit
// parses. Parsing them took ~0.9 s of the 2-5 s of a typical file, ~450 times in a clean build.
// Only stable headers belong here: editing one recompiles every file of the library. Op
// declarations (generated/decl), functors and kernels stay out (a new op must not rebuild all).
// Files keep their own includes: this header is an optimisation, never a dependency.
#pragma once
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "core/error.h"
#include "core/generator.h"
#include "core/parallel.h"
#include "core/tensor.h"
