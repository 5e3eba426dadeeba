// The complex family (complex.yaml): complex/polar construction, real/imag/view_as_real/
// view_as_complex (views that reinterpret the element type), conj. Note [Complex dtypes] in
// core/dtype.h; the pointwise entry `angle` is generated.
#include "autograd/functional.h"
#include "kernels/functors.h"
#include "kernels/functors/complex.h"
#include "ops/copy.h"
#include "ops/pointwise.h"
#include "decl/complex.h"
#include "decl/conj.h"
#include "decl/conj_physical.h"
#include "decl/cos.h"
#include "decl/empty.h"
#include "decl/imag.h"
#include "decl/mul.h"
#include "decl/polar.h"
#include "decl/real.h"
#include "decl/sin.h"
#include "decl/view_as_complex.h"
#include "decl/view_as_real.h"

namespace oneflow {

namespace {

// A view of `t`'s memory with another element type (real <-> complex reinterpretation).
Tensor ReinterpretView(const Tensor& t, DType dtype, const DimVector& sizes,
                       const DimVector& strides, int64_t offset) {
  auto impl = MakeIntrusive<TensorImpl>(t.impl()->storage_, offset, sizes, strides, dtype);
  impl->view_base_ = t.impl()->view_base_ ? t.impl()->view_base_ : IntrusivePtr<TensorImpl>(t.impl());
  return Tensor(std::move(impl));
}

// The float parts of a complex tensor as a view: sizes, strides in float elements, offset.
Tensor PartView(const Tensor& input, int part) {
  DimVector st = input.strides();
  for (auto& s : st) s *= 2;
  return ReinterpretView(input, ToRealDType(input.dtype()), input.sizes(), st,
                         input.offset() * 2 + part);
}

Tensor Alias(const Tensor& t) { return MakeView(t, t.sizes(), t.strides(), t.offset()); }

}  // namespace

Tensor Complex(const Tensor& real, const Tensor& imag) {
  OpScope scope("complex");
  OF_CHECK(real.dtype() == imag.dtype())
      << "Expected object of scalar type " << TorchTypeName(real.dtype())
      << " but got scalar type " << TorchTypeName(imag.dtype()) << " for second argument";
  OF_CHECK(real.dtype() == DType::kFloat32 || real.dtype() == DType::kFloat64)
      << "Expected both inputs to be Float or Double tensors but got " << TorchTypeName(real.dtype())
      << " and " << TorchTypeName(imag.dtype());
  CheckSameDevice(real, imag);
  DimVector shape = BroadcastShapes(real.sizes(), imag.sizes());
  Tensor out = Empty(shape, ToComplexDType(real.dtype()), real.device());
  if (out.device().type == DeviceType::kMeta) return out;
  CopyInto(PartView(out, 0), real);
  CopyInto(PartView(out, 1), imag);
  return out;
}

Tensor Real(const Tensor& input) {
  OpScope scope("real");
  return IsComplex(input.dtype()) ? PartView(input, 0) : Alias(input);
}

Tensor Imag(const Tensor& input) {
  OpScope scope("imag");
  OF_CHECK(IsComplex(input.dtype())) << "imag is not implemented for tensors with non-complex dtypes.";
  return PartView(input, 1);
}

Tensor ViewAsReal(const Tensor& input) {
  OpScope scope("view_as_real");
  OF_CHECK(IsComplex(input.dtype())) << "view_as_real is only supported for complex tensors";
  DimVector sz = input.sizes(), st = input.strides();
  for (auto& s : st) s *= 2;
  sz.push_back(2);
  st.push_back(1);
  return ReinterpretView(input, ToRealDType(input.dtype()), sz, st, input.offset() * 2);
}

Tensor ViewAsComplex(const Tensor& input) {
  OpScope scope("view_as_complex");
  OF_CHECK(input.dtype() == DType::kFloat32 || input.dtype() == DType::kFloat64)
      << "view_as_complex is only supported for float and double tensors, but got a tensor of "
         "scalar type: " << TorchTypeName(input.dtype());
  OF_CHECK(input.dim() > 0) << "Input tensor must have one or more dimensions";
  OF_CHECK(input.sizes().back() == 2) << "Tensor must have a last dimension of size 2";
  OF_CHECK(input.strides().back() == 1) << "Tensor must have a last dimension with stride 1";
  DimVector sz(input.sizes().begin(), input.sizes().end() - 1);
  DimVector st(input.strides().begin(), input.strides().end() - 1);
  for (auto& s : st) {
    OF_CHECK(s % 2 == 0) << "Tensor must have a stride divisible by 2 for all but last dimension";
    s /= 2;
  }
  OF_CHECK(input.offset() % 2 == 0) << "Tensor must have a storage_offset divisible by 2";
  return ReinterpretView(input, ToComplexDType(input.dtype()), sz, st, input.offset() / 2);
}

// Note [Eager conj]: PyTorch's conj is a lazy view (a conjugate bit resolved by later ops);
// ours materialises the conjugate at once, so is_conj() is always False and resolve_conj is the
// identity (docs/oneflow_differences.md). On real inputs conj is a view of the input.
Tensor Conj(const Tensor& input) {
  OpScope scope("conj");
  if (!IsComplex(input.dtype())) return Alias(input);
  return UnaryOp<ConjFunctor, ResultKind::kSame, DTypeSet::kAll>(input);
}

Tensor ConjPhysical(const Tensor& input) {
  OpScope scope("conj_physical");
  if (!IsComplex(input.dtype())) return Alias(input);
  return UnaryOp<ConjFunctor, ResultKind::kSame, DTypeSet::kAll>(input);
}

}  // namespace oneflow

namespace oneflow::functional {

// abs * (cos(angle) + i sin(angle)); its gradient is that of complex/mul/cos/sin.
Tensor Polar(const Tensor& abs, const Tensor& angle) {
  OpScope scope("polar");
  OF_CHECK(abs.dtype() == angle.dtype())
      << "Expected object of scalar type " << TorchTypeName(abs.dtype()) << " but got scalar type "
      << TorchTypeName(angle.dtype()) << " for second argument";
  OF_CHECK(abs.dtype() == DType::kFloat32 || abs.dtype() == DType::kFloat64)
      << "Expected both inputs to be Float or Double tensors but got " << TorchTypeName(abs.dtype())
      << " and " << TorchTypeName(angle.dtype());
  return functional::Complex(functional::Mul(abs, functional::Cos(angle)),
                             functional::Mul(abs, functional::Sin(angle)));
}

}  // namespace oneflow::functional
