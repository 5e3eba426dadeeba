"""OpInfos of the fused optimizer updates (src/ops/table/optim.yaml).

The reference is torch.optim's functional single-tensor algorithm (torch.optim.adam.adam, ...)
run on the same lists; both update their inputs in place and return the params. LAMB (no torch
counterpart) is checked against a float64 torch implementation of OneFlow's formula. Every
sample has several parameters of different shapes (incl. 0-d and zero-size) and steps > 1.
"""
import importlib

from .core import *  # noqa: F401,F403

_SHAPES = [(3, 4), (5,), (), (0, 2)]


def _params(rng, dtype, shapes=_SHAPES):
    return [arr(rng, s, dtype) for s in shapes]


def _pos(rng, dtype, shapes=_SHAPES, lo=0.01, hi=2.0):
    return [arr(rng, s, dtype, Domain(lo, hi)) for s in shapes]


def _steps(rng, n=len(_SHAPES)):
    return [const(float(rng.integers(0, 6)), "float32") for _ in range(n)]


def _torch_fn(module, fn, adapt=None):
    """torch.optim.<module>.<fn> (foreach off: the single-tensor algorithm) returning params.
    Lists of another length than params are a ValueError (the ops' contract; torch's zip would
    drop the extra entries silently)."""
    def run(*args, **kwargs):
        f = getattr(importlib.import_module(f"torch.optim.{module}"), fn)
        if any(isinstance(a, list) and a and len(a) != len(args[0]) for a in args):
            raise ValueError("expected one tensor per parameter in every list")
        args, kwargs = adapt(args, kwargs) if adapt else (args, kwargs)
        f(*args, foreach=False, **kwargs)
        return list(args[0])
    return run


def sgd_samples(dtype, rng):
    out = []
    for momentum, damp, nesterov, wd, maximize in [(0.0, 0.0, False, 0.0, False),
                                                   (0.0, 0.0, False, 0.1, True),
                                                   (0.9, 0.0, False, 0.0, False),
                                                   (0.9, 0.2, False, 0.05, True),
                                                   (0.8, 0.0, True, 0.1, False)]:
        bufs = _params(rng, dtype) if momentum else []
        out.append(Sample((_params(rng, dtype), _params(rng, dtype), bufs),
                          dict(lr=0.1, momentum=momentum, dampening=damp, nesterov=nesterov,
                               weight_decay=wd, maximize=maximize),
                          desc=f"momentum={momentum} damp={damp} nesterov={nesterov} wd={wd}"))
    p = _params(rng, dtype)
    out.append(Sample((p, _params(rng, dtype, _SHAPES[:2]), []), dict(lr=0.1),
                      desc="grads list too short"))
    out.append(Sample((_params(rng, dtype, [(2, 3)]), _params(rng, dtype, [(3, 2)]), []),
                      dict(lr=0.1), desc="grad shape mismatch"))
    return out


def _sgd_adapt(args, kwargs):
    params, grads, bufs = args
    return (params, grads, bufs or [None] * len(params)), kwargs


def adam_samples(dtype, rng):
    out = []
    for amsgrad, wd, maximize, decoupled in [(False, 0.0, False, False), (True, 0.1, False, False),
                                             (False, 0.1, True, True), (True, 0.0, True, True)]:
        out.append(Sample((_params(rng, dtype), _params(rng, dtype), _params(rng, dtype),
                           _pos(rng, dtype), _pos(rng, dtype) if amsgrad else [], _steps(rng)),
                          dict(lr=0.01, beta1=0.8, beta2=0.95, eps=1e-6, weight_decay=wd,
                               amsgrad=amsgrad, maximize=maximize,
                               decoupled_weight_decay=decoupled),
                          desc=f"amsgrad={amsgrad} wd={wd} maximize={maximize} adamw={decoupled}"))
    return out


def adamax_samples(dtype, rng):
    return [Sample((_params(rng, dtype), _params(rng, dtype), _params(rng, dtype),
                    _pos(rng, dtype), _steps(rng)),
                   dict(lr=0.02, beta1=0.85, beta2=0.99, eps=1e-8, weight_decay=wd,
                        maximize=mx), desc=f"wd={wd} maximize={mx}")
            for wd, mx in [(0.0, False), (0.1, True)]]


def rmsprop_samples(dtype, rng):
    out = []
    for centered, momentum, wd, mx in [(False, 0.0, 0.0, False), (True, 0.0, 0.1, False),
                                       (False, 0.9, 0.0, True), (True, 0.5, 0.1, True)]:
        sq = _pos(rng, dtype, lo=1.0, hi=2.0)
        ga = _params(rng, dtype, [(3, 4), (5,), (), (0, 2)]) if centered else []
        if centered:  # keep square_avg - grad_avg^2 positive, as training does
            ga = [arr(rng, s, dtype, Domain(-0.5, 0.5)) for s in _SHAPES]
        out.append(Sample((_params(rng, dtype), _params(rng, dtype), sq, ga,
                           _params(rng, dtype) if momentum else [], _steps(rng)),
                          dict(lr=0.01, alpha=0.9, eps=1e-8, weight_decay=wd, momentum=momentum,
                               centered=centered, maximize=mx),
                          desc=f"centered={centered} momentum={momentum} wd={wd} maximize={mx}"))
    return out


def adagrad_samples(dtype, rng):
    return [Sample((_params(rng, dtype), _params(rng, dtype), _pos(rng, dtype), _steps(rng)),
                   dict(lr=0.1, lr_decay=decay, weight_decay=wd, eps=1e-10, maximize=mx),
                   desc=f"lr_decay={decay} wd={wd} maximize={mx}")
            for decay, wd, mx in [(0.0, 0.0, False), (0.05, 0.1, True)]]


def adadelta_samples(dtype, rng):
    return [Sample((_params(rng, dtype), _params(rng, dtype), _pos(rng, dtype), _pos(rng, dtype),
                    _steps(rng)),
                   dict(lr=1.0, rho=rho, eps=1e-6, weight_decay=wd, maximize=mx),
                   desc=f"rho={rho} wd={wd} maximize={mx}")
            for rho, wd, mx in [(0.9, 0.0, False), (0.5, 0.1, True)]]


def nadam_samples(dtype, rng):
    out = []
    for wd, dec, mx in [(0.0, False, False), (0.1, False, True), (0.1, True, False)]:
        mu = [const(float(rng.uniform(0.3, 0.9)), "float32") for _ in _SHAPES]
        out.append(Sample((_params(rng, dtype), _params(rng, dtype), _params(rng, dtype),
                           _pos(rng, dtype), mu, _steps(rng)),
                          dict(lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=wd,
                               momentum_decay=0.004, decoupled_weight_decay=dec, maximize=mx),
                          desc=f"wd={wd} decoupled={dec} maximize={mx}"))
    return out


def radam_samples(dtype, rng):
    out = []
    for wd, dec, mx, step in [(0.0, False, False, 1.0), (0.1, True, True, 10.0),
                              (0.1, False, False, 30.0)]:
        out.append(Sample((_params(rng, dtype), _params(rng, dtype), _params(rng, dtype),
                           _pos(rng, dtype), [const(step, "float32") for _ in _SHAPES]),
                          dict(lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=wd,
                               decoupled_weight_decay=dec, maximize=mx),
                          desc=f"wd={wd} decoupled={dec} maximize={mx} step={step}"))
    return out


def lamb_samples(dtype, rng):
    return [Sample((_params(rng, dtype), _params(rng, dtype), _params(rng, dtype),
                    _pos(rng, dtype), _steps(rng)),
                   dict(lr=0.01, beta1=0.9, beta2=0.99, eps=1e-6, weight_decay=wd,
                        adam_w_mode=mode, do_bias_correction=bc),
                   desc=f"wd={wd} adam_w_mode={mode} bias_correction={bc}")
            for wd, mode, bc in [(0.0, True, True), (0.1, True, False), (0.1, False, True)]]


def _lamb_torch(params, grads, exp_avgs, exp_avg_sqs, steps, *, lr, beta1, beta2, eps,
                weight_decay, adam_w_mode, do_bias_correction):
    """OneFlow's lamb_update formula in float64 torch ops."""
    l2, wd = (0.0, weight_decay) if adam_w_mode else (weight_decay, 0.0)
    for p, g, m, v, s in zip(params, grads, exp_avgs, exp_avg_sqs, steps):
        s += 1
        t = float(s)
        w = p.double()
        g2 = g.double() + l2 * w
        m64 = beta1 * m.double() + (1 - beta1) * g2
        v64 = beta2 * v.double() + (1 - beta2) * g2 * g2
        bc1, bc2 = (1 - beta1 ** t, 1 - beta2 ** t) if do_bias_correction else (1.0, 1.0)
        u = (m64 / bc1) / (v64.sqrt() / bc2 ** 0.5 + eps)
        wn, un = float(w.norm()), float(u.norm())
        trust = wn / un if wn > 0 and un > 0 else 1.0
        m.copy_(m64)
        v.copy_(v64)
        p.copy_(w - lr * trust * (u + wd * w))
    return list(params)


_F = ("float32", "float64")
_TOL = {"float32": (2e-5, 1e-6)}


def _info(name, samples, ref):
    return OpInfo(name, "optim", _F, samples, fn=lambda lib: getattr(lib._C, name),
                  ref=lambda torch: ref, method="", tol=_TOL)


add(_info("sgd_update", sgd_samples, _torch_fn("sgd", "sgd", _sgd_adapt)))
add(_info("adam_update", adam_samples, _torch_fn("adam", "adam")))
add(_info("adamax_update", adamax_samples, _torch_fn("adamax", "adamax")))
add(_info("rmsprop_update", rmsprop_samples, _torch_fn("rmsprop", "rmsprop")))
add(_info("adagrad_update", adagrad_samples, _torch_fn("adagrad", "adagrad")))
add(_info("adadelta_update", adadelta_samples, _torch_fn("adadelta", "adadelta")))
add(_info("nadam_update", nadam_samples, _torch_fn("nadam", "nadam")))
add(_info("radam_update", radam_samples, _torch_fn("radam", "radam")))
add(OpInfo("lamb_update", "optim", _F, lamb_samples, fn=lambda lib: lib._C.lamb_update,
           ref=lambda torch: _lamb_torch, method="", tol=_TOL))
