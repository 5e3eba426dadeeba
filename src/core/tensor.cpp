#include "core/tensor.h"

#include <cstring>

#include "core/allocator.h"
#include "core/device_runtime.h"
#include "core/storage_offer.h"

namespace oneflow {

namespace {
void FreeCpu(void*, void* data, size_t nbytes) { CpuFree(data, nbytes); }
void FreeCuda(void* ctx, void* data, size_t nbytes) {
  CudaRuntime()->free(data, nbytes, static_cast<int>(reinterpret_cast<intptr_t>(ctx)));  // allocated through it
}
thread_local StorageOffer* t_offer = nullptr;
void ReleaseOffered(void* owner, void*, size_t) {
  auto* arena = static_cast<Storage*>(owner);
  if (arena->DecRef()) delete arena;
}
}  // namespace

void StorageOffer::Open() {
  OF_CHECK(!t_offer) << "a storage offer is already open on this thread";
  taken = IntrusivePtr<Storage>();
  t_offer = this;
}

bool StorageOffer::Settle(const Storage* output) {
  if (t_offer == this) t_offer = nullptr;
  if (!taken) return false;
  IntrusivePtr<Storage> s = std::move(taken);
  if (s.get() == output) return true;
  if (s->RefCount() > 1) {  // someone keeps the temporary: it moves out of the arena
    void* p = CpuAlloc(nbytes);
    std::memcpy(p, s->data(), nbytes);
    s->Replace(p, &FreeCpu, nullptr);
  }
  return false;
}

void ThrowHostAccess(const Tensor& t) {
  OF_THROW_NO_KERNEL(t.device().index) << "not implemented for '" << t.device().str()
                            << "' tensors yet (this op has only a CPU kernel); move the inputs to "
                               "the CPU with .cpu()";
}

IntrusivePtr<Storage> Storage::Allocate(size_t nbytes, Device device) {
  CheckDeviceUsable(device);
  if (device.type == DeviceType::kMeta) return MakeIntrusive<Storage>(nullptr, nbytes, device, nullptr, nullptr);
  if (device.type == DeviceType::kCUDA) {  // (CheckDeviceUsable found the runtime)
    const int index = device.index < 0 ? 0 : device.index;
    void* p = RequireCudaRuntime(device).alloc(nbytes, index);
    Device d{DeviceType::kCUDA, index};
    return MakeIntrusive<Storage>(p, nbytes, d, &FreeCuda, reinterpret_cast<void*>(static_cast<intptr_t>(index)));
  }
  if (StorageOffer* o = t_offer; o && !o->taken && o->nbytes == nbytes) {  // Note [Storage offers]
    o->owner->IncRef();
    o->taken = MakeIntrusive<Storage>(o->data, nbytes, device, &ReleaseOffered, o->owner);
    return o->taken;
  }
  void* p = CpuAlloc(nbytes);
  return MakeIntrusive<Storage>(p, nbytes, device, &FreeCpu, nullptr);
}

TensorImpl::TensorImpl(IntrusivePtr<Storage> storage, int64_t offset, const DimVector& sizes,
                       const DimVector& strides, DType dtype)
    : storage_(std::move(storage)), offset_(offset), sizes_(sizes), strides_(strides),
      dtype_(dtype) {
  RefreshContiguity();
}

void DeleteAutogradMeta(AutogradMeta* m);  // autograd/meta.cpp

TensorImpl::~TensorImpl() {
  if (autograd_meta_) DeleteAutogradMeta(autograd_meta_);
}

void TensorImpl::RefreshContiguity() {
  numel_ = NumelOf(sizes_);
  bool c = true;
  int64_t expected = 1;
  for (int i = sizes_.size() - 1; i >= 0; --i) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) { c = false; break; }
    expected *= sizes_[i];
  }
  is_contiguous_ = c || numel_ == 0;
}

Tensor Empty(const DimVector& sizes, DType dtype, Device device) {
  int64_t numel = 1, stride = 1;
  bool stride_overflows = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t s = sizes[i];
    OF_CHECK(s >= 0) << "Trying to create tensor with negative dimension " << s << ": "
                     << ShapeStr(sizes);
    OF_CHECK(!__builtin_mul_overflow(numel, s, &numel))
        << "CPU out of memory: the number of elements of shape " << ShapeStr(sizes) << " overflows int64";
    // The contiguous strides (the products of the later sizes, a 0 read as 1) must fit int64
    // too, as PyTorch checks: (0, 2**62, 2**62) holds no element but has no first stride either.
    if (i > 0) stride_overflows |= __builtin_mul_overflow(stride, s > 1 ? s : 1, &stride);
  }
  OF_CHECK(!stride_overflows) << "Stride calculation overflowed: shape " << ShapeStr(sizes);
  int64_t nbytes;
  OF_CHECK(!__builtin_mul_overflow(numel, ElementSize(dtype), &nbytes) && nbytes < (int64_t(1) << 48))
      << "CPU out of memory: a tensor of shape " << ShapeStr(sizes) << " and dtype "
      << DTypeName(dtype) << " is too large to allocate";
  auto storage = Storage::Allocate(static_cast<size_t>(nbytes), device);
  return Tensor(MakeIntrusive<TensorImpl>(std::move(storage), 0, sizes, ContiguousStrides(sizes),
                                          dtype));
}

Tensor EmptyLike(const Tensor& t) { return Empty(t.sizes(), t.dtype(), t.device()); }

Tensor MakeView(const Tensor& t, const DimVector& sizes, const DimVector& strides, int64_t offset) {
  auto impl = MakeIntrusive<TensorImpl>(t.impl()->storage_, offset, sizes, strides, t.dtype());
  impl->view_base_ = t.impl()->view_base_ ? t.impl()->view_base_ : IntrusivePtr<TensorImpl>(t.impl());
  return Tensor(std::move(impl));
}

Tensor ScalarToTensor(const Scalar& s, DType dtype) {
  Tensor t = Empty(DimVector(), dtype);
  DispatchAllAndComplex(dtype, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    *t.data<T>() = s.To<T>();
  });
  return t;
}

Tensor WrappedNumber(const Scalar& s) {
  Tensor t = ScalarToTensor(s, s.dtype());
  t.impl()->is_wrapped_number_ = true;
  return t;
}

void CheckHasData(const Tensor& t) {
  OF_CHECK(t.device().type != DeviceType::kMeta)
      << "this operation needs the tensor's values, and a meta tensor has none (in nn.Graph's "
      << "build(), tensors are lazy: return a tensor from build() to get its values)";
}

Scalar ItemOf(const Tensor& t) {
  CheckHasData(t);
  OF_CHECK(t.numel() == 1) << "a Tensor with " << t.numel()
                           << " elements cannot be converted to Scalar";
  if (t.device().type == DeviceType::kCUDA) {
    Tensor h = Empty(DimVector(), t.dtype());
    RequireCudaRuntime(t.device()).copy_to_host(h.raw_ptr(), t.raw_ptr(), t.element_size(), t.device().index);
    return ItemOf(h);
  }
  return DispatchAllAndComplex(t.dtype(), [&](auto tag) -> Scalar {
    using T = typename std::decay_t<decltype(tag)>::type;
    T v = *t.data<T>();
    if constexpr (kIsComplexT<T>) return Scalar(std::complex<double>(v.real(), v.imag()));
    else if constexpr (std::is_same_v<T, bool>) return Scalar(v);
    else if constexpr (std::is_integral_v<T>) return Scalar(static_cast<int64_t>(v));
    else return Scalar(static_cast<double>(static_cast<OpMath<T>>(v)));
  });
}

}  // namespace oneflow
