// matmul / mm / bmm. float32/float64 go to OpenBLAS gemm (chosen by measurement, see
// docs/decisions.md); other dtypes use a plain reference loop (the oracle for future kernels).
#include <cblas.h>

#include "core/parallel.h"
#include "ops/copy.h"
#include "ops/promotion.h"
#include "ops_decl.h"

namespace oneflow {

namespace {

// A 2-D operand as gemm wants it: either row-major with unit column stride, or transposed.
struct GemmOperand {
  const char* data;
  bool trans;
  int64_t ld;
};

// Uses `t`'s memory directly when one of its two inner strides is 1, else copies.
GemmOperand AsGemm(const Tensor& t, int64_t rows, int64_t cols, Tensor* keep) {
  const int64_t s0 = t.strides()[t.dim() - 2], s1 = t.strides()[t.dim() - 1];
  if (s1 == 1 && (s0 >= std::max<int64_t>(1, cols) || rows == 1)) return {t.raw_data(), false, std::max<int64_t>(s0, std::max<int64_t>(1, cols))};
  if (s0 == 1 && (s1 >= std::max<int64_t>(1, rows) || cols == 1)) return {t.raw_data(), true, std::max<int64_t>(s1, std::max<int64_t>(1, rows))};
  *keep = Contiguous(t);
  return {keep->raw_data(), false, std::max<int64_t>(1, cols)};
}

template <typename T>
void RefGemm(const Tensor& a, const Tensor& b, const Tensor& c, int64_t m, int64_t k, int64_t n) {
  using M = std::conditional_t<std::is_integral_v<T>, std::conditional_t<std::is_same_v<T, bool>, bool, int64_t>, OpMath<T>>;
  const int64_t as0 = a.strides()[0], as1 = a.strides()[1], bs0 = b.strides()[0], bs1 = b.strides()[1];
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  T* cp = c.data<T>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      M acc = M(0);
      for (int64_t p = 0; p < k; ++p) {
        M x = static_cast<M>(static_cast<OpMath<T>>(ap[i * as0 + p * as1]));
        M y = static_cast<M>(static_cast<OpMath<T>>(bp[p * bs0 + j * bs1]));
        if constexpr (std::is_same_v<M, bool>) acc = acc || (x && y); else acc += x * y;
      }
      cp[i * n + j] = static_cast<T>(static_cast<OpMath<T>>(acc));
    }
}

// c[m,n] = a[m,k] @ b[k,n]; c is contiguous.
void Gemm2D(const Tensor& a, const Tensor& b, const Tensor& c) {
  const int64_t m = a.sizes()[0], k = a.sizes()[1], n = b.sizes()[1];
  if (m == 0 || n == 0) return;
  if (k == 0) { FillWith(c, Scalar(0)); return; }
  const DType dt = c.dtype();
  if (dt == DType::kFloat32 || dt == DType::kFloat64) {
    Tensor ka, kb;
    GemmOperand ga = AsGemm(a, m, k, &ka), gb = AsGemm(b, k, n, &kb);
    auto ta = ga.trans ? CblasTrans : CblasNoTrans, tb = gb.trans ? CblasTrans : CblasNoTrans;
    if (dt == DType::kFloat32) {
      cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, reinterpret_cast<const float*>(ga.data), ga.ld,
                  reinterpret_cast<const float*>(gb.data), gb.ld, 0.0f, c.data<float>(), n);
    } else {
      cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, reinterpret_cast<const double*>(ga.data), ga.ld,
                  reinterpret_cast<const double*>(gb.data), gb.ld, 0.0, c.data<double>(), n);
    }
    return;
  }
  DispatchAll(dt, [&](auto tag) { RefGemm<typename std::decay_t<decltype(tag)>::type>(a, b, c, m, k, n); });
}

Tensor Select0(const Tensor& t, int64_t i) {
  DimVector s(t.sizes().begin() + 1, t.sizes().end()), st(t.strides().begin() + 1, t.strides().end());
  return MakeView(t, s, st, t.offset() + i * t.strides()[0]);
}

// Batched: a [B,m,k], b [B,k,n] (already expanded to the same B), out [B,m,n] contiguous.
void BatchedGemm(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.device().type == DeviceType::kMeta) return;
  const int64_t batch = out.sizes()[0];
  for (int64_t i = 0; i < batch; ++i) Gemm2D(Select0(a, i), Select0(b, i), Select0(out, i));
}

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
  if (out.device().type != DeviceType::kMeta) Gemm2D(input, mat2, out);
  return out;
}

Tensor Bmm(const Tensor& input, const Tensor& mat2) {
  OpScope scope("bmm");
  OF_CHECK(input.dim() == 3) << "batch1 must be a 3D tensor, got " << input.dim() << "-D";
  OF_CHECK(mat2.dim() == 3) << "batch2 must be a 3D tensor, got " << mat2.dim() << "-D";
  OF_CHECK(input.sizes()[0] == mat2.sizes()[0])
      << "batch1 and batch2 must have same number of batches, got " << input.sizes()[0]
      << " and " << mat2.sizes()[0];
  OF_CHECK(input.sizes()[2] == mat2.sizes()[1])
      << "Expected size for first two dimensions of batch2 tensor to be: [" << input.sizes()[0]
      << ", " << input.sizes()[2] << "] but got: [" << mat2.sizes()[0] << ", " << mat2.sizes()[1]
      << "].";
  DType dt = MatmulDType(input, mat2);
  Tensor out = Empty(DimVector{input.sizes()[0], input.sizes()[1], mat2.sizes()[2]}, dt, input.device());
  BatchedGemm(input, mat2, out);
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
  BatchedGemm(a3, b3, out);
  DimVector os = batch;
  if (da > 1) os.push_back(m);
  if (db > 1) os.push_back(n);
  return Reshape(out, os);
}

}  // namespace oneflow
