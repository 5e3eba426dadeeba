// The eager local tensor: a view (sizes, strides, offset, dtype) over a shared Storage.
// Note [Version counter]: the counter lives on the Storage, so every view of the same memory
// sees one counter; in-place kernels bump it and autograd compares it with the value it saved.
#pragma once
#include <atomic>
#include <cstdint>

#include "core/device.h"
#include "core/dtype.h"
#include "core/intrusive_ptr.h"
#include "core/scalar.h"
#include "core/shape.h"

namespace oneflow {

class Storage : public RefCounted {
 public:
  using Deleter = void (*)(void* ctx, void* data, size_t nbytes);
  Storage(void* data, size_t nbytes, Device device, Deleter deleter, void* ctx)
      : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter), ctx_(ctx) {}
  ~Storage() override { if (deleter_) deleter_(ctx_, data_, nbytes_); }
  static IntrusivePtr<Storage> Allocate(size_t nbytes, Device device);

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  const Device& device() const { return device_; }
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void BumpVersion() { version_.fetch_add(1, std::memory_order_relaxed); }
  Deleter deleter() const { return deleter_; }
  // Moves the bytes to another allocation of the same size (Tensor.share_memory_): every tensor
  // on this storage follows. The old allocation lives on until this storage dies, since numpy
  // and DLPack views taken before may still point into it.
  void Replace(void* data, Deleter deleter, void* ctx) {
    retired_ = MakeIntrusive<Storage>(data_, nbytes_, device_, deleter_, ctx_);
    data_ = data;
    deleter_ = deleter;
    ctx_ = ctx;
  }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Deleter deleter_;
  void* ctx_;
  std::atomic<uint32_t> version_{0};
  IntrusivePtr<Storage> retired_;  // see Replace
};

struct AutogradMeta;  // defined by the autograd part; null for tensors that never met autograd

class TensorImpl : public RefCounted {
 public:
  TensorImpl(IntrusivePtr<Storage> storage, int64_t offset, const DimVector& sizes,
             const DimVector& strides, DType dtype);
  ~TensorImpl() override;

  IntrusivePtr<Storage> storage_;
  int64_t offset_;  // in elements
  DimVector sizes_, strides_;
  DType dtype_;
  bool is_contiguous_;
  bool requires_grad_ = false;
  bool is_wrapped_number_ = false;  // a Python number as a 0-d tensor: lowest promotion priority
  int64_t numel_;
  AutogradMeta* autograd_meta_ = nullptr;  // owned; see autograd part
  void* pyobj_ = nullptr;  // the one live Python wrapper, if any (borrowed; cleared by it)
  // Views (MakeView) remember the tensor that owns their memory layout, so that autograd can
  // rebase that tensor's history when the view is modified in place.
  IntrusivePtr<TensorImpl> view_base_;

  void RefreshContiguity();
};

class Tensor;
[[noreturn]] void ThrowHostAccess(const Tensor& t);

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const DimVector& sizes() const { return impl_->sizes_; }
  const DimVector& strides() const { return impl_->strides_; }
  int64_t size(int64_t d) const { return impl_->sizes_[WrapDim(d, dim())]; }
  int64_t stride(int64_t d) const { return impl_->strides_[WrapDim(d, dim())]; }
  int dim() const { return impl_->sizes_.size(); }
  int64_t numel() const { return impl_->numel_; }
  DType dtype() const { return impl_->dtype_; }
  const Device& device() const { return impl_->storage_->device(); }
  int64_t offset() const { return impl_->offset_; }
  bool is_contiguous() const { return impl_->is_contiguous_; }
  int64_t element_size() const { return ElementSize(impl_->dtype_); }
  Storage* storage() const { return impl_->storage_.get(); }
  // Note [Host access of device tensors]: raw_data()/data<T>() are the host kernels' way to the
  // values, so they refuse a CUDA tensor: an op without a CUDA kernel then raises a
  // NotImplementedError naming itself instead of dereferencing device memory on the host.
  // Device kernels, the engine's plans, data_ptr and DLPack take the address with raw_ptr().
  char* raw_data() const {
    if (__builtin_expect(impl_->storage_->device().type == DeviceType::kCUDA, 0)) ThrowHostAccess(*this);
    return raw_ptr();
  }
  char* raw_ptr() const {
    return static_cast<char*>(impl_->storage_->data()) + impl_->offset_ * element_size();
  }
  template <typename T> T* data() const { return reinterpret_cast<T*>(raw_data()); }
  template <typename T> T* ptr() const { return reinterpret_cast<T*>(raw_ptr()); }  // device ok
  bool requires_grad() const { return impl_->requires_grad_; }
  bool is_wrapped_number() const { return impl_->is_wrapped_number_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  void BumpVersion() const { impl_->storage_->BumpVersion(); }

 private:
  IntrusivePtr<TensorImpl> impl_;
};

// Fresh tensors. Negative sizes and overflowing byte counts are errors raised here.
Tensor Empty(const DimVector& sizes, DType dtype, Device device = Device());
Tensor EmptyLike(const Tensor& t);  // contiguous, same dtype/device
// A view of t's storage (no copy); the caller has checked that it stays in bounds.
Tensor MakeView(const Tensor& t, const DimVector& sizes, const DimVector& strides, int64_t offset);
Tensor ScalarToTensor(const Scalar& s, DType dtype);  // 0-d tensor holding s
Tensor WrappedNumber(const Scalar& s);                // 0-d tensor marked as a Python number
Scalar ItemOf(const Tensor& t);                       // value of a one-element tensor
// Data-dependent ops (item, nonzero, advanced indexing, numpy) can't run on meta tensors.
void CheckHasData(const Tensor& t);

}  // namespace oneflow
