// Shared machinery of the fused optimizer updates (src/ops/optim_ops.cpp,
// src/ops/optim_adaptive_ops.cpp): argument checks and the per-parameter element loop.
//
// Note [Optimizer update arithmetic]: the per-element math follows torch.optim's single-tensor
// algorithms operation by operation in the parameter's OpMath type (float for float32/16-bit
// parameters), with the Python-float hyper-parameters rounded to that type where torch passes
// them to a tensor op, so float32 results agree with torch to a few ulps per step. 16-bit
// parameters are updated in float and rounded once when stored (torch rounds every
// intermediate tensor to 16 bits; docs/oneflow_differences.md).
#pragma once
#include <array>
#include <type_traits>
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "core/tensor.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/lerp.h"

namespace oneflow::optim {

constexpr int kMaxLists = 6;
// A few dozen flops per element: threads pay off earlier than for a plain add.
constexpr int64_t kUpdateGrain = kGrainSize / 4;

// One list argument of an update op: a tensor per parameter.
struct ListArg {
  const std::vector<Tensor>* tensors;
  const char* name;
  bool written;   // updated in place
  bool optional;  // may be an empty list (the option that needs it is off)
};

// Every check of an update op, before anything is written: list lengths; per parameter the
// same shape, dtype and device in every list; floating dtypes; no parameter requiring grad
// while grad mode is on (the update is an in-place write autograd does not record); `steps`
// (when given) one-element tensors on the CPU.
void CheckUpdateArgs(const std::vector<ListArg>& lists, const std::vector<Tensor>* steps);

// True when the params live on the meta device: meta inference ends after the checks.
bool IsMetaUpdate(const std::vector<Tensor>& params);

// Increments every step tensor in place and returns the new values.
std::vector<double> AdvanceSteps(const std::vector<Tensor>& steps);

// Reads and writes one-element state tensors (step counts, NAdam's mu_product).
double ReadScalar(const Tensor& t);
void WriteScalar(const Tensor& t, double v);

// Calls f(std::bool_constant<flags>...) : option flags become compile-time constants, so the
// element loops have no branches and vectorise (one loop per combination actually used).
template <typename F>
void WithFlags(F&& f) {
  f();
}
template <typename F, typename... Rest>
void WithFlags(F&& f, bool first, Rest... rest) {
  if (first) WithFlags([&](auto... c) { f(std::true_type{}, c...); }, rest...);
  else WithFlags([&](auto... c) { f(std::false_type{}, c...); }, rest...);
}

// torch.lerp with a scalar weight, in the branch torch takes for it (kLow: weight < 0.5), for
// the same rounding.
template <bool kLow, typename M>
inline M Lerp(M start, M end, M weight) {
  if constexpr (kLow) return start + weight * (end - start);
  else return end - (end - start) * (M(1) - weight);
}

// torch.maximum: NaN wins.
template <typename M>
inline M MaxNan(M a, M b) {
  // `|`, not `||`: no short circuit, so the select vectorises.
  return ((a != a) | (a > b)) ? a : b;
}

// Runs body(tag, i, ptr, begin, end) over the elements [begin, end) of parameter i, for every
// parameter; ptr[k] points at the contiguous data of list k's tensor for that parameter
// (nullptr for an empty optional list). A written tensor that is not contiguous is updated in a
// contiguous copy that is copied back; every written tensor's version is bumped. Large
// parameters are split over threads (ParallelFor), small ones run inline.
// CUDA parameters are updated in host copies that are copied back (the same arithmetic as the
// CPU, bit for bit): correct for every optimizer, but two transfers of the state per step. Device
// kernels for the updates are the next step (docs/cuda.md).
template <typename Body>
void RunUpdate(const std::vector<ListArg>& lists, const Body& body) {
  const std::vector<Tensor>& params = *lists[0].tensors;
  for (size_t i = 0; i < params.size(); ++i) {
    DispatchFloat(params[i].dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::array<Tensor, kMaxLists> work;
      std::array<T*, kMaxLists> ptr{};
      for (size_t k = 0; k < lists.size(); ++k) {
        if (lists[k].tensors->empty()) continue;
        work[k] = Contiguous(OnHost((*lists[k].tensors)[i]));
        ptr[k] = work[k].template data<T>();
      }
      ParallelFor(0, params[i].numel(), kUpdateGrain,
                  [&](int64_t b, int64_t e) { body(tag, i, ptr, b, e); });
      for (size_t k = 0; k < lists.size(); ++k) {
        if (!lists[k].written || lists[k].tensors->empty()) continue;
        const Tensor& t = (*lists[k].tensors)[i];
        if (!work[k].is_same(t)) CopyInto(t, work[k]);
        t.BumpVersion();
      }
    });
  }
}

}  // namespace oneflow::optim
