"""The built-in DDP communication hooks (PyTorch's default_hooks): `state` is the process group
(None: the world). Each averages the bucket over the group; the compressing ones send it in a
16-bit float and give the result back in the bucket's dtype."""
import oneflow as flow

from ... import _pg
from ..._collectives import all_reduce


def _group(process_group):
    return process_group if process_group is not None else _pg.GroupMember.WORLD


def _allreduce_fut(process_group, tensor):
    group = _group(process_group)
    tensor.div_(group.size())
    return all_reduce(tensor, group=group, async_op=True).get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """The default: the bucket's average over the group."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = _group(process_group)
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())
    fut = all_reduce(compressed, group=group, async_op=True).get_future()

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer
    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket):
    """The average, communicated in float16 (half the bytes)."""
    return _compress_hook(flow.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """The average, communicated in bfloat16."""
    return _compress_hook(flow.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(state, bucket):
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))
        fut = hook(state, bucket)

        def decompress(fut):
            value = fut.value()
            buffer.copy_(value[0] if isinstance(value, (list, tuple)) else value)
            return buffer
        return fut.then(decompress)
    return wrapped


def fp16_compress_wrapper(hook):
    """`hook` run on the bucket cast to float16, its result cast back."""
    return _compress_wrapper(flow.float16, hook)


def bf16_compress_wrapper(hook):
    return _compress_wrapper(flow.bfloat16, hook)
