// matmul / mm / bmm on kernels/gemm.h (OpenBLAS for float32/float64, chosen by measurement, see
// docs/decisions.md; a plain reference loop for the other dtypes).
#include "kernels/gemm.h"
#include "ops/copy.h"
#include "ops/promotion.h"
#include "decl/bmm.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/matmul.h"
#include "decl/mm.h"
#include "decl/reshape.h"
#include "decl/squeeze.h"
#include "decl/unsqueeze.h"

namespace oneflow {

namespace {

DType MatmulDType(const Tensor& a, const Tensor& b) {
  OF_CHECK(a.dtype() == b.dtype()) << "expected m1 and m2 to have the same dtype, but got: "
                                   << DTypeName(a.dtype()) << " != " << DTypeName(b.dtype());
  CheckSameDevice(a, b);
  return a.dtype();
}

}  // namespace

Tensor Mm(const Tensor& input, const Tensor& mat2) {
  OpScope scope("mm");
  OF_CHECK(input.dim() == 2) << "self must be a matrix, got " << input.dim() << "-D tensor";
  OF_CHECK(mat2.dim() == 2) << "mat2 must be a matrix, got " << mat2.dim() << "-D tensor";
  OF_CHECK(input.sizes()[1] == mat2.sizes()[0])
      << "mat1 and mat2 shapes cannot be multiplied (" << input.sizes()[0] << "x"
      << input.sizes()[1] << " and " << mat2.sizes()[0] << "x" << mat2.sizes()[1] << ")";
  DType dt = MatmulDType(input, mat2);
  Tensor out = Empty(DimVector{input.sizes()[0], mat2.sizes()[1]}, dt, input.device());
  if (out.device().type != DeviceType::kMeta) Gemm(input, mat2, out, Scalar(1), Scalar(0));
  return out;
}

Tensor Bmm(const Tensor& input, const Tensor& mat2) {
  OpScope scope("bmm");
  // PyTorch's words, then its older (and upstream OneFlow's) with the dims found.
  OF_CHECK(input.dim() == 3) << "batch1 must be a 3D tensor: Expected 3-dimensional tensor, but got " << input.dim()
                             << "-dimensional tensor for argument #1 'batch1'";
  OF_CHECK(mat2.dim() == 3) << "batch2 must be a 3D tensor: Expected 3-dimensional tensor, but got " << mat2.dim()
                            << "-dimensional tensor for argument #2 'batch2'";
  OF_CHECK(input.sizes()[0] == mat2.sizes()[0])
      << "batch1 and batch2 must have same number of batches, got " << input.sizes()[0]
      << " and " << mat2.sizes()[0];
  OF_CHECK(input.sizes()[2] == mat2.sizes()[1])
      << "Expected size for first two dimensions of batch2 tensor to be: [" << input.sizes()[0]
      << ", " << input.sizes()[2] << "] but got: [" << mat2.sizes()[0] << ", " << mat2.sizes()[1]
      << "].";
  DType dt = MatmulDType(input, mat2);
  Tensor out = Empty(DimVector{input.sizes()[0], input.sizes()[1], mat2.sizes()[2]}, dt, input.device());
  BatchedGemm(input, mat2, out, Scalar(1), Scalar(0));
  return out;
}

Tensor Matmul(const Tensor& input, const Tensor& other) {
  OpScope scope("matmul");
  const int da = input.dim(), db = other.dim();
  OF_CHECK(da > 0 && db > 0) << "both arguments to matmul need to be at least 1D, but they are "
                             << da << "D and " << db << "D";
  if (da == 1 && db == 1) {
    OF_CHECK(input.sizes()[0] == other.sizes()[0])
        << "inconsistent tensor size, expected tensor [" << input.sizes()[0]
        << "] and src [" << other.sizes()[0] << "] to have the same number of elements, but got "
        << input.sizes()[0] << " and " << other.sizes()[0] << " elements respectively";
    return Reshape(Mm(Unsqueeze(input, 0), Unsqueeze(other, 1)), DimVector{});
  }
  if (da == 2 && db == 1) return Squeeze(Mm(input, Unsqueeze(other, 1)), DimVector{-1});
  if (da == 1 && db == 2) return Squeeze(Mm(Unsqueeze(input, 0), other), DimVector{0});
  if (da == 2 && db == 2) return Mm(input, other);
  if (da >= 3 && db == 2) {
    // [..., m, k] @ [k, n]: the batch dims fold into the rows of one GEMM (as PyTorch does), far
    // faster than a batch of small products (nn.Linear on sequences).
    const int64_t k = input.sizes()[da - 1];
    DimVector os(input.sizes().begin(), input.sizes().end() - 1);
    const int64_t rows = NumelOf(os);
    OF_CHECK(k == other.sizes()[0]) << "mat1 and mat2 shapes cannot be multiplied (" << rows
                                    << "x" << k << " and " << other.sizes()[0] << "x"
                                    << other.sizes()[1] << ")";
    os.push_back(other.sizes()[1]);
    return Reshape(Mm(Reshape(input, DimVector{rows, k}), other), os);
  }
  // Batched with broadcasting of the batch dims; 1-D operands get a temporary unit dim.
  Tensor a = da == 1 ? Unsqueeze(input, 0) : input;
  Tensor b = db == 1 ? Unsqueeze(other, 1) : other;
  const int64_t m = a.sizes()[a.dim() - 2], k = a.sizes()[a.dim() - 1];
  const int64_t k2 = b.sizes()[b.dim() - 2], n = b.sizes()[b.dim() - 1];
  OF_CHECK(k == k2) << "mat1 and mat2 shapes cannot be multiplied (" << m << "x" << k << " and "
                    << k2 << "x" << n << ")";
  DimVector ba(a.sizes().begin(), a.sizes().end() - 2), bb(b.sizes().begin(), b.sizes().end() - 2);
  DimVector batch = BroadcastShapes(ba, bb);
  const int64_t nb = NumelOf(batch);
  DimVector ea = batch, eb = batch;
  ea.push_back(m); ea.push_back(k);
  eb.push_back(k); eb.push_back(n);
  DType dt = MatmulDType(a, b);
  Tensor a3 = Reshape(Expand(a, ea), DimVector{nb, m, k});
  Tensor b3 = Reshape(Expand(b, eb), DimVector{nb, k, n});
  Tensor out = Empty(DimVector{nb, m, n}, dt, a.device());
  BatchedGemm(a3, b3, out, Scalar(1), Scalar(0));
  DimVector os = batch;
  if (da > 1) os.push_back(m);
  if (db > 1) os.push_back(n);
  return Reshape(out, os);
}

}  // namespace oneflow
