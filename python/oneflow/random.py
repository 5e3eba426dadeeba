"""oneflow.random: the default generator's seeding and state (as torch.random)."""

import contextlib

from ._random import (  # noqa: F401
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, device_type="cpu", **kwargs):
    """Runs the block and then restores the CPU generator's state (as torch.random.fork_rng)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
