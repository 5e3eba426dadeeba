"""Hook plumbing of nn.Module: removable handles and the module backward hooks.

`BackwardHook` follows PyTorch's torch.utils.hooks.BackwardHook: the module's tensor inputs and
outputs are passed through an identity autograd Function, so that one backward node sees all
gradients w.r.t. the outputs (the backward pre-hooks run there) and one sees all gradients w.r.t.
the inputs (the full backward hooks run there, with the output gradients saved on the way).
PyTorch registers hooks on those nodes; here the identity Function's `backward` calls them itself.
"""
import warnings
import weakref
from collections import OrderedDict

from ... import _oneflow_internal as _C
from ...framework.tensor_tuple_util import TensorTuple
from ...autograd.function import Function


class RemovableHandle:
    """A handle whose `remove()` deletes the hook `id` from `hooks_dict` (and from `extra_dict`)."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            extra_dict = ref()
            if extra_dict is not None and self.id in extra_dict:
                del extra_dict[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        self.hooks_dict_ref = weakref.ref(state[0] if state[0] is not None else OrderedDict())
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in state[2] if d is not None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _WrappedHook:
    """A hook that may be called with its module (held weakly) as first argument."""

    def __init__(self, hook, module=None):
        self.hook = hook
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self):
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


class BackwardHookFunction(Function):
    """Identity on tensors; its backward hands the gradients to `on_grads` (first argument)."""

    @staticmethod
    def forward(ctx, on_grads, *args):
        ctx.on_grads = on_grads
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads))


class BackwardHook:
    """Runs a module's full backward hooks and backward pre-hooks for one forward call.

    It holds the module weakly (unlike PyTorch): the autograd node that owns this object is
    invisible to Python's garbage collector, so `module -> stored output -> node -> hook ->
    module` would otherwise be a cycle that is never freed. A module that is gone when the
    gradients arrive has no hooks to run."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self._module = weakref.ref(module)
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None
        self._defined = set()  # outputs whose gradient reached the output node

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return TensorTuple(res)  # the hooks' grad_input / grad_output: upstream's type, a tuple

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    @property
    def module(self):
        return self._module()

    def _on_input_grads(self, grad_input):
        if self.grad_outputs is None or self.module is None:
            # The gradient reached the inputs without passing through the outputs (double backward).
            return grad_input
        res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return self._unpack_none(self.input_tensors_index, res)

    def _on_output_grads(self, grad_output):
        if self.module is None:
            return grad_output
        # The node materialises missing gradients as zeros; PyTorch's hooks see None for outputs
        # that got no gradient, which the tensor hooks of _mark_defined tell apart.
        grad_output = tuple(g if i in self._defined else None for i, g in enumerate(grad_output))
        self._defined = set()
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                 self.n_outputs)
        if self.user_pre_hooks:
            expected_len = len(self.grad_outputs)
            for user_pre_hook in self.user_pre_hooks:
                hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                if hook_grad_outputs is None:
                    continue
                if len(hook_grad_outputs) != expected_len:
                    raise RuntimeError(
                        "Backward pre hook returned an invalid number of grad_output, "
                        f"got {len(hook_grad_outputs)}, but expected {expected_len}")
                self.grad_outputs = hook_grad_outputs
        local_grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:
            warnings.warn("Full backward hook is firing when gradients are computed with respect "
                          "to module outputs since no inputs require gradients.", stacklevel=2)
            grad_inputs = self._pack_with_none([], [], self.n_inputs)
            for user_hook in self.user_hooks:
                res = user_hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple)
                                            and all(el is None for el in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient "
                                       "should always return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(local_grad_outputs[i] for i in self.output_tensors_index)

    def _apply_on_tensors(self, on_grads, args):
        tensors_idx, tensors = [], []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, _C.Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and _C.is_grad_enabled()):
            return args, None, ()
        new_tensors = BackwardHookFunction.apply(on_grads, *tensors)
        if len(new_tensors) == 0:
            raise RuntimeError(
                "Cannot set Module backward hook for a Module with no input Tensors.")
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        out = tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)
        return out, tensors_idx, new_tensors

    def setup_input_hook(self, args):
        res, input_idx, _ = self._apply_on_tensors(self._on_input_grads, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, output_idx, new_tensors = self._apply_on_tensors(self._on_output_grads, args)
        for k, t in enumerate(new_tensors):
            if t.requires_grad:
                t.register_hook(lambda grad, k=k: self._defined.add(k))
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]
