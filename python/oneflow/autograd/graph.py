"""oneflow.autograd.graph, as torch.autograd.graph: hooks on the tensors autograd saves for
backward (Note [Saved tensor hooks] in src/autograd/node.h): `saved_tensors_hooks(pack, unpack)`,
`save_on_cpu` (saved tensors kept in host memory until backward) and
`disable_saved_tensors_hooks`, both hooks running with grad mode off (not supported: backward with
create_graph=True through a saved input that requires grad, NotImplementedError); the `Node`
interface of grad_fn objects with their pre-hooks and hooks (Note [Node hooks]);
`register_multi_grad_hook`; `increment_version`; `GradientEdge` / `get_gradient_edge`
(autograd.grad to and from a node's output without its tensor)."""
import abc
import collections
import contextlib
import threading

from .. import _oneflow_internal as _C
from .._export import export as _export
from ._engine import Variable, _RemovableHandle

_DISABLED = []  # error messages of the enclosing disable_saved_tensors_hooks blocks


class saved_tensors_hooks:  # noqa: N801 - torch's name
    """Inside the block, every tensor saved for backward is replaced by pack_hook(tensor), and
    unpack_hook(that) gives it back when backward needs it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _DISABLED:
            raise RuntimeError(_DISABLED[-1])
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _C._pop_saved_tensors_hooks()
        return False


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Saved tensors are copied to host memory (pinned with pin_memory=True, where CUDA is
    available) and copied back to their device in backward: GPU memory for activations traded
    for transfers."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        import oneflow as flow

        def pack(t):
            pin = pin_memory and flow.cuda.is_available()
            host = flow.empty(tuple(t.shape), dtype=t.dtype)
            host.copy_(t)
            return t.device, (host.pin_memory() if pin else host)

        def unpack(packed):
            device, host = packed
            return host.to(device, non_blocking=pin_memory)

        super().__init__(pack, unpack)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside the block, entering saved_tensors_hooks raises RuntimeError(error_message)."""
    _DISABLED.append(error_message)
    try:
        yield
    finally:
        _DISABLED.pop()


class Node(abc.ABC):
    """The interface of autograd graph nodes (`tensor.grad_fn`): isinstance(t.grad_fn, Node)."""

    @abc.abstractmethod
    def name(self):
        """The node's name ('MulBackward0')."""

    @property
    @abc.abstractmethod
    def next_functions(self):
        """((node or None, input number), ...): where the gradients it produces go."""

    @abc.abstractmethod
    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after the node ran; may return new grad_inputs."""

    @abc.abstractmethod
    def register_prehook(self, fn):
        """fn(grad_outputs) before the node runs; may return new grad_outputs."""


@_export("flow._C.Node.register_hook")
def _node_register_hook(self, fn):
    return _RemovableHandle(self, self._register_hook(fn))


@_export("flow._C.Node.register_prehook")
def _node_register_prehook(self, fn):
    return _RemovableHandle(self, self._register_prehook(fn))


Node.register(_C.Node)


class _MultiHandle:
    def __init__(self, handles):
        self._handles = handles

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Runs fn once per backward pass over several tensors. mode "all": fn(grads), one entry per
    tensor (None where this backward gave it none), once their gradients are computed (here: at
    the end of the backward pass, as a queued engine callback); mode "any": fn(grad) with the
    first of their gradients computed. Returns a handle whose remove() unregisters it."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    if mode == "any":
        fired = [False]

        def reset():
            fired[0] = False

        def any_hook(grad):
            with lock:
                if fired[0]:
                    return
                fired[0] = True
            Variable._execution_engine.queue_callback(reset)
            fn(grad)

        return _MultiHandle([t.register_hook(any_hook) for t in tensors if t.requires_grad])
    pending = [None]  # this backward's gradients, from the first hook to the callback

    def flush():
        grads, pending[0] = pending[0], None
        fn(tuple(grads))

    def all_hook(i):
        def hook(grad):
            with lock:
                first = pending[0] is None
                if first:
                    pending[0] = [None] * len(tensors)
                pending[0][i] = grad
            if first:
                Variable._execution_engine.queue_callback(flush)
        return hook

    return _MultiHandle([t.register_hook(all_hook(i)) for i, t in enumerate(tensors) if t.requires_grad])


def increment_version(tensor):
    """Bumps the version counter of tensor (or of each tensor of a sequence), as an in-place
    write does: a saved copy of it then refuses to be used in backward."""
    for t in (tensor if isinstance(tensor, (list, tuple)) else (tensor,)):
        t._increment_version()


class GradientEdge(collections.namedtuple("GradientEdge", ["node", "output_nr"])):
    """An edge of the autograd graph: output `output_nr` of `node` (a leaf's edge is its
    AccumulateGrad node, output 0). autograd.grad takes edges as inputs (the gradient flowing
    into that output) and as outputs (the backward started there, seeded by grad_outputs)."""

    __slots__ = ()


def get_gradient_edge(tensor):
    """The GradientEdge of `tensor`'s gradient: autograd.grad(loss, get_gradient_edge(t)) is
    autograd.grad(loss, t), and still works once t itself is gone."""
    node, output_nr = _C._gradient_edge(tensor)
    return GradientEdge(node, output_nr)

