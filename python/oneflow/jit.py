"""oneflow.jit: torch.jit's decorators and calls for scripts that use them. oneflow runs Python
eagerly (its compiled path is nn.Graph), so `script` / `trace` return the function or module
itself, which computes the same results; `fork` runs the call at once and returns a future of
its result. Not provided: saving or loading TorchScript archives (use flow.save / flow.load)."""
import typing

Final = typing.Final


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """The function or module itself (eager); usable as @script or @script()."""
    if obj is None:
        return lambda o: o
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    return mod


def ignore(drop=False, **kwargs):
    """@ignore or @ignore(drop=...): the function runs as Python (it always does here)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def annotate(the_type, the_value):
    return the_value


def is_scripting():
    return False


def is_tracing():
    return False


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


class Future:
    """The result of `fork`: already computed."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def done(self):
        return True

    def value(self):
        return self._value


def fork(func, *args, **kwargs):
    return Future(func(*args, **kwargs))


def wait(future):
    return future.wait()


# The private decorators library code applies at definition time (flowvision's ops, torchvision's
# too): scripting never happens here, so each returns the function itself, callable as before.
def _script_if_tracing(fn):
    """`fn` itself: it would be scripted only while tracing, and nothing is traced here."""
    return fn


def _overload(fn):
    return fn


def _overload_method(fn):
    return fn
