"""``flow.layers.batch_normalization`` of OneFlow 0.x and its fused ``_relu`` / ``_add_relu``
forms: batch normalization with its own variables "<name>-gamma", "<name>-beta" (trainable) and
"<name>-moving_mean", "<name>-moving_variance" (not trainable).

In a train job (and eagerly outside jobs) with training=True it normalizes by the batch's
statistics and moves the moving ones: moving = momentum * moving + (1 - momentum) * batch (the
batch variance unbiased, as OneFlow's cuDNN kernel); in predict jobs or with training=False it
normalizes by the moving statistics.
"""
from . import qat
from .initializers import constant_initializer
from .layers import relu
from .variables import get_variable


def _bn(inputs, axis, momentum, epsilon, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
        gamma_regularizer, moving_mean_initializer, moving_variance_initializer, trainable, training, name,
        gamma_name=None, beta_name=None, moving_mean_name=None, moving_variance_name=None):
    from ..nn import functional as F
    from ._job_state import current_job
    if inputs.ndim < 2:
        raise ValueError(f"layers.batch_normalization: inputs need at least 2 dimensions, got {inputs.ndim}")
    if not -inputs.ndim <= axis < inputs.ndim:
        raise IndexError(f"layers.batch_normalization: axis {axis} is out of range for {inputs.ndim} dimensions")
    if not 0.0 <= momentum <= 1.0:
        raise ValueError(f"layers.batch_normalization: momentum must be in [0, 1], got {momentum}")
    axis %= inputs.ndim
    c = inputs.shape[axis]
    dtype = inputs.dtype

    def var(suffix, given, init, default, reg=None, train=False):
        return get_variable(given or f"{name}-{suffix}", shape=(c,), dtype=dtype,
                            initializer=init or constant_initializer(default), regularizer=reg,
                            trainable=train and trainable)
    gamma = var("gamma", gamma_name, gamma_initializer, 1.0, gamma_regularizer, True) if scale else None
    beta = var("beta", beta_name, beta_initializer, 0.0, beta_regularizer, True) if center else None
    mean = var("moving_mean", moving_mean_name, moving_mean_initializer, 0.0)
    variance = var("moving_variance", moving_variance_name, moving_variance_initializer, 1.0)
    job = current_job()
    use_batch = training and trainable and (job is None or job.type == "train")

    def run(_):
        x = inputs.movedim(axis, 1) if axis != 1 else inputs
        out = F.batch_norm(x, mean, variance, gamma, beta, training=use_batch, momentum=1.0 - momentum, eps=epsilon)
        return out.movedim(1, axis) if axis != 1 else out
    return qat.link("normalization", inputs, run)  # (a link of a convolution's chain, qat.py)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None, beta_regularizer=None, gamma_regularizer=None,
                        moving_mean_initializer=None, moving_variance_initializer=None, trainable=True,
                        training=True, name="BatchNorm", gamma_name=None, beta_name=None, moving_mean_name=None,
                        moving_variance_name=None):
    return _bn(inputs, axis, momentum, epsilon, center, scale, beta_initializer, gamma_initializer,
               beta_regularizer, gamma_regularizer, moving_mean_initializer, moving_variance_initializer,
               trainable, training, name, gamma_name, beta_name, moving_mean_name, moving_variance_name)


def batch_normalization_relu(inputs, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
                             beta_initializer=None, gamma_initializer=None, beta_regularizer=None,
                             gamma_regularizer=None, moving_mean_initializer=None, moving_variance_initializer=None,
                             trainable=True, training=True, name="BatchNorm"):
    """relu(batch_normalization(inputs)) (0.x's fused kernel; the same values; on the CPU 0.x ran the
    two ops, links of a convolution's chain with quantization-aware training)."""
    return relu(_bn(inputs, axis, momentum, epsilon, center, scale, beta_initializer, gamma_initializer,
                    beta_regularizer, gamma_regularizer, moving_mean_initializer, moving_variance_initializer,
                    trainable, training, name))


def batch_normalization_add_relu(inputs, addend=None, axis=-1, momentum=0.99, epsilon=0.001, center=True,
                                 scale=True, beta_initializer=None, gamma_initializer=None, beta_regularizer=None,
                                 gamma_regularizer=None, moving_mean_initializer=None,
                                 moving_variance_initializer=None, trainable=True, training=True, name="BatchNorm"):
    """relu(batch_normalization(inputs) + addend) (ResNet's residual join; without addend the
    _relu form)."""
    out = _bn(inputs, axis, momentum, epsilon, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
              gamma_regularizer, moving_mean_initializer, moving_variance_initializer, trainable, training, name)
    if addend is not None:
        if tuple(addend.shape) != tuple(out.shape):
            raise ValueError(f"layers.batch_normalization_add_relu: addend has shape {tuple(addend.shape)}, "
                             f"the inputs {tuple(out.shape)}")
        out = out + addend
    return relu(out)
