// Householder reflectors: geqrf (LAPACK's raw QR: R above the diagonal, the reflectors' vectors
// below it, and their scalars tau) and the products of such reflectors, linalg_householder_product
// (orgqr: the first n columns of Q = H_1 ... H_k) and ormqr (Q or Q^H times a matrix without
// forming Q), with H_i = I - tau_i v_i v_i^H and v_i = (0, .., 0, 1, input[i+1:, i]).
// The products are composites (`backward: composite`): each reflector is one rank-1 update of
// differentiable matmuls, so their gradients (and higher ones) are those of the table ops; a
// call that needs no gradient takes LAPACK's orgqr / ormqr instead (7x faster at 128x128).
#include <vector>

#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "kernels/lapack.h"
#include "ops/copy.h"
#include "ops/linalg_common.h"
#include "decl/conj.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/eye.h"
#include "decl/geqrf.h"
#include "decl/linalg_householder_product.h"
#include "decl/matmul.h"
#include "decl/narrow.h"
#include "decl/orgqr.h"
#include "decl/ormqr.h"
#include "decl/select.h"
#include "decl/transpose.h"
#include "decl/tril.h"
#include "decl/unsqueeze.h"

namespace oneflow {

using namespace linalg;  // NOLINT

std::tuple<Tensor, Tensor> Geqrf(const Tensor& input) {
  OpScope scope("geqrf");
  CheckInput(input, false);
  const int64_t m = input.sizes()[input.dim() - 2], n = input.sizes()[input.dim() - 1], k = std::min(m, n);
  DimVector tshape = BatchShape(input);
  tshape.push_back(k);
  Tensor abuf = ColMajorCopy(input);  // geqrf works in place
  Tensor tau = Empty(tshape, input.dtype(), input.device());
  if (IsMeta(abuf) || input.numel() == 0) return {ColMajorView(abuf), tau};
  if (input.device().type != DeviceType::kCPU) OF_THROW_NO_KERNEL(input.device().index) << "geqrf has no CUDA kernel";
  const int64_t nb = BatchOf(input);
  DispatchLapack(input.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const int mi = static_cast<int>(m), ni = static_cast<int>(n);
    int info = 0;
    T query = 0;
    lapack::Geqrf(mi, ni, abuf.data<T>(), mi, tau.data<T>(), &query, -1, &info);
    const int lwork = lapack::WorkSize(query);
    ForEachMatrix(nb, [&](int64_t b) {
      std::vector<T> work(lwork);
      int inf = 0;  // only argument errors, which the checks exclude
      lapack::Geqrf(mi, ni, abuf.data<T>() + b * m * n, mi, tau.data<T>() + b * k, work.data(), lwork, &inf);
    });
  });
  return {ColMajorView(abuf), tau};
}

namespace linalg {

// The LAPACK forms of the two products below (orgqr/ungqr, ormqr/unmqr) for CPU tensors when no
// gradient is needed: one blocked call per matrix instead of k rank-1 updates. The arguments are
// checked by the callers.
Tensor HouseholderKernel(const Tensor& input, const Tensor& tau) {
  const int64_t m = input.sizes()[input.dim() - 2], n = input.sizes()[input.dim() - 1];
  const int64_t k = tau.sizes()[tau.dim() - 1], nb = BatchOf(input);
  Tensor q = ColMajorCopy(input);  // orgqr overwrites the reflectors with Q's columns
  const Tensor t = Contiguous(tau);
  DispatchLapack(input.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    int info = 0;
    T query = 0;
    lapack::Orgqr(mi, ni, ki, q.data<T>(), mi, t.data<T>(), &query, -1, &info);
    const int lwork = lapack::WorkSize(query);
    ForEachMatrix(nb, [&](int64_t b) {
      std::vector<T> work(lwork);
      int inf = 0;
      lapack::Orgqr(mi, ni, ki, q.data<T>() + b * m * n, mi, t.data<T>() + b * k, work.data(), lwork, &inf);
    });
  });
  return ColMajorView(q);
}

Tensor OrmqrKernel(const Tensor& input, const Tensor& tau, const Tensor& other, bool left, bool transpose) {
  const int64_t mn = input.sizes()[input.dim() - 2], k = tau.sizes()[tau.dim() - 1], nb = BatchOf(input);
  const int64_t m = other.sizes()[other.dim() - 2], n = other.sizes()[other.dim() - 1];
  const Tensor a = ColMajorCopy(Narrow(input, -1, 0, k)), t = Contiguous(tau);
  Tensor c = ColMajorCopy(other);  // ormqr overwrites C with the product
  DispatchLapack(input.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    const int lda = std::max<int>(1, static_cast<int>(mn));
    const char side = left ? 'L' : 'R';
    int info = 0;
    T query = 0;
    lapack::Ormqr(side, transpose, mi, ni, ki, a.data<T>(), lda, t.data<T>(), c.data<T>(), mi, &query, -1, &info);
    const int lwork = lapack::WorkSize(query);
    ForEachMatrix(nb, [&](int64_t b) {
      std::vector<T> work(lwork);
      int inf = 0;
      lapack::Ormqr(side, transpose, mi, ni, ki, a.data<T>() + b * mn * k, lda, t.data<T>() + b * k,
                    c.data<T>() + b * m * n, mi, work.data(), lwork, &inf);
    });
  });
  return ColMajorView(c);
}

}  // namespace linalg

}  // namespace oneflow

namespace oneflow::functional {

namespace {

Tensor MH(const Tensor& t) { return functional::Conj(functional::Transpose(t, -2, -1)); }

// LAPACK serves calls that need no gradient on the CPU (and not the meta device or empty
// products); the composites below serve the rest, CUDA included.
bool UseLapack(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (t->device().type != DeviceType::kCPU || t->numel() == 0) return false;
    if (GradMode::is_enabled() && RequiresGrad(*t)) return false;
  }
  return true;
}

// The reflectors' vectors as columns: input's strict lower triangle with a unit diagonal.
Tensor Reflectors(const Tensor& input) {
  const int64_t m = input.sizes()[input.dim() - 2], n = input.sizes()[input.dim() - 1];
  return functional::Tril(input, -1) + ::oneflow::Eye(m, n, input.dtype(), input.device(), false);
}

// tau_i (or its conjugate) shaped [..., 1, 1] to scale a batch of matrices.
Tensor TauAt(const Tensor& tau, int64_t i, bool conj) {
  Tensor t = functional::Unsqueeze(functional::Unsqueeze(functional::Select(tau, -1, i), -1), -1);
  return conj ? functional::Conj(t) : t;
}

// The checks PyTorch makes after the shape checks of each op (its messages and order).
void CheckReflectors(const Tensor& input, const Tensor& tau) {
  OF_CHECK(tau.dim() == input.dim() - 1) << "Expected tau to have one dimension less than input, but got tau.ndim "
                                            "equal to " << tau.dim() << " and input.ndim is equal to " << input.dim();
  const DimVector batch = linalg::BatchShape(input);
  const DimVector tbatch(tau.sizes().begin(), tau.sizes().end() - 1);
  OF_CHECK(tbatch == batch) << "Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                            << ShapeStr(tbatch);
  OF_CHECK(tau.dtype() == input.dtype()) << "tau dtype " << TorchTypeName(tau.dtype()) << " does not match input dtype "
                                         << TorchTypeName(input.dtype());
  CheckSameDevice(input, tau);
  linalg::CheckMatrices(input, false);  // the composites run on any device; LAPACK only on the CPU
}

int64_t LastDim(const Tensor& t) { return t.dim() ? t.sizes()[t.dim() - 1] : 1; }

}  // namespace

Tensor LinalgHouseholderProduct(const Tensor& input, const Tensor& tau) {
  OpScope scope("linalg.householder_product");
  OF_CHECK(input.dim() >= 2) << "input must have at least 2 dimensions.";
  const int64_t m = input.sizes()[input.dim() - 2], n = input.sizes()[input.dim() - 1], k = LastDim(tau);
  OF_CHECK(m >= n) << "input.shape[-2] must be greater than or equal to input.shape[-1]";
  OF_CHECK(n >= k) << "input.shape[-1] must be greater than or equal to tau.shape[-1]";
  CheckReflectors(input, tau);
  if (k > 0 && UseLapack({&input, &tau})) return linalg::HouseholderKernel(input, tau);
  // Q's first n columns: H_1 (H_2 ( .. (H_k I[:, :n]))). Starting from input * 0 keeps an empty
  // product (k = 0) in input's graph, as PyTorch's result is.
  Tensor Q = input * 0.0 + ::oneflow::Eye(m, n, input.dtype(), input.device(), false);
  if (k == 0) return Q;
  const Tensor V = Reflectors(input);
  for (int64_t i = k - 1; i >= 0; --i) {
    const Tensor v = functional::Narrow(V, -1, i, 1);
    Q = Q - functional::Matmul(v * TauAt(tau, i, false), functional::Matmul(MH(v), Q));
  }
  return Q;
}

Tensor Orgqr(const Tensor& input, const Tensor& tau) {
  OpScope scope("orgqr");
  return functional::LinalgHouseholderProduct(input, tau);
}

Tensor Ormqr(const Tensor& input, const Tensor& tau, const Tensor& other, bool left, bool transpose) {
  OpScope scope("ormqr");
  OF_CHECK(input.dim() >= 2) << "input must have at least 2 dimensions.";
  OF_CHECK(other.dim() >= 2) << "other must have at least 2 dimensions.";
  const int side = left ? -2 : -1;
  const int64_t mn = input.sizes()[input.dim() - 2], k = LastDim(tau);
  OF_CHECK(other.sizes()[other.dim() + side] == mn)
      << "other.shape[" << side << "] must be equal to input.shape[-2]";
  // Q is the product of the first min(mn, input.shape[-1]) reflectors: tau has exactly that many.
  OF_CHECK(k == std::min(mn, input.sizes()[input.dim() - 1]))
      << "tau.shape[-1] must be equal to min(other.shape[" << side << "], input.shape[-1])";
  OF_CHECK(tau.dim() == input.dim() - 1) << "Expected tau to have one dimension less than input, but got tau.ndim "
                                            "equal to " << tau.dim() << " and input.ndim is equal to " << input.dim();
  OF_CHECK(other.dim() == input.dim()) << "Expected other to have the same number of dimensions as input, but got "
                                          "other.ndim equal to " << other.dim() << " and input.ndim is equal to "
                                       << input.dim();
  const DimVector obatch = linalg::BatchShape(other);
  OF_CHECK(obatch == linalg::BatchShape(input))
      << "Expected batch dimensions of other to be equal to input.shape[:-2], but got " << ShapeStr(obatch);
  CheckReflectors(input, tau);
  OF_CHECK(other.dtype() == input.dtype()) << "other dtype " << TorchTypeName(other.dtype())
                                           << " does not match input dtype " << TorchTypeName(input.dtype());
  CheckSameDevice(input, other);
  if (k > 0 && UseLapack({&input, &tau, &other})) return linalg::OrmqrKernel(input, tau, other, left, transpose);
  const Tensor V = Reflectors(functional::Narrow(input, -1, 0, k));
  // Q = H_1 .. H_k and Q^H = H_k^H .. H_1^H with H_i^H = I - conj(tau_i) v v^H: the reflector
  // nearest C applies first.
  const bool first_to_last = left == transpose;
  Tensor C = other * 1.0;  // a fresh result even when k = 0
  for (int64_t j = 0; j < k; ++j) {
    const int64_t i = first_to_last ? j : k - 1 - j;
    const Tensor v = functional::Narrow(V, -1, i, 1);
    const Tensor t = TauAt(tau, i, transpose);
    C = left ? C - functional::Matmul(v * t, functional::Matmul(MH(v), C))
             : C - functional::Matmul(functional::Matmul(C, v) * t, MH(v));
  }
  return C;
}

}  // namespace oneflow::functional
