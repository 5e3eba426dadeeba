// Reductions: sum mean prod amax amin aminmax all any argmax argmin max min.
#include <cmath>
#include <limits>

#include "kernels/reduce.h"
#include "kernels/reducers.h"
#include "ops/copy.h"
#include "ops/manual_ops.h"
#include "decl/all.h"
#include "decl/amax.h"
#include "decl/amin.h"
#include "decl/aminmax.h"
#include "decl/any.h"
#include "decl/argmax.h"
#include "decl/argmin.h"
#include "decl/empty.h"
#include "decl/mean.h"
#include "decl/ne.h"
#include "decl/prod.h"
#include "decl/reshape.h"
#include "decl/sum.h"

namespace oneflow {

namespace {

using namespace reducers;  // kernels/reducers.h

struct Plan {
  bool mask[kMaxDims] = {false};
  DimVector keep_shape, out_shape;
};

Plan MakeReducePlan(const Tensor& in, const std::optional<DimVector>& dim, bool keepdim) {
  Plan p;
  const int nd = in.dim();
  if (!dim || dim->empty()) {
    for (int d = 0; d < nd; ++d) p.mask[d] = true;
  } else {
    for (int64_t d : *dim) {
      int w = WrapDim(d, nd);
      if (nd == 0) continue;
      OF_CHECK(!p.mask[w]) << "dim " << w << " appears multiple times in the list of dims";
      p.mask[w] = true;
    }
  }
  for (int d = 0; d < nd; ++d) {
    p.keep_shape.push_back(p.mask[d] ? 1 : in.sizes()[d]);
    if (!p.mask[d]) p.out_shape.push_back(in.sizes()[d]);
    else if (keepdim) p.out_shape.push_back(1);
  }
  return p;
}

// Runs reducer R (templated on the input OpMath type) over `in` (already in compute dtype).
template <template <typename> class R, typename O = void>
Tensor Reduce(const Tensor& in, const Plan& p, DType out_dtype) {
  Tensor out = Empty(p.out_shape, out_dtype, in.device());
  if (in.device().type == DeviceType::kMeta) return out;
  Tensor keep = MakeView(out, p.keep_shape, ContiguousStrides(p.keep_shape), 0);
  ReduceGeom g = MakeReduceGeom(in, keep, p.mask);
  if (in.device().type == DeviceType::kCUDA) {  // Note [CUDA reductions] (kernels/reduce.h)
    auto run = CudaReduceSlot<R<bool>>::run;
    if (!run)
      OF_THROW_NO_KERNEL(in.device().index)
           << "not implemented for 'cuda' tensors in this build; move the inputs to the CPU with .cpu()";
    run(in, keep, g);
    return out;
  }
  DispatchAll(in.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    DispatchAll(out_dtype, [&](auto otag) {
      using OT = typename std::decay_t<decltype(otag)>::type;
      if constexpr (R<T>::template kOutOk<OT>) RunReduce<T, OT>(in, keep, g, R<T>{});
    });
  });
  return out;
}

template <template <typename> class R>
Tensor ReduceComplex(const Tensor& in, const Plan& p) {
  Tensor out = Empty(p.out_shape, in.dtype(), in.device());
  if (in.device().type == DeviceType::kMeta) return out;
  Tensor keep = MakeView(out, p.keep_shape, ContiguousStrides(p.keep_shape), 0);
  ReduceGeom g = MakeReduceGeom(in, keep, p.mask);
  if (in.device().type == DeviceType::kCUDA) {  // Note [CUDA reductions], Note [Complex on CUDA]
    auto run = CudaReduceSlot<R<std::complex<float>>>::run;
    if (!run) OF_THROW_NO_KERNEL(in.device().index) << "complex reductions of 'cuda' tensors are not in this build";
    run(in, keep, g);
    return out;
  }
  DispatchComplex(in.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    RunReduce<T, T>(in, keep, g, R<T>{});
  });
  return out;
}

DType SumDType(DType in, const std::optional<DType>& dtype) {
  if (dtype) return *dtype;
  return IsFloating(in) || IsComplex(in) ? in : DType::kInt64;
}

void CheckNonEmptyReduce(const Tensor& in, const Plan& p, const char* what) {
  if (in.numel() != 0) return;
  for (int d = 0; d < in.dim(); ++d)
    OF_CHECK(!(p.mask[d] && in.sizes()[d] == 0))
        << "Expected reduction dim " << d << " to have non-zero size (" << what
        << " of an empty tensor).";
  OF_CHECK(in.dim() > 0 || in.numel() > 0) << what << " of an empty tensor";
}

std::optional<DimVector> OneDim(std::optional<int64_t> d) {
  if (!d) return std::nullopt;
  return DimVector{*d};
}

}  // namespace

Tensor Sum(const Tensor& input, std::optional<DimVector> dim, bool keepdim, std::optional<DType> dtype) {
  OpScope scope("sum");
  Plan p = MakeReducePlan(input, dim, keepdim);
  DType od = SumDType(input.dtype(), dtype);
  DType cd = (dtype || IsFloating(od) || IsComplex(od)) ? od : input.dtype();  // an explicit dtype casts first
  if (IsComplex(cd)) return ReduceComplex<CSumR>(CastTo(input, cd), p);
  return Reduce<SumR>(CastTo(input, cd), p, od);
}

Tensor Mean(const Tensor& input, std::optional<DimVector> dim, bool keepdim, std::optional<DType> dtype) {
  OpScope scope("mean");
  DType od = dtype ? *dtype : input.dtype();
  OF_CHECK(IsFloating(od) || IsComplex(od)) << "could not infer output dtype. Input dtype must be either a floating "
                              "point or complex dtype. Got: " << DTypeName(od);
  Plan p = MakeReducePlan(input, dim, keepdim);
  if (IsComplex(od)) return ReduceComplex<CMeanR>(CastTo(input, od), p);
  return Reduce<MeanR>(CastTo(input, od), p, od);
}

Tensor Prod(const Tensor& input, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype) {
  OpScope scope("prod");
  Plan p = MakeReducePlan(input, OneDim(dim), keepdim && dim.has_value());
  DType od = SumDType(input.dtype(), dtype);
  DType cd = (dtype || IsFloating(od) || IsComplex(od)) ? od : input.dtype();  // an explicit dtype casts first
  if (IsComplex(cd)) return ReduceComplex<CProdR>(CastTo(input, cd), p);
  return Reduce<ProdR>(CastTo(input, cd), p, od);
}

Tensor Amax(const Tensor& input, std::optional<DimVector> dim, bool keepdim) {
  OpScope scope("amax");
  Plan p = MakeReducePlan(input, dim, keepdim);
  CheckNonEmptyReduce(input, p, "amax");
  return Reduce<MaxR>(input, p, input.dtype());
}

Tensor Amin(const Tensor& input, std::optional<DimVector> dim, bool keepdim) {
  OpScope scope("amin");
  Plan p = MakeReducePlan(input, dim, keepdim);
  CheckNonEmptyReduce(input, p, "amin");
  return Reduce<MinR>(input, p, input.dtype());
}

std::tuple<Tensor, Tensor> Aminmax(const Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  OpScope scope("aminmax");
  Plan p = MakeReducePlan(input, OneDim(dim), keepdim);
  CheckNonEmptyReduce(input, p, "aminmax");
  return {Reduce<MinR>(input, p, input.dtype()), Reduce<MaxR>(input, p, input.dtype())};
}

namespace {
// all / any: complex input reduces its nonzero flags (the reducers dispatch on real dtypes).
// The result is bool for every input, uint8 included (OneFlow's rule; PyTorch keeps uint8).
template <template <typename> class R>
Tensor AllAny(const Tensor& input, const std::optional<DimVector>& dim, bool keepdim) {
  const Tensor x = IsComplex(input.dtype()) ? Ne(input, ScalarToTensor(Scalar(0), input.dtype())) : input;
  return Reduce<R>(x, MakeReducePlan(x, dim, keepdim), DType::kBool);
}
}  // namespace

Tensor All(const Tensor& input, std::optional<DimVector> dim, bool keepdim) {
  OpScope scope("all");
  return AllAny<AllR>(input, dim, keepdim);
}

Tensor Any(const Tensor& input, std::optional<DimVector> dim, bool keepdim) {
  OpScope scope("any");
  return AllAny<AnyR>(input, dim, keepdim);
}

namespace {
template <template <typename> class R>
Tensor ArgReduce(const Tensor& input, std::optional<int64_t> dim, bool keepdim, const char* name) {
  // dim=None: index into the flattened tensor.
  Tensor in = dim ? input : Reshape(input, DimVector{-1});
  Plan p = MakeReducePlan(in, OneDim(dim ? std::optional<int64_t>(*dim) : std::optional<int64_t>(0)),
                          keepdim && dim.has_value());
  if (!dim && keepdim) {
    p.out_shape = DimVector(input.dim(), 1);
  }
  CheckNonEmptyReduce(in, p, name);
  return Reduce<R>(in, p, DType::kInt64);
}
}  // namespace

Tensor Argmax(const Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  OpScope scope("argmax");
  OF_CHECK(input.dtype() != DType::kBool) << "does not support bool input";  // as PyTorch
  return ArgReduce<ArgmaxR>(input, dim, keepdim, "argmax");
}

Tensor Argmin(const Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  OpScope scope("argmin");
  OF_CHECK(input.dtype() != DType::kBool) << "does not support bool input";  // as PyTorch
  return ArgReduce<ArgminR>(input, dim, keepdim, "argmin");
}

Tensor MaxAll(const Tensor& input) {
  OpScope scope("max");
  OF_CHECK(input.numel() > 0) << "Expected reduction dim to be specified for input.numel() == 0. "
                                 "Specify the reduction dim with the 'dim' argument.";
  return Reduce<MaxR>(input, MakeReducePlan(input, std::nullopt, false), input.dtype());
}

Tensor MinAll(const Tensor& input) {
  OpScope scope("min");
  OF_CHECK(input.numel() > 0) << "Expected reduction dim to be specified for input.numel() == 0. "
                                 "Specify the reduction dim with the 'dim' argument.";
  return Reduce<MinR>(input, MakeReducePlan(input, std::nullopt, false), input.dtype());
}

std::tuple<Tensor, Tensor> MaxDim(const Tensor& input, int64_t dim, bool keepdim) {
  OpScope scope("max");
  Plan p = MakeReducePlan(input, DimVector{dim}, keepdim);
  CheckNonEmptyReduce(input, p, "max");
  return {Reduce<MaxR>(input, p, input.dtype()), Reduce<ArgmaxR>(input, p, DType::kInt64)};
}

std::tuple<Tensor, Tensor> MinDim(const Tensor& input, int64_t dim, bool keepdim) {
  OpScope scope("min");
  Plan p = MakeReducePlan(input, DimVector{dim}, keepdim);
  CheckNonEmptyReduce(input, p, "min");
  return {Reduce<MinR>(input, p, input.dtype()), Reduce<ArgminR>(input, p, DType::kInt64)};
}

}  // namespace oneflow
