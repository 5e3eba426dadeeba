"""``graph.config`` (``oneflow.nn.graph.GraphConfig``): a graph's options -- AMP, gradient
accumulation, ZeRO, and the switches of the program passes (src/graph/passes.h), under OneFlow's
names; the switches OneFlow has for passes that do not exist here are accepted hints
(docs/graph.md)."""


class GraphConfig:
    """``graph.config``: the graph's options."""

    def __init__(self):
        self._amp = None  # (enabled, dtype or None)
        self._acc_steps = 1
        self._passes = dict(_PASSES)
        self._zero = None  # (stage, shard_min_size, shard_restore_level): zero.py
        self._on_change = None  # the graph's: a changed pass drops its traced programs
        self._pipeline_schedule = "1f1b"

    # The program's passes (src/graph/passes.h), all on by default. OneFlow runs its own
    # equivalents always, without a switch of their own; these switches exist for A/B measurement
    # and for debugging a program (``graph.debug(1)`` prints it after the passes).
    def _set_pass(self, name, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"{_PASS_SWITCHES[name]}: mode must be a bool, got {type(mode).__name__}")
        if self._passes[name] != mode:
            self._passes[name] = mode
            if self._on_change is not None:
                self._on_change()

    def enable_algebraic_simplification(self, mode=True):
        """transpose/t/permute pairs, reshape and view chains, casts to the same dtype or through a
        wider one and back, ops returning their input: removed."""
        self._set_pass("simplify", mode)

    def enable_constant_folding(self, mode=True):
        """Nodes whose tensor inputs are all constants (creation ops, ops on their results) are
        computed once, when the program is traced."""
        self._set_pass("fold", mode)

    def enable_common_subexpression_elimination(self, mode=True):
        """A pure node equal to an earlier one reuses its outputs."""
        self._set_pass("cse", mode)

    def enable_dead_code_elimination(self, mode=True):
        """Pure nodes whose outputs nothing uses are removed."""
        self._set_pass("dce", mode)

    def enable_producer_fusion(self, mode=True):
        """Fusion rules keyed by (producer op, consumer op): ``add(matmul(x, t(w)), b)`` (a
        Linear) becomes ``fused_matmul_bias(x, w, b)``, the bias accumulated by the GEMM."""
        self._set_pass("fuse", mode)

    def allow_fuse_add_to_output(self, mode=True):
        """OneFlow's switch: a residual ``add`` of a fused linear's output is written with its
        bias before the GEMM accumulates (``fused_matmul_bias(..., _add_to_output=r)``)."""
        self._set_pass("add_to_output", mode)

    def enable_pointwise_fusion(self, mode=True):
        """Groups of pointwise nodes (activations, arithmetic) whose inner values nothing else
        reads run as one node, per cache block of the output (forward values that need no
        gradient: inference graphs, no_grad regions)."""
        self._set_pass("fuse_pointwise", mode)

    def enable_drop_grad_writes(self, mode=True):
        """With the optimizers' updates as nodes (``allow_fuse_model_update_ops``), a parameter's
        gradient is not written to its ``.grad`` (which the graph clears after each call, as
        OneFlow leaves it None): the update reads it where the backward computed it."""
        self._set_pass("drop_grad_writes", mode)

    def enable_auto_memory(self, mode="AdaptiveMemory"):
        """OneFlow's memory switch: with any mode but ``"Disable"`` (or ``False``) the
        intermediates of a program run without grad take their storage from one arena per step
        at the memory plan's offsets (src/graph/memory_plan.h)."""
        if isinstance(mode, bool):
            on = mode
        elif mode in _AUTO_MEMORY_MODES:
            on = mode != "Disable"
        else:
            raise ValueError(f"enable_auto_memory: mode must be one of {', '.join(_AUTO_MEMORY_MODES)}, "
                             f"got {mode!r}")
        self._set_pass("arena", on)

    def enable_zero(self, mode=True, *, stage=2, shard_min_size=1024, shard_restore_level=1):
        """ZeRO on a data-parallel global graph: broadcast parameters of at least `shard_min_size`
        elements split over the ranks for their optimizer state (stage 1), and gradients (2), and
        themselves (3); `shard_restore_level` (0-2, OneFlow's pre-alpha switch) is recorded
        (zero.py)."""
        from .zero import check_args
        check_args(mode, stage, shard_min_size, shard_restore_level)
        zero = (stage, shard_min_size, shard_restore_level) if mode else None
        if zero != self._zero:
            self._zero = zero
            if self._on_change is not None:
                self._on_change()

    def set_zero_redundancy_optimizer_mode(self, mode="distributed_split"):
        raise RuntimeError("set_zero_redundancy_optimizer_mode has been replaced by enable_zero: call "
                           "graph.config.enable_zero(True, stage=...) to shard the optimizer state")

    @property
    def zero_stage(self):
        """The ZeRO stage (0: off)."""
        return 0 if self._zero is None else self._zero[0]

    def allow_fuse_model_update_ops(self, mode=True):
        """The optimizers' updates as nodes at the end of a training graph's program (their fused
        multi-tensor ops, reading the gradients the backward nodes computed;
        python/oneflow/nn/graph/update_nodes.py), instead of ``step()`` in Python after it. On by
        default: a compiled OneFlow graph always holds its model-update ops (its switch of this
        name, off there, fuses further ops into them); ``False`` steps in Python (the same
        numbers; docs/graph.md "The update as nodes" has the measurement)."""
        self._set_pass("update_nodes", mode)

    @property
    def passes(self):
        """{pass: enabled} of the program passes."""
        return dict(self._passes)

    def set_gradient_accumulation_steps(self, value):
        """A training graph's call takes a mini-batch: each input is split along dim 0 into
        ``value`` micro-batches, ``build()`` runs on each in turn with its loss scaled by
        ``1 / value`` (gradients accumulate: their mean over the micro-batches), and the optimizers
        step once. Each output comes back packed along dim 0 (scalars stacked to ``(value,)``),
        as OneFlow's graph returns them. Graphs without an optimizer ignore it."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"set_gradient_accumulation_steps: value must be an int, got {type(value).__name__}")
        if value < 1:
            raise ValueError(f"set_gradient_accumulation_steps: value must be at least 1, got {value}")
        self._acc_steps = value

    @property
    def gradient_accumulation_steps(self):
        return self._acc_steps

    def set_pipeline_schedule(self, mode="1f1b"):
        """The order a training graph with pipeline stages (``block.config.set_stage``) runs its
        micro-batches in: ``"1f1b"`` (the default; Note [1F1B], pipeline.py) or ``"sequential"``
        (each micro-batch's forward and backward before the next one's, as a graph without
        stages runs them): the same numbers, for A/B measurement. OneFlow has no such switch (its
        stages' buffer sizes give the 1F1B order); the program is not traced again."""
        if not isinstance(mode, str):
            raise TypeError(f"set_pipeline_schedule: mode must be a str, got {type(mode).__name__}")
        if mode not in _PIPELINE_SCHEDULES:
            raise ValueError(f"set_pipeline_schedule: mode must be one of {', '.join(map(repr, _PIPELINE_SCHEDULES))}, "
                             f"got {mode!r}")
        self._pipeline_schedule = mode

    @property
    def pipeline_schedule(self):
        """``"1f1b"`` or ``"sequential"`` (set_pipeline_schedule)."""
        return self._pipeline_schedule

    def enable_amp(self, mode=True, *, dtype=None):
        """Runs the graph's ops in mixed precision (``flow.autocast``): float16 on CUDA and
        bfloat16 on CPU unless ``dtype`` is given."""
        if not isinstance(mode, bool):
            raise TypeError(f"enable_amp: mode must be a bool, got {type(mode).__name__}")
        self._amp = (mode, dtype) if mode else None

    @property
    def amp_enabled(self):
        return self._amp is not None

    # OneFlow's compiler switches (fusion passes, cuDNN algorithm search, memory and scheduling
    # strategies): they tune how OneFlow compiles a graph, not what it computes. The program here
    # has none of those passes yet (its own are the switches above), so they are accepted and
    # recorded (`hints`) for the ones that will come.
    _HINTS = ("allow_fuse_cast_scale",
              "enable_cudnn_conv_heuristic_search_algo", "enable_straighten_algorithm",
              "enable_compress_memory", "enable_fuse_embedding_interaction", "enable_auto_parallel",
              "set_outputs_buffer_size", "enable_multi_tensor_update", "enable_fused_model_update_cast",
              "allow_fuse_embedding_interaction")

    def __getattr__(self, name):
        if name not in GraphConfig._HINTS:
            raise AttributeError(f"GraphConfig has no option '{name}'")

        def setter(value=True, *args, **kwargs):
            self.__dict__.setdefault("hints", {})[name] = value
        return setter

    def __repr__(self):
        return (f"GraphConfig(amp={self.amp_enabled}, passes={self._passes}, "
                f"hints={self.__dict__.get('hints', {})})")


# (add_to_output: off by default, as OneFlow's `enable_fuse_add_to_output`: the residual summed
# inside the GEMM rounds differently from eager's separate add, and OneFlow's graphs give eager's
# numbers unless asked otherwise)
_PASSES = {"simplify": True, "fold": True, "cse": True, "dce": True, "fuse": True, "add_to_output": False,
           "fuse_pointwise": True, "drop_grad_writes": True, "arena": True, "update_nodes": True}
_PASS_SWITCHES = {"simplify": "enable_algebraic_simplification", "fold": "enable_constant_folding",
                  "cse": "enable_common_subexpression_elimination", "dce": "enable_dead_code_elimination",
                  "fuse": "enable_producer_fusion", "add_to_output": "allow_fuse_add_to_output",
                  "fuse_pointwise": "enable_pointwise_fusion", "drop_grad_writes": "enable_drop_grad_writes",
                  "arena": "enable_auto_memory",
                  "update_nodes": "allow_fuse_model_update_ops"}
_PIPELINE_SCHEDULES = ("1f1b", "sequential")
_AUTO_MEMORY_MODES = ("Disable", "SlightMemoryDown", "ModerateMemoryDown", "HeavyMemoryDown", "AdaptiveMemory")
