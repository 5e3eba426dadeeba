"""A context manager setting attributes of a backend module for a block (torch's flags())."""

import contextlib


@contextlib.contextmanager
def set_flags(module, **values):
    values = {k: v for k, v in values.items() if v is not None}
    old = {k: getattr(module, k) for k in values}
    for k, v in values.items():
        setattr(module, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(module, k, v)
