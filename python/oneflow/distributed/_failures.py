"""Note [Failed processes]: when a process of a job raises and exits, the others learn it from
their collectives with it, which fail at once (Gloo's connections to it close: "Connection closed
by peer"), but that error says nothing of why. So init_process_group installs an exception hook
that records an uncaught exception's message in the world's store under the process's rank before
the process exits, and a collective failing on a lost connection appends what the store records:
every process of the job fails within seconds naming the process that failed first and its
error. (Best effort: the store lives in rank 0's process, so rank 0's own failure is only the
lost connection; the launcher still stops the processes of its node.)

The functions take the process groups' state (_pg._State: the world's store and group) as an
argument: this module sits below _pg, which installs the hook."""
import functools
import sys
import threading
import traceback

_KEY = "oneflow/failed/"
_LOST = ("closed by peer", "Connection reset", "Broken pipe", "Connection refused")


def record_uncaught_exceptions(state):
    """Records this process's uncaught exception in the world's store (see the Note); `state`
    holds the store and the world group (read when the exception comes)."""
    if getattr(sys.excepthook, "_oneflow_failures", False):
        return
    previous = sys.excepthook

    def record(text):
        try:
            if state.store is not None and state.world is not None:
                state.store.set(_KEY + str(state.world.rank()), text[-2000:])
        except Exception:  # noqa: BLE001 - (the store may be gone: the original error still prints)
            pass

    def hook(kind, value, tb):
        # (on a thread waited for 2 s at most: the store's server, in rank 0, may be gone too)
        text = "".join(traceback.format_exception_only(kind, value)).strip()
        writer = threading.Thread(target=record, args=(text,), daemon=True)
        writer.start()
        writer.join(2.0)
        previous(kind, value, tb)
    hook._oneflow_failures = True
    sys.excepthook = hook


def explain(error, state):
    """A collective's RuntimeError on a lost connection, with the failures the store records."""
    text = str(error)
    if not any(s in text for s in _LOST):
        return error
    if state.store is None or state.world is None:
        return error
    found = []
    try:
        for r in range(state.world.size()):
            if state.store.check([_KEY + str(r)]):
                found.append(f"rank {r} failed with {state.store.get(_KEY + str(r)).decode(errors='replace')}")
    except Exception:  # noqa: BLE001 - (the store's server went away too)
        return error
    if not found:
        return error
    return RuntimeError(f"{text} -- {'; '.join(found)}")


def explained(fn, state):
    """fn with its lost-connection errors explained from `state`'s store."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RuntimeError as e:
            better = explain(e, state)
            if better is e:
                raise
            raise better from None
    return call
