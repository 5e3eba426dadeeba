"""nn.Module: the base class of every layer, with PyTorch's behaviour.

Parameters, buffers and submodules live in three ordered dicts (`_parameters`, `_buffers`,
`_modules`) that __setattr__ / __getattr__ / __delattr__ route to, so attribute access reads like
plain Python while traversal (parameters(), state_dict(), to(), train()) is generic. The method
set, argument names, error messages and hook semantics follow torch.nn.Module; the state-dict and
hook-registration halves live in _module_state.py and _module_hooks.py (mixins of Module).
"""
import builtins
from collections import OrderedDict

from ... import _oneflow_internal as _C
from ..._grad_mode import no_grad
from ..parameter import Buffer, Parameter
from ._module_hooks import (  # noqa: F401  (module-global hooks, re-exported as in PyTorch)
    _global_buffer_registration_hooks, _global_call_hooks, _global_module_registration_hooks,
    _global_parameter_registration_hooks, _ModuleHooksMixin, _run_registration_hooks,
    register_module_buffer_registration_hook, register_module_forward_hook,
    register_module_forward_pre_hook, register_module_full_backward_hook,
    register_module_full_backward_pre_hook, register_module_module_registration_hook,
    register_module_parameter_registration_hook)
from ._module_state import _ModuleStateMixin

Tensor = _C.Tensor


def _typename(obj):
    """torch.typename: 'oneflow.FloatTensor' for tensors, else the (qualified) type name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:  # single-line reprs stay as they are
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


def _forward_unimplemented(self, *input):
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function')


def _parse_to(*args, **kwargs):
    """(device, dtype, non_blocking) from Module.to's overloads: to(device=None, dtype=None),
    to(dtype), to(tensor), each with non_blocking."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (str, _C.device)) or (isinstance(a, builtins.int)
                                                 and not isinstance(a, builtins.bool)):
            device = a
        elif isinstance(a, builtins.bool):
            non_blocking = a
        elif a in (builtins.float, builtins.int):
            dtype = _C.get_default_dtype() if a is builtins.float else _C.int64
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    if device is not None and not isinstance(device, _C.device):
        device = (_C.device("cuda", device) if isinstance(device, builtins.int)
                  else _C.device(device))
    return device, dtype, non_blocking


class Module(_ModuleHooksMixin, _ModuleStateMixin):
    """Base class for all neural network modules. Subclasses call `super().__init__()` first,
    then assign parameters and submodules as attributes, and define `forward`."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and bool(args):
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        # object.__setattr__ skips the routing below (these are the routing's own tables).
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # ------------------------------------------------------------------ registration

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer (state that is not a parameter); `persistent=False` keeps it out of
        state_dict. `None` registers a name that module-wide ops skip."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(oneflow Tensor or None required)")
        if _global_buffer_registration_hooks:
            tensor = _run_registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a parameter (a Parameter, or None to register the name only)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(oneflow.nn.Parameter or None required)")
        elif param.grad_fn:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                "the value in the forward() method.")
        else:
            if _global_parameter_registration_hooks:
                param = _run_registration_hooks(_global_parameter_registration_hooks, self, name,
                                                param)
            self._parameters[name] = param

    def add_module(self, name, module):
        """Adds a child module, reachable as the attribute `name`."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if _global_module_registration_hooks:
            module = _run_registration_hooks(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias for add_module."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at the dotted path `target` ("" is self); AttributeError if absent."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Replaces (or, unless strict, adds) the submodule at the dotted path `target`."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`module` is not an nn.Module, found " + str(type(module)))
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]):
            if not isinstance(getattr(parent, atoms[-1]), Module):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        """The parameter at the dotted path `target`; AttributeError if absent."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at the dotted path `target`; AttributeError if absent."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    # ------------------------------------------------------------------ attribute routing

    def __getattr__(self, name):
        # Only reached when normal lookup fails, i.e. for registered names.
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules,
                        self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(oneflow.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers,
                            self._non_persistent_buffers_set)
                if _global_module_registration_hooks:
                    value = _run_registration_hooks(_global_module_registration_hooks, self, name,
                                                    value)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(oneflow.nn.Module or None expected)")
                if _global_module_registration_hooks:
                    value = _run_registration_hooks(_global_module_registration_hooks, self, name,
                                                    value)
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer):  # nn.Buffer(t, persistent=...): a buffer, by marker
                    if buffers is None:
                        raise AttributeError("cannot assign buffer before Module.__init__() call")
                    remove_from(self.__dict__, self._parameters, self._modules)
                    self.register_buffer(name, value, value.persistent)
                elif buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(oneflow.Tensor or None expected)")
                    self.register_buffer(name, value,
                                         name not in self._non_persistent_buffers_set)
                else:
                    super().__setattr__(name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__.keys()) + list(self._parameters.keys())
                + list(self._modules.keys()) + list(self._buffers.keys()))
        return sorted(key for key in keys if not key[0].isdigit())

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)

    # ------------------------------------------------------------------ traversal

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """Iterator over parameters (of submodules too when `recurse`), each once."""
        for _name, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over (dotted name, parameter)."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        """Iterator over buffers (of submodules too when `recurse`)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over (dotted name, buffer)."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self):
        """Iterator over the immediate child modules."""
        for _name, module in self.named_children():
            yield module

    def named_children(self):
        """Iterator over (name, immediate child module), each module once."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate=True):
        """Iterator over all modules of the tree, self first."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Iterator over (dotted name, module) of the tree, self first (named `prefix`)."""
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                submodule_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # ------------------------------------------------------------------ modes and conversion

    def train(self, mode=True):
        """Sets training mode on this module and all submodules; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """train(False)."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Sets requires_grad of every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all parameters (to None, or zeroed in place)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def _apply(self, fn, recurse=True):
        """Applies `fn` to every parameter, gradient and buffer. As in PyTorch, a parameter keeps
        its identity: its data is replaced (`param.data = fn(param)`), so optimizers holding it
        stay valid; only a move off or onto the meta device makes a new Parameter (PyTorch
        cannot swap a meta tensor's data). Buffers are replaced by fn's result."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                param_applied = fn(param)
            keep = param.is_meta == param_applied.is_meta
            if keep:
                param.data = param_applied
                out_param = param
            else:
                out_param = Parameter(param_applied, param.requires_grad)
                self._parameters[key] = out_param
            param_grad = param.grad
            if param_grad is not None:
                with no_grad():
                    grad_applied = fn(param_grad)
                if keep and param_grad.is_meta == grad_applied.is_meta:
                    param_grad.data = grad_applied
                else:
                    out_param.grad = grad_applied.requires_grad_(param_grad.requires_grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to_empty(self, *, device, recurse=True):
        """Moves parameters and buffers to `device` without copying their values (e.g. to
        materialise a module built on the meta device, before initialising it)."""
        return self._apply(lambda t: _C.empty_like(t, device=device), recurse=recurse)

    def apply(self, fn):
        """Calls fn(module) on every submodule (children first) and on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def cuda(self, device=None):
        """Moves all parameters and buffers to a CUDA device."""
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        """Moves all parameters and buffers to the CPU."""
        return self._apply(lambda t: t.cpu())

    def share_memory(self):
        """Moves all parameters, gradients and buffers into shared memory, in place (Note [Shared
        memory]): processes forked afterwards share them (Hogwild training)."""
        return self._apply(lambda t: t.share_memory_())

    def type(self, dst_type):
        """Casts all parameters and buffers to `dst_type`."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Casts floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Casts floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Casts floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Casts floating-point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to(self, *args, **kwargs):
        """to(device=None, dtype=None, non_blocking=False) | to(dtype) | to(tensor): moves
        parameters and buffers to the device and casts the floating-point ones to the dtype."""
        device, dtype, _ = _parse_to(*args, **kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")

        def convert(t):
            kw = {}
            if device is not None:
                kw["device"] = device
            if dtype is not None and t.is_floating_point():
                kw["dtype"] = dtype
            return t.to(**kw)

        return self._apply(convert)

    # ------------------------------------------------------------------ calling and printing

    def _call_impl(self, *args, **kwargs):
        forward_call = self.forward
        if not (self._backward_hooks or self._backward_pre_hooks or self._forward_hooks
                or self._forward_pre_hooks or _global_call_hooks):
            return forward_call(*args, **kwargs)
        return self._call_with_hooks(forward_call, args, kwargs)

    __call__ = _call_impl

    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        """The module-specific part of repr (one line or several); override in subclasses."""
        return ""

    def __repr__(self):
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:  # "" would split into ['']
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:  # simple one-liner
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"
