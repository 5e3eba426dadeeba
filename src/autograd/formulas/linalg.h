// Backward helpers of the linalg family (src/ops/table/linalg.yaml), for real and complex inputs; written with
// differentiable table ops so that higher-order gradients work. Derivations in linalg.cpp.
#pragma once
#include <string>

#include "autograd/functional.h"

namespace oneflow::functional {

Tensor InverseGrad(const Tensor& grad, const Tensor& inv);
Tensor DetGrad(const Tensor& grad, const Tensor& A, const Tensor& det);
Tensor SlogdetGrad(const Tensor& grad_sign, const Tensor& grad_logabsdet, const Tensor& A, const Tensor& sign);
Tensor SolveGradA(const Tensor& grad, const Tensor& A, const Tensor& X, bool left);
Tensor SolveGradB(const Tensor& grad, const Tensor& A, const Tensor& B, bool left);
Tensor CholeskyGrad(const Tensor& grad, const Tensor& L, bool upper);
Tensor QrGrad(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R, const std::string& mode);
Tensor SvdGrad(const Tensor& gU, const Tensor& gS, const Tensor& gVh, const Tensor& U, const Tensor& S,
               const Tensor& Vh, bool full_matrices);
Tensor EighGrad(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V);
Tensor EigGrad(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V, const Tensor& A);

}  // namespace oneflow::functional
