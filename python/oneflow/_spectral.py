"""Window functions and the short-time Fourier transform (PyTorch's torch.stft / torch.istft and
torch.*_window), composed of table ops over the fft primitives, so they are differentiable.
Written as PyTorch's ATen implementations (same argument checks and defaults)."""
import builtins
import math

from . import _oneflow_internal as _C
import oneflow as flow  # the assembled namespace, looked up at call time

from ._export import export, export_value
from ._padding import _pad_dim


def _window_args(name, window_length, dtype, periodic=True):
    # PyTorch's parser takes `periodic` only as a bool (bartlett_window(2, -3) is a TypeError).
    if not isinstance(periodic, builtins.bool):
        raise TypeError(f"{name}(): argument 'periodic' must be bool, not {type(periodic).__name__}")
    if not isinstance(window_length, builtins.int) or window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    dtype = dtype or _C.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    return dtype


def _finish(w, periodic, opts):
    """The window's last steps: dropping the periodic extra point, then the factory arguments
    (`opts`: device, requires_grad, layout, pin_memory, placement, sbp, as PyTorch's and upstream
    OneFlow's factories take them)."""
    if periodic:
        w = w.narrow(0, 0, w.shape[0] - 1)
    device, requires_grad, layout, placement, sbp = (opts.get(k) for k in (
        "device", "requires_grad", "layout", "placement", "sbp"))
    if layout is not None and layout is not flow.strided:
        raise TypeError(f"argument 'layout' must be oneflow.layout, not {type(layout).__name__}")
    if placement is not None or sbp is not None:  # a global window (upstream OneFlow's factories)
        if placement is None or sbp is None:
            raise TypeError("a global tensor needs both placement and sbp")
        if device is not None:
            raise TypeError("give either device (a local tensor) or placement (a global one), not both")
        # the logical window, the same on every rank: broadcast, then laid out as asked
        w = w.to(placement.type).to_global(placement=placement, sbp=flow.sbp.broadcast)
        w = w.to_global(placement=placement, sbp=sbp)
    elif device is not None:
        w = w.to(device)
    if requires_grad:
        w.requires_grad = True
    return w


def _trivial(window_length, dtype, opts):
    w = _C.ones(window_length, dtype=dtype) if window_length == 1 else _C.zeros(0, dtype=dtype)
    return _finish(w, False, opts)


@export("flow.hamming_window")
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None,
                   device=None, pin_memory=False, requires_grad=False, placement=None, sbp=None):
    opts = dict(device=device, requires_grad=requires_grad, layout=layout, placement=placement, sbp=sbp)
    dtype = _window_args("hamming_window", window_length, dtype, periodic)
    if window_length <= 1:
        return _trivial(window_length, dtype, opts)
    n = window_length + 1 if periodic else window_length
    w = _C.arange(0, n, 1, dtype=dtype) * (math.pi * 2.0 / (n - 1))
    w = _C.cos(w) * (-beta) + alpha
    return _finish(w, periodic, opts)


@export("flow.hann_window")
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False, placement=None, sbp=None):
    _window_args("hann_window", window_length, dtype, periodic)
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad, placement=placement, sbp=sbp)


@export("flow.blackman_window")
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False, placement=None, sbp=None):
    opts = dict(device=device, requires_grad=requires_grad, layout=layout, placement=placement, sbp=sbp)
    dtype = _window_args("blackman_window", window_length, dtype, periodic)
    if window_length <= 1:
        return _trivial(window_length, dtype, opts)
    n = window_length + 1 if periodic else window_length
    w = _C.arange(0, n, 1, dtype=dtype) * (math.pi / (n - 1))
    w = _C.cos(w * 4) * 0.08 - _C.cos(w * 2) * 0.5 + 0.42
    return _finish(w, periodic, opts)


@export("flow.bartlett_window")
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False, placement=None, sbp=None):
    opts = dict(device=device, requires_grad=requires_grad, layout=layout, placement=placement, sbp=sbp)
    dtype = _window_args("bartlett_window", window_length, dtype, periodic)
    if window_length <= 1:
        return _trivial(window_length, dtype, opts)
    n = window_length + 1 if periodic else window_length
    w = _C.arange(0, n, 1, dtype=dtype) * (2.0 / (n - 1))
    first = ((n - 1) >> 1) + 1
    w = _C.cat([w.narrow(0, 0, first), 2 - w.narrow(0, first, n - first)], 0)
    return _finish(w, periodic, opts)


@export("flow.kaiser_window")
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False, placement=None, sbp=None):
    opts = dict(device=device, requires_grad=requires_grad, layout=layout, placement=placement, sbp=sbp)
    dtype = _window_args("kaiser_window", window_length, dtype, periodic)
    if window_length <= 1:
        return _trivial(window_length, dtype, opts)
    n = window_length + 1 if periodic else window_length
    alpha = (n - 1) / 2.0
    a = _C.arange(0, n, 1, dtype=dtype)
    r = (a - alpha) / alpha
    w = _C.i0(_C.sqrt(1 - r * r) * beta) / _C.i0(_C.full([], beta, dtype=dtype))
    return _finish(w, periodic, opts)


def _centered_window(window, win_length, n_fft, dtype, device):
    """The window (or ones, on the signal's device) zero-padded on both sides to n_fft."""
    w = window if window is not None else _C.ones(win_length, dtype=dtype, device=device)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        w = _C.cat([_C.zeros(left, dtype=w.dtype, device=w.device), w,
                    _C.zeros(n_fft - win_length - left, dtype=w.dtype, device=w.device)], 0)
    return w


@export("flow.stft")
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    from . import fft as _fft  # noqa: F401  (the primitives' module is loaded with flow)

    is_complex = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not is_complex:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        return_complex = True
    # Note [Upstream's words] (src/autograd/meta.cpp): upstream's text in brackets.
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D [OneFlow: Expected a 1D or 2D "
                           f"tensor,but got {input.dim()}D]")
    if n_fft <= 0:  # before the centring pad, which is n_fft // 2 wide
        raise RuntimeError(f"stft: expected 0 < n_fft, but got n_fft={n_fft} [OneFlow: Expected 0 < n_fft , but got "
                           f"{n_fft}]")
    x = input
    if center:
        if pad_mode not in ("reflect", "constant", "replicate", "circular"):
            raise ValueError(f"stft: unsupported pad_mode {pad_mode!r}")
        pad = n_fft // 2
        if pad_mode == "constant":
            shape = list(x.shape)
            shape[-1] = pad
            z = _C.zeros(shape, dtype=x.dtype, device=x.device)
            x = _C.cat([z, x, z], -1)
        else:
            x = _pad_dim(x, x.dim() - 1, pad, pad, pad_mode)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if x.dim() == 1:
        x = x.unsqueeze(0)
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft} [OneFlow: Expected 0 < n_fft < "
                           f"{length} ,but got {n_fft}]")
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length} [OneFlow: Expected "
                           f"hop_length > 0, but got {hop_length}]")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win_length} [OneFlow: "
                           f"Expected 0 < win_length <=n_fft ,but got {win_length}]")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"stft: Expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {tuple(window.shape)}")  # the same words as upstream's
    frames = x.unfold(1, n_fft, hop_length)  # (batch, n_frames, n_fft)
    if window is not None or win_length < n_fft:
        frames = frames * _centered_window(window, win_length, n_fft, x.dtype, x.device)
    complex_fft = frames.dtype.is_complex
    onesided = (not complex_fft) if onesided is None else onesided
    norm = 1 if normalized else 0
    if complex_fft:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _C.fft_c2c(frames, [2], norm, True)
    else:
        frames = frames if frames.dtype in (_C.float32, _C.float64) else _C.cast(frames, _C.get_default_dtype())
        if onesided:
            out = _C.fft_r2c(frames, [2], norm, True)
        else:
            cdt = _C.complex128 if frames.dtype == _C.float64 else _C.complex64
            out = _C.fft_c2c(_C.cast(frames, cdt), [2], norm, True)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if return_complex else _C.view_as_real(out)


def _overlap_add(frames, hop, total):
    """Sum of frames (ch, n_frames, n_fft) placed hop apart: (ch, total). unfold's adjoint."""
    ch, n_frames, n_fft = frames.shape
    dev = frames.device
    starts = _C.arange(0, n_frames * hop, hop, dtype=_C.int64, device=dev).reshape(n_frames, 1)
    idx = (starts + _C.arange(0, n_fft, 1, dtype=_C.int64, device=dev).reshape(1, n_fft)).reshape(-1)
    out = _C.zeros((ch, total), dtype=frames.dtype, device=dev)
    return _C.index_add(out, 1, idx, frames.reshape(ch, n_frames * n_fft))


@export("flow.istft")
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from "
                           "stft with return_complex=True.")
    if input.numel() == 0:
        raise RuntimeError("istft: Input tensor cannot be empty")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: Expected a tensor with 3 or 4 dimensions of complex, but got "
                           f"{input.dim() + 1}")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected_len = n_fft + hop_length * (n_frames - 1)
    onesided = (fft_size != n_fft) if onesided is None else onesided
    if onesided:
        if n_fft // 2 + 1 != fft_size:
            raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the "
                               "input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                               f"{fft_size}")
    elif n_fft != fft_size:
        raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input "
                           f"tensor to match n_fft when onesided=False, but got {fft_size}")
    if not (0 < hop_length <= win_length):
        raise RuntimeError("istft: expected 0 < hop_length <= win_length")
    if not (0 < win_length <= n_fft):
        raise RuntimeError("istft: expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError("Invalid window shape. window has to be 1D and length of `win_length`")
    real_dt = _C.float64 if input.dtype == _C.complex128 else _C.float32
    w = _centered_window(window, win_length, n_fft, real_dt, input.device)
    x = input.unsqueeze(0) if input.dim() == 2 else input
    x = x.transpose(1, 2)  # (ch, n_frames, fft_size)
    norm = 1 if normalized else 2
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _C.fft_c2c(x, [2], norm, False)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        frames = _C.fft_c2r(x, [2], norm, n_fft)
    y = _overlap_add(frames * w.reshape(1, 1, n_fft), hop_length, expected_len)
    env = _overlap_add((w * w).reshape(1, 1, n_fft).expand(1, n_frames, n_fft), hop_length,
                       expected_len)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = expected_len - n_fft // 2 if center else expected_len
    stop = builtins.min(end, expected_len)
    y = y.narrow(1, start, stop - start)
    env = env.narrow(1, start, stop - start)
    if bool((env.abs().min() < 1e-11).item()) if env.numel() else False:
        raise RuntimeError("istft: window overlap add min: 1")
    y = y / env
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > expected_len:
        shape = list(y.shape)
        shape[-1] = end - expected_len
        y = _C.cat([y, _C.zeros(shape, dtype=y.dtype, device=y.device)], -1)
    return y


export_value(lambda self, *args, **kwargs: flow.stft(self, *args, **kwargs), "Tensor.stft")
export_value(lambda self, *args, **kwargs: flow.istft(self, *args, **kwargs), "Tensor.istft")
