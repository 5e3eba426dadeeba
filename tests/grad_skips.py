"""Which op samples the gradient tests of tests/test_ops_grad.py leave out, and why: plain tables
(split from that file to keep it readable)."""

# Random ops whose gradient depends on the draw (torch's draws differ): checked against finite
# differences and torch's derivative at the same points instead.
DRAW_DEPENDENT_GRADIENT = {
    "standard_gamma": "reparameterised: tests/test_distributions_rsample_gamma.py",
}

# Samples placed on points where the op is not differentiable: finite
# differences and second derivatives are meaningless there (the first-order
# comparison with torch, test_grad_vs_torch, still covers them).  Samples
# named "specials" (inf/nan/signed zeros) are left out for the same reason.
OFF_DOMAIN = {
    ("round", "halves"): "exact .5 points, where round() jumps",
    ("round", "decimals=1"): "values exactly at rounding points",
    ("round", "decimals=2"): "values exactly at rounding points",
    ("div_rounding", "trunc specials"): "division by zero",
    ("fmax", "same shape"): "entries with x == y are kinks",
    ("fmin", "same shape"): "entries with x == y are kinks",
    ("clamp_min", "same shape"): "entries with x == min are kinks",
    ("clamp_max", "same shape"): "entries with x == max are kinks",
    ("float_power", "mixed bool x float64"): "bases 0 with real exponents",
    ("xlogy", "mixed float64 x bool"): "log(0) where y is False",
    ("cummax", "ties"): "ties switch the running maximum",
    ("cummin", "ties"): "ties switch the running minimum",
    ("polygamma", "trigamma reflection"): "includes the pole at 0",
    ("polygamma", "n=2 edges"): "includes the poles at 0 and -1",
    **{(n, d): "variance of one element (NaN) or dof <= 0" for n in ("var", "std", "var_mean", "std_mean")
       for d in ("0-d full", "0-d dim=0", "size-1 dim", "single element (nan)", "correction > N (inf)")},
    # This sample shares about half its entries between x and y on purpose.
    ("remainder", "same shape"): "entries with x == y sit on jumps of remainder",
    ("fmod", "same shape"): "entries with x == y sit on jumps of fmod",
    ("pow", "mixed int8 x float64"): "int8 bases 0 and < 0 with real exponents: inf/nan",
    # Ties: moving one of equal values reorders them (the derivative is not defined there).
    ("sort", "ties, stable"): "equal values",
    ("sort", "ties, stable, descending"): "equal values",
    ("mode", "ties"): "equal values decide the mode",
    ("mode", "dim 0"): "equal values decide the mode",
    ("mode", "dim 1 keepdim"): "equal values decide the mode",
    ("mode", "tie: smaller"): "equal values decide the mode",
    # Overwritten src elements get the gradient too (PyTorch's convention, matched here).
    ("scatter", "repeated targets (last wins)"): "overwritten src elements",
    ("logdet", "negative det"): "log of a negative determinant is NaN",
    ("linalg_pinv", "rank-deficient"): "pinv jumps where a zero singular value becomes nonzero",
    # Running statistics used in eval mode are not differentiable inputs (as in torch), but
    # finite differences see the output move with them.
    ("batch_norm", "eval"): "running statistics are non-differentiable inputs",
    ("batch_norm", "eval, bias only"): "running statistics are non-differentiable inputs",
    ("instance_norm", "running stats used"): "running statistics are non-differentiable inputs",
    # Gradients defined by convention, not as derivatives (PyTorch's, matched by test_grad_vs_torch).
    ("embedding", "padding_idx"): "the padding row gets no gradient by definition",
    ("embedding", "negative padding_idx"): "the padding row gets no gradient by definition",
    ("embedding", "scale_grad_by_freq"): "gradients divided by index counts (a heuristic scaling)",
    ("embedding_bag", "scale_grad_by_freq"): "gradients divided by index counts (a heuristic scaling)",
    ("embedding_backward", "scale_grad_by_freq"): "its transpose is PyTorch's (the scaling not repeated)",
    ("gaussian_nll_loss", "var clamped"): "var below eps: the clamp is not differentiated (PyTorch's definition)",
    ("nll_loss", "all ignored"): "every target ignored: the mean is 0/0 (NaN)",
    ("cross_entropy", "all ignored"): "every target ignored: the mean is 0/0 (NaN)",
    ("binary_cross_entropy", "log clamp at 0 and 1"): "inputs exactly 0 and 1, where log is clamped to -100",
    ("cosine_similarity", "zero vector (eps)"): "a zero vector: the norm's kink, clamped at eps",
}



# Ops without a derivative whose complex forward torch refuses when an input requires grad
# ("does not support automatic differentiation for outputs with complex dtype"): flow's refusal
# comes at the backward (docs/oneflow_differences.md).
REFUSED_AT_BACKWARD = {"geqrf"}

# Ops skipped entirely, with the reason.
GRADCHECK_SKIP_OPS = {
    # No derivative, as in PyTorch (backward raises; test_grad_vs_torch checks that).
    **{name: "no derivative (as in PyTorch)"
       for name in ("geqrf", "linalg_ldl_factor_ex", "linalg_ldl_factor", "linalg_ldl_solve",
                    "standard_gamma_grad")},
    **DRAW_DEPENDENT_GRADIENT,
    # Its target is detached in the OpInfo (torch refuses a target that requires grad), but
    # finite differences perturb every floating argument; the input gradient is compared with
    # torch's in test_grad_vs_torch.
    "soft_margin_loss": "not differentiable in target; input gradient checked against torch",
    # Its backward may legitimately raise (like torch's); test_grad_vs_torch
    # pins the zero-or-error behaviour.
    "floor_divide": "piecewise constant; zero gradient checked in test_grad_vs_torch",
    # No derivative, as in PyTorch (backward raises; test_grad_vs_torch checks that).
    "unique": "no derivative (as in PyTorch)",
    "unique_consecutive": "no derivative (as in PyTorch)",
    "bincount": "no derivative for weights (as in PyTorch)",
    # Random draws: every call redraws, so finite differences measure noise. Their gradient is
    # zero by definition (as torch's), checked against torch in test_grad_vs_torch.
    **{name: "random draw; zero gradient checked in test_grad_vs_torch"
       for name in ("normal", "bernoulli", "bernoulli_", "poisson", "uniform_", "normal_", "exponential_",
                    "geometric_", "log_normal_", "cauchy_", "random_")},
    "nextafter": "no derivative in torch either (its backward raises)",
    "heaviside": "no derivative in torch either (its backward raises)",
    "binomial": "a random draw without a derivative in torch either (its backward raises)",
    "cummaxmin_backward": "its own derivative (a gather along dim) is not implemented",
    # PyTorch's CTC gradient (matched in test_grad_vs_torch) is that of the loss with respect to
    # the logits behind log_probs (exp(log_probs) - posteriors): it equals the derivative only
    # for normalised log_probs, which finite differences leave.
    "ctc_loss": "gradient with respect to the logits behind log_probs (PyTorch's definition)",
    "ctc_loss_backward": "no second derivative (as PyTorch)",
    "multi_margin_loss_backward": "no second derivative (as PyTorch; its backward raises)",
    "multilabel_margin_loss_backward": "no second derivative (as PyTorch; its backward raises)",
}
