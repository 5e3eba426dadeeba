// Fused optimizer updates, part 1: the shared checks, SGD, Adam/AdamW, Adamax and OneFlow's
// LAMB. The math of each follows torch.optim's single-tensor algorithm (Note [Optimizer update
// arithmetic] in optim_util.h); LAMB follows OneFlow's lamb_update kernel.
#include <algorithm>
#include <mutex>

#include "autograd/grad_mode.h"
#include "ops/optim_util.h"
#include "decl/adam_update.h"
#include "decl/adamax_update.h"
#include "decl/add.h"
#include "decl/div.h"
#include "decl/empty.h"
#include "decl/gt.h"
#include "decl/lamb_update.h"
#include "decl/linalg_vector_norm.h"
#include "decl/logical_and.h"
#include "decl/mul.h"
#include "decl/sgd_update.h"
#include "decl/sub.h"
#include "decl/view_as_real.h"
#include "decl/where.h"

namespace oneflow {
namespace optim {

void CheckUpdateArgs(std::vector<ListArg>& lists, const std::vector<Tensor>* steps, bool complex_as_real) {
  const std::vector<Tensor>& params = *lists[0].tensors;
  bool any_complex = false;
  const size_t n = params.size();
  for (const ListArg& l : lists) {
    if (l.optional && l.tensors->empty()) continue;
    OF_CHECK_VALUE(l.tensors->size() == n)
        << "expected one tensor per parameter in '" << l.name << "' (" << n << " params), got "
        << l.tensors->size();
  }
  if (steps) {
    OF_CHECK_VALUE(steps->size() == n)
        << "expected one step tensor per parameter (" << n << " params), got " << steps->size();
  }
  for (size_t i = 0; i < n; ++i) {
    const Tensor& p = params[i];
    any_complex = any_complex || IsComplex(p.dtype());
    OF_CHECK_TYPE(IsFloating(p.dtype()) || (complex_as_real && IsComplex(p.dtype())))
        << "params[" << i << "] must be a floating point " << (complex_as_real ? "or complex " : "")
        << "tensor, got " << DTypeName(p.dtype());
    OF_CHECK(!(GradMode::is_enabled() && p.requires_grad()))
        << "params[" << i << "] requires grad and grad mode is on: a leaf Variable that requires "
        << "grad is being used in an in-place operation (run the update under oneflow.no_grad())";
    for (size_t k = 1; k < lists.size(); ++k) {
      if (lists[k].tensors->empty()) continue;
      const Tensor& t = (*lists[k].tensors)[i];
      OF_CHECK(t.defined()) << "'" << lists[k].name << "'[" << i << "] is None";
      OF_CHECK(t.sizes() == p.sizes())
          << "'" << lists[k].name << "'[" << i << "] has shape " << ShapeStr(t.sizes())
          << " but params[" << i << "] has shape " << ShapeStr(p.sizes());
      OF_CHECK_TYPE(t.dtype() == p.dtype())
          << "'" << lists[k].name << "'[" << i << "] has dtype " << DTypeName(t.dtype())
          << " but params[" << i << "] has dtype " << DTypeName(p.dtype());
      CheckSameDevice(p, t);
    }
    if (steps) {
      const Tensor& s = (*steps)[i];
      OF_CHECK(s.defined() && s.numel() == 1)
          << "steps[" << i << "] must be a one-element tensor";
      // A host counter serves parameters on any device (torch keeps non-capturable steps on
      // the CPU too); a device counter must be on the parameter's device type.
      OF_CHECK(s.device().is_cpu() || s.device().type == p.device().type)
          << "steps[" << i << "] is on " << s.device().str() << " but params[" << i << "] on "
          << p.device().str();
    }
  }
  if (!any_complex) return;
  for (ListArg& l : lists) {
    auto views = std::make_shared<std::vector<Tensor>>();
    views->reserve(l.tensors->size());
    for (const Tensor& t : *l.tensors) views->push_back(IsComplex(t.dtype()) ? ViewAsReal(t) : t);
    l.tensors = views.get();
    l.real_views = std::move(views);
  }
}

bool IsMetaUpdate(const std::vector<Tensor>& params) {
  return !params.empty() && params[0].device().type == DeviceType::kMeta;
}

double ReadScalar(const Tensor& t) { return ItemOf(t).ToDouble(); }

void WriteScalar(const Tensor& t, double v) {
  FillWith(t, Scalar(v));
  t.BumpVersion();
}

std::vector<double> AdvanceSteps(const std::vector<Tensor>& steps) {
  std::vector<double> out;
  out.reserve(steps.size());
  for (const Tensor& s : steps) {
    out.push_back(ReadScalar(s) + 1);
    WriteScalar(s, out.back());
  }
  return out;
}

}  // namespace optim

using optim::ListArg;

std::vector<Tensor> SgdUpdate(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                              const std::vector<Tensor>& momentum_buffers, double lr,
                              double momentum, double dampening, double weight_decay,
                              bool nesterov, bool maximize) {
  OpScope scope("sgd_update");
  std::vector<ListArg> lists = {{&params, "params", true, false},
                                {&grads, "grads", false, false},
                                {&momentum_buffers, "momentum_buffers", true, momentum == 0}};
  optim::CheckUpdateArgs(lists, nullptr);
  OF_CHECK_VALUE(!nesterov || (momentum > 0 && dampening == 0))
      << "Nesterov momentum requires a momentum and zero dampening";
  if (optim::IsMetaUpdate(params)) return params;
  optim::WithFlagBits([&](auto kF) {
    optim::RunUpdate(lists, [&](auto tag, size_t, const auto& run) {
      using T = typename decltype(tag)::type;
      using M = OpMath<T>;
      const M sign = maximize ? -1 : 1, wd = weight_decay, mom = momentum;
      const M damp1 = 1 - dampening, neg_lr = -lr;
      run(optim::SgdStep<T, kF>{sign, wd, mom, damp1, neg_lr});
    });
  }, momentum != 0, weight_decay != 0, nesterov);
  return params;
}

std::vector<Tensor> AdamUpdate(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                               const std::vector<Tensor>& exp_avgs,
                               const std::vector<Tensor>& exp_avg_sqs,
                               const std::vector<Tensor>& max_exp_avg_sqs,
                               const std::vector<Tensor>& steps, double lr, double beta1,
                               double beta2, double eps, double weight_decay, bool amsgrad,
                               bool maximize, bool decoupled_weight_decay,
                               bool do_bias_correction) {
  OpScope scope("adam_update");
  std::vector<ListArg> lists = {{&params, "params", true, false},
                                {&grads, "grads", false, false},
                                {&exp_avgs, "exp_avgs", true, false},
                                {&exp_avg_sqs, "exp_avg_sqs", true, false},
                                {&max_exp_avg_sqs, "max_exp_avg_sqs", true, !amsgrad}};
  optim::CheckUpdateArgs(lists, &steps);
  if (optim::IsMetaUpdate(params)) return params;
  const std::vector<double> step = optim::AdvanceSteps(steps);
  const bool l2 = weight_decay != 0 && !decoupled_weight_decay;
  // Decoupled decay multiplies by (1 - lr * wd); by 1 (exactly the identity) otherwise.
  const double decay = decoupled_weight_decay ? 1 - lr * weight_decay : 1.0;
  optim::WithFlagBits([&](auto kF) {
    optim::RunUpdate(lists, [&](auto tag, size_t i, const auto& run) {
      using T = typename decltype(tag)::type;
      using M = OpMath<T>;
      const double bc1 = do_bias_correction ? 1 - std::pow(beta1, step[i]) : 1.0;
      const double bc2 = do_bias_correction ? 1 - std::pow(beta2, step[i]) : 1.0;
      const M neg_step_size = -(lr / bc1), bc2_sqrt = std::sqrt(bc2), eps_m = eps;
      const M w1 = 1 - beta1, b2 = beta2, w2 = 1 - beta2, wd = weight_decay;
      const M sign = maximize ? -1 : 1, decay_m = decay;
      run(optim::AdamStep<T, kF>{sign, decay_m, wd, w1, b2, w2, bc2_sqrt, eps_m, neg_step_size});
    });
  }, l2, amsgrad, 1 - beta1 < 0.5);
  return params;
}

std::vector<Tensor> AdamaxUpdate(const std::vector<Tensor>& params,
                                 const std::vector<Tensor>& grads,
                                 const std::vector<Tensor>& exp_avgs,
                                 const std::vector<Tensor>& exp_infs,
                                 const std::vector<Tensor>& steps, double lr, double beta1,
                                 double beta2, double eps, double weight_decay, bool maximize) {
  OpScope scope("adamax_update");
  std::vector<ListArg> lists = {{&params, "params", true, false},
                                {&grads, "grads", false, false},
                                {&exp_avgs, "exp_avgs", true, false},
                                {&exp_infs, "exp_infs", true, false}};
  optim::CheckUpdateArgs(lists, &steps);
  if (optim::IsMetaUpdate(params)) return params;
  const std::vector<double> step = optim::AdvanceSteps(steps);
  optim::WithFlagBits([&](auto kF) {
    optim::RunUpdate(lists, [&](auto tag, size_t i, const auto& run) {
      using T = typename decltype(tag)::type;
      using M = OpMath<T>;
      const M neg_clr = -(lr / (1 - std::pow(beta1, step[i])));
      const M w1 = 1 - beta1, b2 = beta2, eps_m = eps, wd = weight_decay;
      const M sign = maximize ? -1 : 1;
      run(optim::AdamaxStep<T, kF>{sign, wd, w1, b2, eps_m, neg_clr});
    });
  }, weight_decay != 0, 1 - beta1 < 0.5);
  return params;
}

// LAMB's passes over one parameter (lists of one tensor each) in host loops; CUDA parameters in
// host copies (its trust ratio needs norms between the passes, which the step functors do not do).
template <typename Body>
static void LambOnHost(const Tensor& param, const std::vector<ListArg>& lists, const Body& body) {
  DispatchFloat(param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    optim::UpdateOnHost<T>(lists, 0, [&](const optim::UpdatePtrs<T>& q, int64_t b, int64_t e) {
      body(tag, q, b, e);
    });
  });
}

// LAMB on a CUDA parameter: the direction by the step functor's kernel, the norms, trust ratio and
// the final update as device ops (no host round trip; the last pass rounds as the ops do).
static void LambOnDevice(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, double lr, double beta1,
                         double beta2, double eps, double l2, double wd, double bc1, double bc2) {
  const Tensor dir = Empty(p.sizes(), p.dtype(), p.device());
  const std::vector<Tensor> one_p{p}, one_g{g}, one_m{m}, one_v{v}, one_d{dir};
  const std::vector<ListArg> l1 = {{&one_p, "params", false, false}, {&one_g, "grads", false, false},
                                   {&one_m, "exp_avgs", true, false}, {&one_v, "exp_avg_sqs", true, false},
                                   {&one_d, "direction", true, false}};
  optim::RunUpdate(l1, [&](auto tag, size_t, const auto& run) {
    using T = typename decltype(tag)::type;
    using M = OpMath<T>;
    const M l2_m = l2, b1 = beta1, w1 = 1 - beta1, b2 = beta2, w2 = 1 - beta2, bc1_m = bc1,
            bc2_sqrt = std::sqrt(bc2), eps_m = eps;
    run(optim::LambDirectionStep<T, 0>{l2_m, b1, w1, b2, w2, bc1_m, bc2_sqrt, eps_m});
  });
  const DType dt = p.dtype();
  const Tensor wn = LinalgVectorNorm(p, Scalar(2.0), std::nullopt, false, DType::kFloat64);
  const Tensor un = LinalgVectorNorm(dir, Scalar(2.0), std::nullopt, false, DType::kFloat64);
  const Tensor zero = ScalarToTensor(Scalar(0.0), DType::kFloat64);
  const Tensor trust = Where(LogicalAnd(Gt(wn, zero), Gt(un, zero)), Div(wn, un, std::nullopt),
                             ScalarToTensor(Scalar(1.0), DType::kFloat64));
  // p -= (lr * trust) * (dir + wd * p), in the parameter's math type (16-bit ones rounded once).
  const DType md = (dt == DType::kFloat16 || dt == DType::kBFloat16) ? DType::kFloat32 : dt;
  const Tensor pm = CastTo(p, md);
  const Tensor rate = CastTo(Mul(trust, ScalarToTensor(Scalar(lr), DType::kFloat64)), md);
  CopyInto(p, Sub(pm, Mul(Add(CastTo(dir, md), pm, Scalar(wd)), rate), Scalar(1)));
  p.BumpVersion();
}

// LAMB as OneFlow's lamb_update kernel computes it, per parameter tensor:
//   g' = g + l2 * w               (l2 = weight_decay unless adam_w_mode)
//   m = b1 m + (1 - b1) g';  v = b2 v + (1 - b2) g'^2
//   u = (m / bc1) / (sqrt(v) / sqrt(bc2) + eps)      (bc = 1 without bias correction)
//   trust = ||w|| / ||u||  (1 when either norm is 0)
//   w = w - lr * trust * (u + wd * w)                 (wd = weight_decay in adam_w_mode)
std::vector<Tensor> LambUpdate(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                               const std::vector<Tensor>& exp_avgs,
                               const std::vector<Tensor>& exp_avg_sqs,
                               const std::vector<Tensor>& steps, double lr, double beta1,
                               double beta2, double eps, double weight_decay, bool adam_w_mode,
                               bool do_bias_correction) {
  OpScope scope("lamb_update");
  std::vector<ListArg> lists = {{&params, "params", true, false},
                                {&grads, "grads", false, false},
                                {&exp_avgs, "exp_avgs", true, false},
                                {&exp_avg_sqs, "exp_avg_sqs", true, false}};
  optim::CheckUpdateArgs(lists, &steps, /*complex_as_real=*/false);  // (LAMB: not in torch.optim)
  if (optim::IsMetaUpdate(params)) return params;
  const std::vector<double> step = optim::AdvanceSteps(steps);
  const double l2 = adam_w_mode ? 0.0 : weight_decay, wd = adam_w_mode ? weight_decay : 0.0;
  for (size_t i = 0; i < params.size(); ++i) {
    const double bc1 = do_bias_correction ? 1 - std::pow(beta1, step[i]) : 1.0;
    const double bc2 = do_bias_correction ? 1 - std::pow(beta2, step[i]) : 1.0;
    if (params[i].device().type == DeviceType::kCUDA) {
      LambOnDevice(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], lr, beta1, beta2, eps, l2, wd, bc1, bc2);
      continue;
    }
    // The update direction u needs a pass of its own: the trust ratio scales it by norms
    // over the whole tensor.
    Tensor dir = Empty(params[i].sizes(), params[i].dtype());
    const std::vector<Tensor> one_p{params[i]}, one_g{grads[i]}, one_m{exp_avgs[i]},
        one_v{exp_avg_sqs[i]}, one_d{dir};
    std::vector<ListArg> l1 = {{&one_p, "params", false, false}, {&one_g, "grads", false, false},
                               {&one_m, "exp_avgs", true, false}, {&one_v, "exp_avg_sqs", true, false},
                               {&one_d, "direction", true, false}};
    double w_sq = 0, u_sq = 0;
    std::mutex mu;
    LambOnHost(params[i], l1, [&](auto tag, const auto& q, int64_t b, int64_t e) {
      using M = OpMath<typename decltype(tag)::type>;
      auto *p = q.p[0], *g = q.p[1], *m = q.p[2], *v = q.p[3], *d = q.p[4];
      const M b1 = beta1, w1 = 1 - beta1, b2 = beta2, w2 = 1 - beta2, l2_m = l2;
      const M bc1_m = bc1, bc2_sqrt = std::sqrt(bc2), eps_m = eps;
      // Squared norms: float partial sums over blocks (a simd reduction), blocks added in
      // double, so the loop vectorises and the sums stay accurate for large tensors.
      double ws = 0, us = 0;
      for (int64_t j0 = b; j0 < e; j0 += 4096) {
        const int64_t j1 = std::min(e, j0 + 4096);
        M wb = 0, ub = 0;
#pragma omp simd reduction(+ : wb, ub)
        for (int64_t j = j0; j < j1; ++j) {
          const M pj = p[j];
          const M gj = M(g[j]) + l2_m * pj;
          const M mj = b1 * M(m[j]) + w1 * gj;
          const M vj = b2 * M(v[j]) + w2 * gj * gj;
          m[j] = mj;
          v[j] = vj;
          d[j] = (mj / bc1_m) / (std::sqrt(vj) / bc2_sqrt + eps_m);
          const M dj = d[j];  // as stored (16-bit directions are rounded)
          wb += pj * pj;
          ub += dj * dj;
        }
        ws += wb;
        us += ub;
      }
      std::lock_guard<std::mutex> lock(mu);
      w_sq += ws;
      u_sq += us;
    });
    const double w_norm = std::sqrt(w_sq), u_norm = std::sqrt(u_sq);
    const double trust = (w_norm > 0 && u_norm > 0) ? w_norm / u_norm : 1.0;
    std::vector<ListArg> l2list = {{&one_p, "params", true, false},
                                   {&one_d, "direction", false, false}};
    LambOnHost(params[i], l2list, [&](auto tag, const auto& q, int64_t b, int64_t e) {
      using M = OpMath<typename decltype(tag)::type>;
      auto *p = q.p[0], *d = q.p[1];
      const M rate = lr * trust, wd_m = wd;
      for (int64_t j = b; j < e; ++j) p[j] = M(p[j]) - rate * (M(d[j]) + wd_m * M(p[j]));
    });
  }
  return params;
}

}  // namespace oneflow
