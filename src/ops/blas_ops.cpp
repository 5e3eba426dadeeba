// The add*mm family, dot/vdot/mv: one BLAS call each (gemm/gemv with beta folds the addition in),
// the reference loop of kernels/gemm.h for non-float dtypes.
#include <cblas.h>
#include <cstring>

#include "core/parallel.h"
#include "kernels/gemm.h"
#include "ops/copy.h"
#include "ops/pointwise.h"
#include "decl/addbmm.h"
#include "decl/addmm.h"
#include "decl/addmv.h"
#include "decl/baddbmm.h"
#include "decl/clone.h"
#include "decl/conj.h"
#include "decl/contiguous.h"
#include "decl/dot.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/mul.h"
#include "decl/mv.h"
#include "decl/sum.h"
#include "decl/vdot.h"

namespace oneflow {

namespace {

bool IsMeta(const Tensor& t) { return t.device().type == DeviceType::kMeta; }
bool IsZero(const Scalar& s) { return s.is_float() ? s.ToDouble() == 0.0 : s.ToInt() == 0; }


void CheckMatrix(const Tensor& t, const char* what) {
  OF_CHECK(t.dim() == 2) << what << " must be a matrix, got " << t.dim() << "-D tensor";
}

void CheckNotBool(DType t, const char* kernel) {
  OF_CHECK(t != DType::kBool) << "\"" << kernel << "\" not implemented for 'Bool'";
}

// Same dtype for the added tensor and both factors (PyTorch's wording names self and mat2).
void CheckSameDType(const Tensor& self, const Tensor& a, const Tensor& b) {
  OF_CHECK(a.dtype() == b.dtype()) << "expected m1 and m2 to have the same dtype, but got: " << DTypeName(a.dtype())
                                   << " != " << DTypeName(b.dtype());
  OF_CHECK(self.dtype() == b.dtype()) << "self and mat2 must have the same dtype, but got " << TorchTypeName(self.dtype())
                                      << " and " << TorchTypeName(b.dtype());
  CheckSameDevice(self, a);
  CheckSameDevice(a, b);
}

// `self` expanded to `shape` (PyTorch's expand message when it does not fit).
void CheckExpandable(const Tensor& self, const DimVector& shape) {
  bool ok = self.dim() <= shape.size();
  for (int i = 1; ok && i <= self.dim(); ++i) {
    const int64_t s = self.sizes()[self.dim() - i], t = shape[shape.size() - i];
    ok = s == t || s == 1;
  }
  if (ok) return;
  Expand(self, shape);  // raises PyTorch's expand message
}

// Where the product lands: `self` itself when BLAS can write it (unit column stride, no overlap
// with the factors), else a contiguous temporary copied back afterwards.
Tensor InplaceTarget(const Tensor& self, const Tensor& a, const Tensor& b, bool matrix) {
  const bool unit = matrix ? self.strides()[self.dim() - 1] == 1 || self.sizes()[self.dim() - 1] == 1 : true;
  const bool alias = self.storage() == a.storage() || self.storage() == b.storage();
  if (unit && !alias) return self;
  Tensor t = Empty(self.sizes(), self.dtype(), self.device());
  CopyInto(t, self);
  return t;
}

void MmChecks(const Tensor& mat1, const Tensor& mat2) {
  CheckMatrix(mat1, "mat1");
  CheckMatrix(mat2, "mat2");
  OF_CHECK(mat1.sizes()[1] == mat2.sizes()[0])
      << "mat1 and mat2 shapes cannot be multiplied (" << mat1.sizes()[0] << "x" << mat1.sizes()[1] << " and "
      << mat2.sizes()[0] << "x" << mat2.sizes()[1] << ")";
}

void BmmChecks(const Tensor& b1, const Tensor& b2) {
  OF_CHECK(b1.dim() == 3) << "batch1 must be a 3D tensor";
  OF_CHECK(b2.dim() == 3) << "batch2 must be a 3D tensor";
  OF_CHECK(b1.sizes()[0] == b2.sizes()[0]) << "batch1 and batch2 must have same number of batches, got "
                                           << b1.sizes()[0] << " and " << b2.sizes()[0];
  OF_CHECK(b1.sizes()[2] == b2.sizes()[1])
      << "Expected size for first two dimensions of batch2 tensor to be: [" << b1.sizes()[0] << ", "
      << b1.sizes()[2] << "] but got: [" << b2.sizes()[0] << ", " << b2.sizes()[1] << "].";
}

// out = beta * self (broadcast) + alpha * a @ b, out fresh and contiguous [m, n].
void AddmmInto(const Tensor& out, const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& alpha,
               const Scalar& beta) {
  if (IsMeta(out)) return;
  if (!IsZero(beta)) CopyInto(out, self);
  Gemm(a, b, out, alpha, IsZero(beta) ? Scalar(0) : beta);
}

}  // namespace

Tensor Addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, const Scalar& alpha, const Scalar& beta) {
  OpScope scope("addmm");
  MmChecks(mat1, mat2);
  CheckSameDType(input, mat1, mat2);
  CheckNotBool(input.dtype(), "addmm_impl_cpu_");
  const DimVector shape{mat1.sizes()[0], mat2.sizes()[1]};
  CheckExpandable(input, shape);
  Tensor out = Empty(shape, input.dtype(), input.device());
  AddmmInto(out, input, mat1, mat2, alpha, beta);
  return out;
}

Tensor& Addmm_(Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& alpha, const Scalar& beta) {
  OpScope scope("addmm_");
  MmChecks(mat1, mat2);
  CheckSameDType(self, mat1, mat2);
  CheckNotBool(self.dtype(), "addmm_impl_cpu_");
  const DimVector shape{mat1.sizes()[0], mat2.sizes()[1]};
  OF_CHECK(self.sizes() == shape) << "Bad in-place call: input tensor size " << ShapeStr(self.sizes())
                                  << " and output tensor size " << ShapeStr(shape) << " should match";
  CheckInplaceResult(self, self.dtype(), shape);
  if (IsMeta(self)) return self;
  Tensor target = InplaceTarget(self, mat1, mat2, true);
  Gemm(mat1, mat2, target, alpha, IsZero(beta) ? Scalar(0) : beta);
  if (!target.is_same(self)) CopyInto(self, target);
  self.BumpVersion();
  return self;
}

namespace {
void MvChecks(const Tensor& mat, const Tensor& vec, const Tensor* input) {
  OF_CHECK(mat.dim() == 2 && vec.dim() == 1 && (!input || input->dim() <= 1))
      << "vector + matrix @ vector expected, got " << (input ? input->dim() : 1) << ", " << mat.dim() << ", "
      << vec.dim();
  OF_CHECK(mat.sizes()[1] == vec.sizes()[0] && (!input || input->numel() == 1 || input->dim() == 0 ||
                                                input->sizes()[0] == mat.sizes()[0]))
      << "size mismatch, got input (" << (input && input->dim() == 1 ? input->sizes()[0] : mat.sizes()[0])
      << "), mat (" << mat.sizes()[0] << "x" << mat.sizes()[1] << "), vec (" << vec.sizes()[0] << ")";
}
}  // namespace

Tensor Mv(const Tensor& input, const Tensor& vec) {
  OpScope scope("mv");
  MvChecks(input, vec, nullptr);
  CheckSameDType(input, input, vec);
  CheckNotBool(input.dtype(), "addmv_impl_cpu");
  Tensor out = Empty(DimVector{input.sizes()[0]}, input.dtype(), input.device());
  if (!IsMeta(out)) Gemv(input, vec, out, Scalar(1), Scalar(0));
  return out;
}

Tensor Addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  OpScope scope("addmv");
  MvChecks(mat, vec, &input);
  CheckSameDType(input, mat, vec);
  CheckNotBool(input.dtype(), "addmv_impl_cpu");
  Tensor out = Empty(DimVector{mat.sizes()[0]}, input.dtype(), input.device());
  if (IsMeta(out)) return out;
  if (!IsZero(beta)) CopyInto(out, input);
  Gemv(mat, vec, out, alpha, IsZero(beta) ? Scalar(0) : beta);
  return out;
}

Tensor& Addmv_(Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  OpScope scope("addmv_");
  MvChecks(mat, vec, &self);
  CheckSameDType(self, mat, vec);
  CheckNotBool(self.dtype(), "addmv_impl_cpu");
  const DimVector shape{mat.sizes()[0]};
  OF_CHECK(self.sizes() == shape) << "Bad in-place call: input tensor size " << ShapeStr(self.sizes())
                                  << " and output tensor size " << ShapeStr(shape) << " should match";
  CheckInplaceResult(self, self.dtype(), shape);
  if (IsMeta(self)) return self;
  Tensor target = InplaceTarget(self, mat, vec, false);
  Gemv(mat, vec, target, alpha, IsZero(beta) ? Scalar(0) : beta);
  if (!target.is_same(self)) CopyInto(self, target);
  self.BumpVersion();
  return self;
}

namespace {
// out [m,n] += alpha * sum_b batch1[b] @ batch2[b], after out = beta * self.
void AddbmmInto(const Tensor& out, const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& alpha,
                const Scalar& beta) {
  if (IsMeta(out)) return;
  const int64_t batch = b1.sizes()[0];
  if (!IsZero(beta)) {
    if (!out.is_same(self)) CopyInto(out, self);
  } else if (batch == 0) {
    FillWith(out, Scalar(0));
  }
  for (int64_t i = 0; i < batch; ++i) {
    const Scalar bt = i > 0 ? Scalar(1) : (IsZero(beta) ? Scalar(0) : beta);
    Gemm(Select0(b1, i), Select0(b2, i), out, alpha, bt);
  }
  if (batch == 0 && !IsZero(beta)) {  // no product: out = beta * self
    Tensor scaled = Mul(out, WrappedNumber(beta));
    CopyInto(out, scaled);
  }
}
}  // namespace

Tensor Addbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
              const Scalar& alpha) {
  OpScope scope("addbmm");
  BmmChecks(batch1, batch2);
  CheckSameDType(input, batch1, batch2);
  CheckNotBool(input.dtype(), "addbmm");
  const DimVector shape{batch1.sizes()[1], batch2.sizes()[2]};
  CheckExpandable(input, shape);
  Tensor out = Empty(shape, input.dtype(), input.device());
  AddbmmInto(out, input, batch1, batch2, alpha, beta);
  return out;
}

Tensor& Addbmm_(Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  OpScope scope("addbmm_");
  BmmChecks(batch1, batch2);
  CheckSameDType(self, batch1, batch2);
  CheckNotBool(self.dtype(), "addbmm");
  const DimVector shape{batch1.sizes()[1], batch2.sizes()[2]};
  OF_CHECK(self.sizes() == shape) << "Bad in-place call: input tensor size " << ShapeStr(self.sizes())
                                  << " and output tensor size " << ShapeStr(shape) << " should match";
  CheckInplaceResult(self, self.dtype(), shape);
  if (IsMeta(self)) return self;
  Tensor target = InplaceTarget(self, batch1, batch2, true);
  AddbmmInto(target, target, batch1, batch2, alpha, beta);
  if (!target.is_same(self)) CopyInto(self, target);
  self.BumpVersion();
  return self;
}

Tensor Baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  OpScope scope("baddbmm");
  BmmChecks(batch1, batch2);
  CheckSameDType(input, batch1, batch2);
  CheckNotBool(input.dtype(), "baddbmm");
  const DimVector shape{batch1.sizes()[0], batch1.sizes()[1], batch2.sizes()[2]};
  CheckExpandable(input, shape);
  Tensor out = Empty(shape, input.dtype(), input.device());
  if (IsMeta(out)) return out;
  if (!IsZero(beta)) CopyInto(out, input);
  BatchedGemm(batch1, batch2, out, alpha, IsZero(beta) ? Scalar(0) : beta);
  return out;
}

Tensor& Baddbmm_(Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  OpScope scope("baddbmm_");
  BmmChecks(batch1, batch2);
  CheckSameDType(self, batch1, batch2);
  CheckNotBool(self.dtype(), "baddbmm");
  const DimVector shape{batch1.sizes()[0], batch1.sizes()[1], batch2.sizes()[2]};
  OF_CHECK(self.sizes() == shape) << "Bad in-place call: input tensor size " << ShapeStr(self.sizes())
                                  << " and output tensor size " << ShapeStr(shape) << " should match";
  CheckInplaceResult(self, self.dtype(), shape);
  if (IsMeta(self)) return self;
  // BatchedGemm writes each batch's matrix in place: it needs the batches contiguous.
  Tensor target = self.is_contiguous() && self.storage() != batch1.storage() && self.storage() != batch2.storage()
                      ? self
                      : Contiguous(Clone(self));
  BatchedGemm(batch1, batch2, target, alpha, IsZero(beta) ? Scalar(0) : beta);
  if (!target.is_same(self)) CopyInto(self, target);
  self.BumpVersion();
  return self;
}

namespace {
void DotChecks(const Tensor& a, const Tensor& b, const char* name) {
  OF_CHECK(a.dim() == 1 && b.dim() == 1) << "1D tensors expected, but got " << a.dim() << "D and " << b.dim()
                                         << "D tensors";
  OF_CHECK(a.dtype() == b.dtype()) << name << " : expected both vectors to have same dtype, but found "
                                   << TorchTypeName(a.dtype()) << " and " << TorchTypeName(b.dtype());
  OF_CHECK(a.numel() == b.numel()) << "inconsistent tensor size, expected tensor [" << a.numel() << "] and src ["
                                   << b.numel() << "] to have the same number of elements, but got " << a.numel()
                                   << " and " << b.numel() << " elements respectively";
  CheckSameDevice(a, b);
  CheckNotBool(a.dtype(), name);
}

// sum a_i b_i, or sum conj(a_i) b_i (vdot) when conj_a; the two differ for complex only.
Tensor DotKernel(const Tensor& a, const Tensor& b, bool conj_a) {
  // CUDA: the products summed by the reduction kernel, in a's dtype (as the CPU's result).
  if (a.device().type == DeviceType::kCUDA)
    return Sum(Mul(conj_a && IsComplex(a.dtype()) ? Conj(a) : a, b), std::nullopt, false, a.dtype());
  Tensor out = Empty(DimVector{}, a.dtype(), a.device());
  if (IsMeta(out)) return out;
  const int64_t n = a.numel(), sa = a.strides()[0], sb = b.strides()[0];
  if (IsComplex(a.dtype())) {
    // BLAS's cdotu/cdotc (zdot*): the result written through a pointer.
    void* r = out.raw_data();
    if (n == 0) {
      std::memset(r, 0, ElementSize(a.dtype()));
    } else if (a.dtype() == DType::kComplex64) {
      (conj_a ? cblas_cdotc_sub : cblas_cdotu_sub)(n, a.raw_data(), sa, b.raw_data(), sb, r);
    } else {
      (conj_a ? cblas_zdotc_sub : cblas_zdotu_sub)(n, a.raw_data(), sa, b.raw_data(), sb, r);
    }
  } else if (a.dtype() == DType::kFloat32) {
    *out.data<float>() = n == 0 ? 0.0f : cblas_sdot(n, a.data<float>(), sa, b.data<float>(), sb);
  } else if (a.dtype() == DType::kFloat64) {
    *out.data<double>() = n == 0 ? 0.0 : cblas_ddot(n, a.data<double>(), sa, b.data<double>(), sb);
  } else {
    DispatchNumber(a.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      using M = OpMath<T>;
      M acc = M(0);
      for (int64_t i = 0; i < n; ++i)
        acc += static_cast<M>(a.data<T>()[i * sa]) * static_cast<M>(b.data<T>()[i * sb]);
      *out.data<T>() = static_cast<T>(acc);
    });
  }
  return out;
}
}  // namespace

Tensor Dot(const Tensor& input, const Tensor& tensor) {
  OpScope scope("dot");
  DotChecks(input, tensor, "dot");
  return DotKernel(input, tensor, false);
}

Tensor Vdot(const Tensor& input, const Tensor& other) {
  OpScope scope("vdot");
  DotChecks(input, other, "vdot");
  return DotKernel(input, other, true);
}

}  // namespace oneflow
