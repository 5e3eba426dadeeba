// Shared machinery of the fused optimizer updates (src/ops/optim_ops.cpp,
// src/ops/optim_adaptive_ops.cpp): argument checks and the per-parameter runs of the element
// bodies (kernels/optim_steps.h) on the CPU or the parameter's CUDA device.
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
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "core/tensor.h"
#include "ops/copy.h"
#include "kernels/optim_steps.h"
#include "decl/contiguous.h"
#include "decl/gather.h"

namespace oneflow::optim {

// A few dozen flops per element: threads pay off earlier than for a plain add.
constexpr int64_t kUpdateGrain = kGrainSize / 4;

// One list argument of an update op: a tensor per parameter.
struct ListArg {
  const std::vector<Tensor>* tensors;
  const char* name;
  bool written;   // updated in place
  bool optional;  // may be an empty list (the option that needs it is off)
  std::shared_ptr<const std::vector<Tensor>> real_views{};  // what `tensors` points at, if made here
};

// Every check of an update op, before anything is written: list lengths; per parameter the
// same shape, dtype and device in every list; floating dtypes; no parameter requiring grad
// while grad mode is on (the update is an in-place write autograd does not record); `steps`
// (when given) one-element tensors on the CPU.
// With `complex_as_real`, complex parameters are accepted and every list then holds the real
// views of its complex tensors (view_as_real: the same memory as pairs of floats): torch.optim's
// rule that a complex number is updated as two independent reals (Adam's second moments, RMSprop's
// averages and Rprop's step sizes are per real component).
void CheckUpdateArgs(std::vector<ListArg>& lists, const std::vector<Tensor>* steps, bool complex_as_real = true);

// True when the params live on the meta device: meta inference ends after the checks.
bool IsMetaUpdate(const std::vector<Tensor>& params);

// Increments every step tensor in place and returns the new values.
std::vector<double> AdvanceSteps(const std::vector<Tensor>& steps);

// Reads and writes one-element state tensors (step counts, NAdam's mu_product).
double ReadScalar(const Tensor& t);
void WriteScalar(const Tensor& t, double v);

// Calls f(std::integral_constant<unsigned, bits>{}), bit k set when the k-th flag is: option
// flags become the compile-time kFlags of the step functors (one loop per combination used).
template <unsigned kBits = 0, int kPos = 0, typename F>
void WithFlagBits(F&& f) {
  f(std::integral_constant<unsigned, kBits>{});
}
template <unsigned kBits = 0, int kPos = 0, typename F, typename... Rest>
void WithFlagBits(F&& f, bool first, Rest... rest) {
  if (first) WithFlagBits<kBits | (1u << kPos), kPos + 1>(f, rest...);
  else WithFlagBits<kBits, kPos + 1>(f, rest...);
}

namespace detail {

// Bumps the version of every written tensor of parameter i, copying `work` (contiguous copies,
// or the tensors themselves) back into those it is not.
inline void WriteBack(const std::vector<ListArg>& lists, size_t i,
                      const std::array<Tensor, kMaxLists>& work) {
  for (size_t k = 0; k < lists.size(); ++k) {
    if (!lists[k].written || lists[k].tensors->empty()) continue;
    const Tensor& t = (*lists[k].tensors)[i];
    if (!work[k].is_same(t)) CopyInto(t, work[k]);
    t.BumpVersion();
  }
}

// Contiguous tensors of parameter i in every list, on the host (`host`) or where they are.
template <typename T>
UpdatePtrs<T> Gather(const std::vector<ListArg>& lists, size_t i, bool host,
                     std::array<Tensor, kMaxLists>& work) {
  UpdatePtrs<T> q{};
  for (size_t k = 0; k < lists.size(); ++k) {
    if (lists[k].tensors->empty()) continue;
    const Tensor& t = (*lists[k].tensors)[i];
    work[k] = Contiguous(host ? OnHost(t) : t);
    q.p[k] = work[k].template ptr<T>();
  }
  return q;
}

}  // namespace detail

// Runs body(q, begin, end) over the elements [begin, end) of parameter i on the host; q points
// at contiguous data of each list's tensor (nullptr for an empty optional list). A written
// tensor that is not contiguous, or not on the host, is updated in a contiguous host copy that
// is copied back; every written tensor's version is bumped. Large parameters are split over
// threads (ParallelFor), small ones run inline.
template <typename T, typename Body>
void UpdateOnHost(const std::vector<ListArg>& lists, size_t i, const Body& body) {
  std::array<Tensor, kMaxLists> work;
  const UpdatePtrs<T> q = detail::Gather<T>(lists, i, /*host=*/true, work);
  ParallelFor(0, (*lists[0].tensors)[i].numel(), kUpdateGrain,
              [&](int64_t b, int64_t e) { body(q, b, e); });
  detail::WriteBack(lists, i, work);
}

namespace detail {

// The CUDA parameters gathered for one batched launch (Note [CUDA optimizer updates]); they are
// written back (copies into non-contiguous originals, version bumps) after the launch.
class PendingBatch {
 public:
  virtual ~PendingBatch() = default;
  virtual void Flush(const std::vector<ListArg>& lists) = 0;
};

template <typename F>
class CudaBatch final : public PendingBatch {
 public:
  using T = typename F::Elem;
  CudaBatch(const F& f, int device) : f_(f), device_(device) {}

  // Whether parameter data `p` can join: the same functor bytes (its members are OpMath
  // constants, no padding) and device, room left, and not already in the batch (blocks of one
  // launch run in any order).
  bool Accepts(const F& f, int device, const T* p) const {
    if (device != device_ || b_.count == kBatchTensors || std::memcmp(&f, &f_, sizeof(F)) != 0)
      return false;
    for (int t = 0; t < b_.count; ++t)
      if (b_.q[t].p[0] == p) return false;
    return true;
  }
  void Push(size_t i, const UpdatePtrs<T>& q, int64_t n, std::array<Tensor, kMaxLists>&& work) {
    const int t = b_.count++;
    b_.q[t] = q;
    b_.n[t] = n;
    b_.first[t + 1] = b_.first[t] + static_cast<unsigned>((n + kBatchChunk - 1) / kBatchChunk);
    works_.emplace_back(i, std::move(work));
  }
  void Flush(const std::vector<ListArg>& lists) override {
    if (b_.count == 0) return;
    CudaUpdateSlot<F>::run_batch(f_, b_, device_);
    for (auto& [i, work] : works_) WriteBack(lists, i, work);
    works_.clear();
    b_.count = 0;
  }

 private:
  F f_;
  int device_;
  UpdateBatch<T> b_{};
  std::vector<std::pair<size_t, std::array<Tensor, kMaxLists>>> works_;
};

// Parameters up to this size join batches (a batch numbers its blocks in 32 bits).
constexpr int64_t kMaxBatchedNumel = kBatchChunk << 20;

}  // namespace detail

// One step functor (kernels/optim_steps.h) over every element of parameter i: on its CUDA
// device when the kernel is there (Note [CUDA optimizer updates]: joining `pending`, the batch
// RunUpdate launches), else in the host loop (CUDA parameters then in host copies: the same
// arithmetic, two transfers).
template <typename F>
void RunStep(const std::vector<ListArg>& lists, size_t i, const F& f,
             std::unique_ptr<detail::PendingBatch>& pending) {
  using T = typename F::Elem;
  const Tensor& p = (*lists[0].tensors)[i];
  if (p.device().type == DeviceType::kCUDA && CudaUpdateSlot<F>::run != nullptr) {
    std::array<Tensor, kMaxLists> work;
    const UpdatePtrs<T> q = detail::Gather<T>(lists, i, /*host=*/false, work);
    const int device = p.device().index;
    if (p.numel() > detail::kMaxBatchedNumel) {
      CudaUpdateSlot<F>::run(f, q, p.numel(), device);
      detail::WriteBack(lists, i, work);
      return;
    }
    auto* batch = dynamic_cast<detail::CudaBatch<F>*>(pending.get());
    if (batch == nullptr || !batch->Accepts(f, device, q.p[0])) {
      if (pending) pending->Flush(lists);
      pending = std::make_unique<detail::CudaBatch<F>>(f, device);
      batch = static_cast<detail::CudaBatch<F>*>(pending.get());
    }
    batch->Push(i, q, p.numel(), std::move(work));
    return;
  }
  UpdateOnHost<T>(lists, i, [&](const UpdatePtrs<T>& q, int64_t b, int64_t e) {
    const UpdatePtrs<T> local = q;  // a local copy: the loop keeps the pointers in registers
    for (int64_t j = b; j < e; ++j) f(local, j);
  });
}

// For every parameter i: make(tag, i, run), where tag names the parameter's dtype and make
// builds the step functor from the per-parameter constants and passes it to run. CUDA
// parameters are updated in batches; all are done when this returns (queued on the stream).
template <typename Make>
void RunUpdate(const std::vector<ListArg>& lists, const Make& make) {
  const std::vector<Tensor>& params = *lists[0].tensors;
  std::unique_ptr<detail::PendingBatch> pending;
  for (size_t i = 0; i < params.size(); ++i) {
    DispatchFloat(params[i].dtype(), [&](auto tag) {
      make(tag, i, [&](const auto& f) { RunStep(lists, i, f, pending); });
    });
  }
  if (pending) pending->Flush(lists);
}

}  // namespace oneflow::optim
