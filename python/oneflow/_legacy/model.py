"""``flow.Model``: OneFlow's high-level training / validation loop (INVENTORY C.11).

    class LeNet(flow.Model):
        def __init__(self):
            super().__init__()
            self.net = ...
        def forward(self, x):
            return self.net(x)
        def training_step(self, batch, optimizer_idx=0):
            x, y = batch
            return flow.nn.functional.cross_entropy(self(x), y)
        def validation_step(self, batch):
            x, y = batch
            return (self(x).argmax(1) == y).float().mean()
        def configure_optimizers(self):
            return flow.optim.SGD(self.parameters(), lr=0.1)

    train = flow.model.TrainingConfig()
    train.config_data(loader)            # an iterable of batches (cycled) or f(step, optimizer_idx)
    train.config_execution_mode("graph")  # "eager" (default) or "graph": steps as an nn.Graph
    LeNet().fit(training_config=train, validation_config=..., checkpoint_config=...,
                callbacks=[...], max_steps=100)

``configure_optimizers`` may return one optimizer, a list (one ``training_step`` per optimizer
and step, with its ``optimizer_idx``, as GANs need), or ``(optimizers, lr_schedulers)``.
"""
import os

from ..nn.graph.graph import Graph
from ..nn.modules.module import Module


class _Data:
    def __init__(self):
        self._data, self._iter = None, None

    def config_data(self, data):
        """An iterable of batches (restarted when exhausted) or a callable(step_idx, optimizer_idx)."""
        if not callable(data) and not hasattr(data, "__iter__"):
            raise TypeError(f"config_data: expected an iterable of batches or a callable, got {type(data).__name__}")
        self._data, self._iter = data, None
        return self

    def _batch(self, step, opt_idx=0):
        if callable(self._data) and not hasattr(self._data, "__iter__"):
            return self._data(step, opt_idx)
        if self._iter is None:
            self._iter = iter(self._data)
        try:
            return next(self._iter)
        except StopIteration:
            self._iter = iter(self._data)
            return next(self._iter)


class TrainingConfig(_Data):
    def __init__(self):
        super().__init__()
        self.exe_mode = "eager"

    def config_execution_mode(self, mode="eager"):
        if mode not in ("eager", "graph"):
            raise ValueError(f"config_execution_mode: mode must be 'eager' or 'graph', got {mode!r}")
        self.exe_mode = mode
        return self


class ValidationConfig(_Data):
    def __init__(self):
        super().__init__()
        self.step_interval = 10

    def config_step_interval(self, step_interval=1):
        if step_interval < 1:
            raise ValueError("config_step_interval: step_interval must be >= 1")
        self.step_interval = int(step_interval)
        return self


class CheckpointConfig:
    def __init__(self):
        self.load_dirpath = None
        self.save_dirpath, self.save_step_interval = None, 1

    def config_load(self, dirpath=None):
        """Loads the model's state from `dirpath` (flow.save's format) before training."""
        self.load_dirpath = dirpath
        return self

    def config_save(self, dirpath=None, step_interval=1):
        """Saves the model's state to `dirpath`/step_<n> every step_interval steps."""
        if step_interval < 1:
            raise ValueError("config_save: step_interval must be >= 1")
        self.save_dirpath, self.save_step_interval = dirpath, int(step_interval)
        return self


class Callback:
    """Hooks of Model.fit; override the ones needed."""

    def on_training_step_end(self, outputs, step_idx, optimizer_idx):
        pass

    def on_validation_step_end(self, outputs, step_idx):
        pass


class _StepGraph(Graph):
    """A training step of the model for one optimizer, as a graph."""

    def __init__(self, model, opt, sch, opt_idx):
        super().__init__()
        self.model = model
        object.__setattr__(self, "_idx", opt_idx)
        self.add_optimizer(opt, lr_sch=sch)

    def build(self, batch):
        loss = self.model.training_step(batch=batch, optimizer_idx=self._idx)
        loss.backward()
        return loss


class Model(Module):
    """A module that trains itself (see the module's docstring)."""

    def training_step(self, *args, **kwargs):
        """One training batch -> the loss to minimize."""
        raise NotImplementedError(f"{type(self).__name__} must define training_step")

    def validation_step(self, *args, **kwargs):
        """One validation batch -> anything (handed to the callbacks)."""
        raise NotImplementedError(f"{type(self).__name__} must define validation_step")

    def configure_optimizers(self):
        """The optimizer(s) and optionally their LR schedulers."""
        raise NotImplementedError(f"{type(self).__name__} must define configure_optimizers")

    def method_overrided(self, method_name=None):
        """Whether this model's class defines `method_name` itself (not Model's default)."""
        return getattr(type(self), method_name, None) is not getattr(Model, method_name, None)

    def _optimizers(self):
        conf = self.configure_optimizers()
        scheds = []
        if isinstance(conf, tuple) and len(conf) == 2 and isinstance(conf[0], (list, tuple)):
            conf, scheds = conf
        opts = list(conf) if isinstance(conf, (list, tuple)) else [conf]
        scheds = list(scheds) if isinstance(scheds, (list, tuple)) else [scheds]
        by_opt = {id(getattr(s, "optimizer", None)): s for s in scheds}
        return [(o, by_opt.get(id(o))) for o in opts]

    def fit(self, training_config=None, validation_config=None, checkpoint_config=None, callbacks=None,
            max_steps=100):
        """Runs max_steps training steps (each optimizer once per step), validation every
        validation_config's step interval, and checkpoints as checkpoint_config says."""
        from .. import load, no_grad, save
        if training_config is None or training_config._data is None:
            raise ValueError("Model.fit: give a TrainingConfig with config_data(...)")
        if not self.method_overrided("training_step") or not self.method_overrided("configure_optimizers"):
            raise NotImplementedError("Model.fit needs training_step and configure_optimizers")
        callbacks = [] if callbacks is None else (list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks])
        ckpt = checkpoint_config
        if ckpt is not None and ckpt.load_dirpath is not None:
            self.load_state_dict(load(ckpt.load_dirpath))
        opts = self._optimizers()
        graphs = None
        if training_config.exe_mode == "graph":
            graphs = [_StepGraph(self, o, s, i) for i, (o, s) in enumerate(opts)]
        validate = validation_config is not None and validation_config._data is not None
        for step in range(max_steps):
            self.train()
            for i, (opt, sch) in enumerate(opts):
                batch = training_config._batch(step, i)
                if graphs is not None:
                    loss = graphs[i](batch)
                else:
                    loss = self.training_step(batch=batch, optimizer_idx=i)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    if sch is not None:
                        sch.step()
                for cb in callbacks:
                    cb.on_training_step_end(loss, step, i)
            if validate and (step + 1) % validation_config.step_interval == 0:
                self.eval()
                with no_grad():
                    out = self.validation_step(batch=validation_config._batch(step))
                for cb in callbacks:
                    cb.on_validation_step_end(out, step)
            if ckpt is not None and ckpt.save_dirpath is not None and (step + 1) % ckpt.save_step_interval == 0:
                save(self.state_dict(), os.path.join(ckpt.save_dirpath, f"step_{step + 1}"))
