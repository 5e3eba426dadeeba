// Fused optimizer updates, part 2: RMSprop, Adagrad, Adadelta, NAdam, RAdam. The math of each
// follows torch.optim's single-tensor algorithm (Note [Optimizer update arithmetic] in
// optim_util.h).
#include "ops/optim_util.h"
#include "decl/adadelta_update.h"
#include "decl/adagrad_update.h"
#include "decl/nadam_update.h"
#include "decl/radam_update.h"
#include "decl/rmsprop_update.h"

namespace oneflow {

using optim::ListArg;

std::vector<Tensor> RmspropUpdate(const std::vector<Tensor>& params,
                                  const std::vector<Tensor>& grads,
                                  const std::vector<Tensor>& square_avgs,
                                  const std::vector<Tensor>& grad_avgs,
                                  const std::vector<Tensor>& momentum_buffers,
                                  const std::vector<Tensor>& steps, double lr, double alpha,
                                  double eps, double weight_decay, double momentum, bool centered,
                                  bool maximize) {
  OpScope scope("rmsprop_update");
  std::vector<ListArg> lists = {{&params, "params", true, false},
                                {&grads, "grads", false, false},
                                {&square_avgs, "square_avgs", true, false},
                                {&grad_avgs, "grad_avgs", true, !centered},
                                {&momentum_buffers, "momentum_buffers", true, momentum <= 0}};
  optim::CheckUpdateArgs(lists, &steps);
  if (optim::IsMetaUpdate(params)) return params;
  optim::AdvanceSteps(steps);
  optim::WithFlagBits([&](auto kF) {
    optim::RunUpdate(lists, [&](auto tag, size_t, const auto& run) {
      using T = typename decltype(tag)::type;
      using M = OpMath<T>;
      const M a = alpha, w = 1 - alpha, eps_m = eps, wd = weight_decay, mom = momentum;
      const M neg_lr = -lr, sign = maximize ? -1 : 1;
      run(optim::RmspropStep<T, kF>{sign, wd, a, w, eps_m, mom, neg_lr});
    });
  }, weight_decay != 0, centered, momentum > 0, 1 - alpha < 0.5);
  return params;
}

std::vector<Tensor> AdagradUpdate(const std::vector<Tensor>& params,
                                  const std::vector<Tensor>& grads,
                                  const std::vector<Tensor>& state_sums,
                                  const std::vector<Tensor>& steps, double lr, double lr_decay,
                                  double weight_decay, double eps, bool maximize) {
  OpScope scope("adagrad_update");
  std::vector<ListArg> lists = {{&params, "params", true, false},
                                {&grads, "grads", false, false},
                                {&state_sums, "state_sums", true, false}};
  optim::CheckUpdateArgs(lists, &steps);
  if (optim::IsMetaUpdate(params)) return params;
  const std::vector<double> step = optim::AdvanceSteps(steps);
  optim::WithFlagBits([&](auto kF) {
    optim::RunUpdate(lists, [&](auto tag, size_t i, const auto& run) {
      using T = typename decltype(tag)::type;
      using M = OpMath<T>;
      const M neg_clr = -(lr / (1 + (step[i] - 1) * lr_decay)), eps_m = eps, wd = weight_decay;
      const M sign = maximize ? -1 : 1;
      run(optim::AdagradStep<T, kF>{sign, wd, eps_m, neg_clr});
    });
  }, weight_decay != 0);
  return params;
}

std::vector<Tensor> AdadeltaUpdate(const std::vector<Tensor>& params,
                                   const std::vector<Tensor>& grads,
                                   const std::vector<Tensor>& square_avgs,
                                   const std::vector<Tensor>& acc_deltas,
                                   const std::vector<Tensor>& steps, double lr, double rho,
                                   double eps, double weight_decay, bool maximize) {
  OpScope scope("adadelta_update");
  std::vector<ListArg> lists = {{&params, "params", true, false},
                                {&grads, "grads", false, false},
                                {&square_avgs, "square_avgs", true, false},
                                {&acc_deltas, "acc_deltas", true, false}};
  optim::CheckUpdateArgs(lists, &steps);
  if (optim::IsMetaUpdate(params)) return params;
  optim::AdvanceSteps(steps);
  optim::WithFlagBits([&](auto kF) {
    optim::RunUpdate(lists, [&](auto tag, size_t, const auto& run) {
      using T = typename decltype(tag)::type;
      using M = OpMath<T>;
      const M r = rho, w = 1 - rho, eps_m = eps, wd = weight_decay, neg_lr = -lr;
      const M sign = maximize ? -1 : 1;
      run(optim::AdadeltaStep<T, kF>{sign, wd, r, w, eps_m, neg_lr});
    });
  }, weight_decay != 0);
  return params;
}

std::vector<Tensor> NadamUpdate(const std::vector<Tensor>& params,
                                const std::vector<Tensor>& grads,
                                const std::vector<Tensor>& exp_avgs,
                                const std::vector<Tensor>& exp_avg_sqs,
                                const std::vector<Tensor>& mu_products,
                                const std::vector<Tensor>& steps, double lr, double beta1,
                                double beta2, double eps, double weight_decay,
                                double momentum_decay, bool decoupled_weight_decay,
                                bool maximize) {
  OpScope scope("nadam_update");
  std::vector<ListArg> lists = {{&params, "params", true, false},
                                {&grads, "grads", false, false},
                                {&exp_avgs, "exp_avgs", true, false},
                                {&exp_avg_sqs, "exp_avg_sqs", true, false}};
  optim::CheckUpdateArgs(lists, &steps);
  OF_CHECK_VALUE(mu_products.size() == params.size())
      << "expected one mu_product tensor per parameter (" << params.size() << " params), got "
      << mu_products.size();
  for (size_t i = 0; i < mu_products.size(); ++i)
    OF_CHECK(mu_products[i].defined() && mu_products[i].numel() == 1)
        << "mu_products[" << i << "] must be a one-element tensor";
  if (optim::IsMetaUpdate(params)) return params;
  const std::vector<double> step = optim::AdvanceSteps(steps);
  // Per-parameter coefficients, in double as torch computes them in Python. mu_product is a
  // tensor in torch's state, so its product is rounded to the tensor's dtype (a float32 tensor
  // times a Python float multiplies in float).
  std::vector<double> c_grad(params.size()), c_avg(params.size()), bc2(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const double s = step[i];
    const double mu = beta1 * (1.0 - 0.5 * std::pow(0.96, s * momentum_decay));
    const double mu_next = beta1 * (1.0 - 0.5 * std::pow(0.96, (s + 1) * momentum_decay));
    const bool single = mu_products[i].dtype() != DType::kFloat64;
    const double mp = optim::ReadScalar(mu_products[i]) * (single ? double(float(mu)) : mu);
    optim::WriteScalar(mu_products[i], mp);
    const double mp_stored = optim::ReadScalar(mu_products[i]);
    c_grad[i] = -lr * (1.0 - mu) / (1.0 - mp_stored);
    c_avg[i] = -lr * mu_next / (1.0 - mp_stored * mu_next);
    bc2[i] = 1 - std::pow(beta2, s);
  }
  const double decay = decoupled_weight_decay ? 1 - lr * weight_decay : 1.0;
  optim::WithFlagBits([&](auto kF) {
    optim::RunUpdate(lists, [&](auto tag, size_t i, const auto& run) {
      using T = typename decltype(tag)::type;
      using M = OpMath<T>;
      const M w1 = 1 - beta1, b2 = beta2, w2 = 1 - beta2, eps_m = eps, wd = weight_decay;
      const M decay_m = decay, bc2_m = bc2[i], cg = c_grad[i], ca = c_avg[i];
      const M sign = maximize ? -1 : 1;
      run(optim::NadamStep<T, kF>{sign, decay_m, wd, w1, b2, w2, bc2_m, eps_m, cg, ca});
    });
  }, weight_decay != 0 && !decoupled_weight_decay, 1 - beta1 < 0.5);
  return params;
}

std::vector<Tensor> RadamUpdate(const std::vector<Tensor>& params,
                                const std::vector<Tensor>& grads,
                                const std::vector<Tensor>& exp_avgs,
                                const std::vector<Tensor>& exp_avg_sqs,
                                const std::vector<Tensor>& steps, double lr, double beta1,
                                double beta2, double eps, double weight_decay,
                                bool decoupled_weight_decay, bool maximize) {
  OpScope scope("radam_update");
  std::vector<ListArg> lists = {{&params, "params", true, false},
                                {&grads, "grads", false, false},
                                {&exp_avgs, "exp_avgs", true, false},
                                {&exp_avg_sqs, "exp_avg_sqs", true, false}};
  optim::CheckUpdateArgs(lists, &steps);
  if (optim::IsMetaUpdate(params)) return params;
  const std::vector<double> step = optim::AdvanceSteps(steps);
  const double rho_inf = 2 / (1 - beta2) - 1;
  const double decay = decoupled_weight_decay ? 1 - lr * weight_decay : 1.0;
  optim::WithFlagBits([&](auto kF) {
    optim::RunUpdate(lists, [&](auto tag, size_t i, const auto& run) {
      using T = typename decltype(tag)::type;
      using M = OpMath<T>;
      const double s = step[i];
      const double bc1 = 1 - std::pow(beta1, s), bc2 = 1 - std::pow(beta2, s);
      const double rho_t = rho_inf - 2 * s * std::pow(beta2, s) / bc2;
      // The variance is tractable (rho_t > 5): the rectified adaptive step; else plain momentum.
      const bool rectify = rho_t > 5.0;
      const double rect = rectify ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                                              ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                                  : 0.0;
      const M w1 = 1 - beta1, b2 = beta2, w2 = 1 - beta2, eps_m = eps, wd = weight_decay;
      const M decay_m = decay, bc1_m = bc1, bc2_sqrt = std::sqrt(bc2), lr_m = lr, rect_m = rect;
      const M sign = maximize ? -1 : 1;
      // rectify is the same for the whole tensor: a flag of its own, each loop branch-free.
      if (rectify)
        run(optim::RadamStep<T, kF | 4u>{sign, decay_m, wd, w1, b2, w2, bc1_m, bc2_sqrt, eps_m,
                                         lr_m, rect_m});
      else
        run(optim::RadamStep<T, kF>{sign, decay_m, wd, w1, b2, w2, bc1_m, bc2_sqrt, eps_m, lr_m,
                                    rect_m});
    });
  }, weight_decay != 0 && !decoupled_weight_decay, 1 - beta1 < 0.5);
  return params;
}

}  // namespace oneflow
