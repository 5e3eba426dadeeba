"""Forward and backward hooks of nn.Module (a mixin of Module; see module.py).

Order and return-value rules follow torch.nn.Module._call_impl: forward pre-hooks may replace
the positional args (or, with_kwargs, args and kwargs); forward hooks may replace the output;
hooks registered with always_call=True also run when forward raises. Full backward hooks and
backward pre-hooks go through BackwardHook (_hooks.py).

Module-global hooks (register_module_forward_pre_hook, register_module_forward_hook,
register_module_full_backward_pre_hook, register_module_full_backward_hook and the
register_module_{buffer,module,parameter}_registration_hook trio, re-exported by module.py) apply
to every Module. As in PyTorch, global forward pre-hooks / forward hooks / backward pre-hooks /
full backward hooks run before the module's own ones of the same kind, and a registration hook
hook(module, name, value) may return a replacement for the buffer / submodule / parameter being
registered. Every global call hook id is also kept in `_global_call_hooks`, so Module.__call__'s
no-hook fast path pays a single dict truthiness check for all of them. The deprecated non-full
register_backward_hook / register_module_backward_hook are not provided.
"""
import warnings
from collections import OrderedDict

from ... import _oneflow_internal as _C
from ._hooks import BackwardHook, RemovableHandle

# Module-global hooks: {handle id: hook}, in registration order.
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
# The ids of all global forward / backward hooks above (removed with them by their handles):
# non-empty exactly when a module call has global hooks to run.
_global_call_hooks = OrderedDict()


def _register_global(hooks, hook, extra=()):
    handle = RemovableHandle(hooks, extra_dict=[*extra, _global_call_hooks])
    hooks[handle.id] = hook
    _global_call_hooks[handle.id] = True
    return handle


def register_module_forward_pre_hook(hook):
    """Registers hook(module, args) -> None | new args (a non-tuple is wrapped) to run before the
    forward of every Module, ahead of the module's own forward pre-hooks."""
    return _register_global(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """Registers hook(module, args, output) (with_kwargs: hook(module, args, kwargs, output)) ->
    None | new output to run after the forward of every Module, ahead of the module's own forward
    hooks; with always_call it also runs when forward raises."""
    handle = _register_global(
        _global_forward_hooks, hook,
        (_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called))
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook):
    """Registers hook(module, grad_output) -> None | new grad_output for every Module, run before
    the module's own backward pre-hooks."""
    return _register_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """Registers hook(module, grad_input, grad_output) -> None | new grad_input for every Module,
    run before the module's own full backward hooks."""
    return _register_global(_global_backward_hooks, hook)


def _register_registration_hook(hooks, hook):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook):
    """Registers hook(module, name, buffer) -> None | new buffer, called by every register_buffer
    (and buffer attribute assignment)."""
    return _register_registration_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """Registers hook(module, name, submodule) -> None | new submodule, called by every add_module
    / register_module (and submodule attribute assignment)."""
    return _register_registration_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """Registers hook(module, name, param) -> None | new parameter, called by every
    register_parameter of a Parameter (not of None) and parameter attribute assignment."""
    return _register_registration_hook(_global_parameter_registration_hooks, hook)


def _run_registration_hooks(hooks, module, name, value):
    for hook in list(hooks.values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


class _ModuleHooksMixin:
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None | new args (a non-tuple is wrapped), or with_kwargs
        hook(module, args, kwargs) -> None | (new args, new kwargs); runs before forward."""
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) (with_kwargs: hook(module, args, kwargs, output)) -> None |
        new output; runs after forward (also when it raises, if always_call)."""
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None | new grad_output; runs when the gradients w.r.t.
        the module's outputs are computed."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None | new grad_input; runs when the
        gradients w.r.t. the module's positional inputs are computed."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _call_with_hooks(self, forward_call, args, kwargs):
        result = None
        called_always_called_hooks = set()

        def run_forward_hook(hook_id, hook):
            if (hook_id in self._forward_hooks_with_kwargs
                    or hook_id in _global_forward_hooks_with_kwargs):
                return hook(self, args, kwargs, result)
            return hook(self, args, result)

        def inner():
            nonlocal result, args, kwargs
            full_backward_hooks = [*_global_backward_hooks.values(), *self._backward_hooks.values()]
            backward_pre_hooks = [*_global_backward_pre_hooks.values(),
                                  *self._backward_pre_hooks.values()]
            for hook_id, hook in [*_global_forward_pre_hooks.items(),
                                  *self._forward_pre_hooks.items()]:
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    args_kwargs_result = hook(self, args, kwargs)
                    if args_kwargs_result is not None:
                        if isinstance(args_kwargs_result, tuple) and len(args_kwargs_result) == 2:
                            args, kwargs = args_kwargs_result
                        else:
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of "
                                f"(new_args, new_kwargs), but got {args_kwargs_result}.")
                else:
                    args_result = hook(self, args)
                    if args_result is not None:
                        if not isinstance(args_result, tuple):
                            args_result = (args_result,)
                        args = args_result

            bw_hook = None
            if full_backward_hooks or backward_pre_hooks:
                bw_hook = BackwardHook(self, full_backward_hooks, backward_pre_hooks)
                args = bw_hook.setup_input_hook(args)

            result = forward_call(*args, **kwargs)
            for hook_id, hook in [*_global_forward_hooks.items(), *self._forward_hooks.items()]:
                if (hook_id in self._forward_hooks_always_called
                        or hook_id in _global_forward_hooks_always_called):
                    called_always_called_hooks.add(hook_id)
                hook_result = run_forward_hook(hook_id, hook)
                if hook_result is not None:
                    result = hook_result

            if bw_hook:
                if not isinstance(result, (_C.Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a "
                                  f"Tensor or a tuple of Tensors but received {type(result)}",
                                  stacklevel=3)
                result = bw_hook.setup_output_hook(result)
            return result

        try:
            return inner()
        except Exception:
            for hook_id, hook in [*_global_forward_hooks.items(), *self._forward_hooks.items()]:
                if ((hook_id in self._forward_hooks_always_called
                     or hook_id in _global_forward_hooks_always_called)
                        and hook_id not in called_always_called_hooks):
                    try:
                        hook_result = run_forward_hook(hook_id, hook)
                        if hook_result is not None:
                            result = hook_result
                    except Exception as e:
                        warnings.warn("module forward hook with ``always_call=True`` raised an "
                                      "exception that was silenced as another error was raised in "
                                      f"forward: {e!s}", stacklevel=2)
                        continue
            raise
