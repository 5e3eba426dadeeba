#include "ops/promotion.h"
#include "decl/add.h"

namespace oneflow {

namespace {
constexpr int kUndefined = -1;

int Category(DType t) {
  return t == DType::kBool ? 0 : IsComplex(t) ? 3 : IsFloating(t) ? 2 : 1;
}

struct TierState {
  int dtype = kUndefined;
  void Add(DType t) { dtype = dtype == kUndefined ? static_cast<int>(t) : static_cast<int>(PromoteTypes(static_cast<DType>(dtype), t)); }
};

// `higher` wins unless `lower` is of a higher category.
int Combine(int higher, int lower) {
  if (higher == kUndefined) return lower;
  if (lower == kUndefined) return higher;
  DType h = static_cast<DType>(higher), l = static_cast<DType>(lower);
  if (Category(l) > Category(h)) return static_cast<int>(PromoteTypes(h, l));
  return higher;
}
}  // namespace

DType ResultType(std::initializer_list<const Tensor*> operands) {
  TierState dim, zero, wrapped;
  for (const Tensor* t : operands) {
    if (!t || !t->defined()) continue;
    if (t->is_wrapped_number()) {
      // A Python float is "some float": it takes the default dtype, not float64 (a Python
      // complex the default's complex dtype).
      DType d = t->dtype();
      wrapped.Add(IsComplex(d) ? ToComplexDType(DefaultFloatDType())
                  : IsFloating(d) ? DefaultFloatDType() : d);
    } else if (t->dim() == 0) {
      zero.Add(t->dtype());
    } else {
      dim.Add(t->dtype());
    }
  }
  int r = Combine(dim.dtype, Combine(zero.dtype, wrapped.dtype));
  OF_ASSERT(r != kUndefined) << "result type of no operands";
  return static_cast<DType>(r);
}

bool CanCast(DType from, DType to) {
  if (IsComplex(from) && !IsComplex(to)) return false;
  if (IsFloating(from) && !IsFloating(to) && !IsComplex(to)) return false;  // a real into a complex: PyTorch casts
  if (from != DType::kBool && to == DType::kBool) return false;
  return true;
}

}  // namespace oneflow
