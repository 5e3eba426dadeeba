"""oneflow.futures: PyTorch's Future (`torch.futures`): a value that is set once, with callbacks
chained by then(). What the collectives' works return from get_future(), and what DDP's
communication hooks hand back."""


class Future:
    def __init__(self, *, devices=None):
        self._done, self._value, self._error = False, None, None
        self._callbacks = []
        self._waiter = None  # completes the future when waited on (a pending transfer)

    def done(self):
        return self._done

    def wait(self):
        if not self._done and self._waiter is not None:
            waiter, self._waiter = self._waiter, None
            try:
                result = waiter()
                if not self._done:  # (a chained future is completed by its parent's callback)
                    self.set_result(result)
            except Exception as e:  # noqa: BLE001 - kept for value() / wait()
                if not self._done:
                    self.set_exception(e)
        if not self._done:
            raise RuntimeError("Future.wait(): the future has no result and nothing can complete it")
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        return self.wait()

    def set_result(self, result):
        if self._done:
            raise RuntimeError("Future can only be marked completed once")
        self._done, self._value = True, result
        self._run_callbacks()

    def set_exception(self, result):
        if self._done:
            raise RuntimeError("Future can only be marked completed once")
        self._done, self._error = True, result
        self._run_callbacks()

    def _run_callbacks(self):
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, callback):
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def then(self, callback):
        """A future of callback(self), run when this one completes."""
        out = Future()
        if not self._done and self._waiter is not None:
            out._waiter = self.wait  # waiting on out completes self first, whose callback completes out

        def run(fut):
            try:
                out.set_result(callback(fut))
            except Exception as e:  # noqa: BLE001
                out.set_exception(e)
        self.add_done_callback(run)
        return out


def collect_all(futures):
    """A future of the list of `futures`, complete when they all are."""
    futures = list(futures)
    out = Future()

    def wait_each():
        for f in futures:
            f.wait()
        return futures
    out._waiter = wait_each
    if all(f.done() for f in futures):
        out.wait()
    return out


def wait_all(futures):
    return [f.wait() for f in futures]


__all__ = ["Future", "collect_all", "wait_all"]
