// A minimal intrusive reference-counted pointer: one allocation per object, one atomic per copy.
#pragma once
#include <atomic>
#include <utility>

namespace oneflow {

class RefCounted {
 public:
  void IncRef() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  bool DecRef() const { return refs_.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  int RefCount() const { return refs_.load(std::memory_order_relaxed); }

 protected:
  virtual ~RefCounted() = default;
  template <typename T> friend class IntrusivePtr;

 private:
  mutable std::atomic<int> refs_{0};
};

template <typename T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  explicit IntrusivePtr(T* p) : p_(p) { if (p_) p_->IncRef(); }
  IntrusivePtr(const IntrusivePtr& o) : p_(o.p_) { if (p_) p_->IncRef(); }
  IntrusivePtr(IntrusivePtr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  ~IntrusivePtr() { Reset(); }
  IntrusivePtr& operator=(IntrusivePtr o) noexcept { std::swap(p_, o.p_); return *this; }
  void Reset() {
    if (p_ && p_->DecRef()) delete p_;
    p_ = nullptr;
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const IntrusivePtr& o) const { return p_ == o.p_; }

 private:
  T* p_ = nullptr;
};

template <typename T, typename... Args>
IntrusivePtr<T> MakeIntrusive(Args&&... args) {
  return IntrusivePtr<T>(new T(std::forward<Args>(args)...));
}

}  // namespace oneflow
