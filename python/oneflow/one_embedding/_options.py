"""The option dictionaries of flow.one_embedding (OneFlow's layout, so that scripts that build or
inspect them by hand keep working): initializers, table and column options, store options, and
their validation (docs/one_embedding.md)."""
import numbers

_INIT_FIELDS = {
    "uniform": ("low", "high"),
    "normal": ("mean", "std"),
    "constant": ("value",),
    "trunc_normal": ("mean", "std", "a", "b"),
}


def _number(fn, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{fn}: {name} must be a number, got {type(v).__name__}")
    return float(v)


def make_uniform_initializer(low=0.0, high=1.0):
    """Initializer drawing a new row's values uniformly from [low, high)."""
    low, high = (_number("make_uniform_initializer", n, v) for n, v in (("low", low), ("high", high)))
    if not low <= high:
        raise ValueError(f"make_uniform_initializer: low ({low}) must not exceed high ({high})")
    return {"type": "uniform", "low": low, "high": high}


def make_normal_initializer(mean=0.0, std=1.0):
    """Initializer drawing a new row's values from N(mean, std^2)."""
    mean = _number("make_normal_initializer", "mean", mean)
    std = _number("make_normal_initializer", "std", std)
    if std < 0:
        raise ValueError(f"make_normal_initializer: std must be non-negative, got {std}")
    return {"type": "normal", "mean": mean, "std": std}


def make_constant_initializer(value):
    """Initializer filling a new row with `value`."""
    return {"type": "constant", "value": _number("make_constant_initializer", "value", value)}


def make_trunc_normal_initializer(mean=0.0, std=1.0, a=-2.0, b=2.0):
    """Initializer drawing from N(mean, std^2) restricted to [a, b] (draws outside are redrawn)."""
    fn = "make_trunc_normal_initializer"
    mean, std, a, b = (_number(fn, n, v) for n, v in (("mean", mean), ("std", std), ("a", a), ("b", b)))
    if std < 0 or not a < b:
        raise ValueError(f"{fn}: needs std >= 0 and a < b, got std={std}, a={a}, b={b}")
    return {"type": "trunc_normal", "mean": mean, "std": std, "a": a, "b": b}


def check_initializer(fn, init):
    """The initializer as the store's (kind, p0, p1, p2, p3) tuple; raises naming `fn`."""
    if not isinstance(init, dict) or "type" not in init:
        raise TypeError(f"{fn}: an initializer must be a dict made by make_*_initializer, got {init!r}")
    kind = init["type"]
    if kind not in _INIT_FIELDS:
        raise ValueError(f"{fn}: unknown initializer type {kind!r} (expected one of "
                         f"{', '.join(sorted(_INIT_FIELDS))})")
    fields = _INIT_FIELDS[kind]
    missing = [f for f in fields if f not in init]
    if missing:
        raise ValueError(f"{fn}: the {kind} initializer lacks {', '.join(missing)}")
    vals = [_number(fn, f, init[f]) for f in fields]
    return (kind, *vals, *([0.0] * (4 - len(vals))))


def make_column_options(initializer):
    """One column of a table (MultiTableMultiColumnEmbedding): its initializer."""
    return {"initializer": initializer}


def make_table_options(param):
    """A table's options: an initializer (every column), or a list of column options."""
    if isinstance(param, dict):
        return {"initializer": param}
    if isinstance(param, (list, tuple)):
        return {"columns": list(param)}
    raise ValueError("make_table_options: param must be an initializer (dict) or a list of "
                     f"column options, got {type(param).__name__}")


def make_table(param):
    """Alias of make_table_options."""
    return make_table_options(param)


def _count(fn, name, v, allow_none=False):
    """A non-negative int argument (sizes, budgets), or None where allowed."""
    if v is None and allow_none:
        return v
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{fn}: {name} must be an int, got {type(v).__name__}")
    return int(v)


def _store_options(caches, persistent_path, capacity, size_factor, storage_dim, physical_block_size, fn):
    if not isinstance(persistent_path, (str, list, tuple)):
        raise TypeError(f"{fn}: persistent_path must be a str or a list of str (one per rank), "
                        f"got {type(persistent_path).__name__}")
    if physical_block_size not in (512, 4096):
        raise ValueError(f"{fn}: physical_block_size must be 512 or 4096, got {physical_block_size}")
    if not isinstance(size_factor, int) or size_factor < 1:
        raise ValueError(f"{fn}: size_factor must be a positive int, got {size_factor!r}")
    if not isinstance(storage_dim, int) or (storage_dim != -1 and storage_dim < 1):
        raise ValueError(f"{fn}: storage_dim must be -1 or a positive int, got {storage_dim!r}")
    return {
        "kv_store": {
            "caches": caches,
            "persistent_table": {"path": persistent_path, "physical_block_size": physical_block_size,
                                 "capacity_hint": int(capacity)},
        },
        "size_factor": size_factor,
        "storage_dim": storage_dim,
    }


def make_device_mem_store_options(persistent_path, capacity, size_factor=1, storage_dim=-1,
                                  physical_block_size=4096):
    """Store options of a table held whole in (device) memory; `capacity` rows expected.

    size_factor: floats kept per embedding element: 1 for SGD, 2 for SGD with momentum, Adagrad,
    3 for Adam and Ftrl (the optimizer's state lives in the row); storage_dim overrides it."""
    fn = "make_device_mem_store_options"
    capacity = _count(fn, "capacity", capacity)
    if capacity <= 0:
        raise ValueError(f"{fn}: capacity must be positive, got {capacity}")
    caches = [{"policy": "full", "capacity": int(capacity), "value_memory_kind": "device"}]
    return _store_options(caches, persistent_path, capacity, size_factor, storage_dim, physical_block_size, fn)


def make_cached_ssd_store_options(cache_budget_mb, persistent_path, capacity=None, size_factor=1,
                                  storage_dim=-1, physical_block_size=4096, host_cache_budget_mb=0):
    """Store options of a table on disk with an LRU cache of `cache_budget_mb` MB in front."""
    fn = "make_cached_ssd_store_options"
    cache_budget_mb = _count(fn, "cache_budget_mb", cache_budget_mb)
    host_cache_budget_mb = _count(fn, "host_cache_budget_mb", host_cache_budget_mb)
    capacity = _count(fn, "capacity", capacity, allow_none=True)
    if not (cache_budget_mb > 0 or host_cache_budget_mb > 0):
        raise ValueError(f"{fn}: cache_budget_mb or host_cache_budget_mb must be positive")
    if capacity is not None and capacity <= 0:
        raise ValueError(f"{fn}: capacity must be positive, got {capacity}")
    caches = []
    if cache_budget_mb > 0:
        caches.append({"policy": "lru", "cache_memory_budget_mb": cache_budget_mb, "value_memory_kind": "device"})
    if host_cache_budget_mb > 0:
        caches.append({"policy": "lru", "cache_memory_budget_mb": host_cache_budget_mb, "value_memory_kind": "host"})
    return _store_options(caches, persistent_path, capacity or 0, size_factor, storage_dim, physical_block_size, fn)


def make_cached_host_mem_store_options(cache_budget_mb, persistent_path, capacity, size_factor=1,
                                       storage_dim=-1, physical_block_size=4096):
    """Store options of a table in host memory with a device cache of `cache_budget_mb` MB."""
    fn = "make_cached_host_mem_store_options"
    cache_budget_mb = _count(fn, "cache_budget_mb", cache_budget_mb)
    capacity = _count(fn, "capacity", capacity)
    if not cache_budget_mb > 0:
        raise ValueError(f"{fn}: cache_budget_mb must be positive, got {cache_budget_mb}")
    if capacity <= 0:
        raise ValueError(f"{fn}: capacity must be positive, got {capacity}")
    caches = [{"policy": "lru", "cache_memory_budget_mb": cache_budget_mb, "value_memory_kind": "device"},
              {"policy": "full", "capacity": int(capacity), "value_memory_kind": "host"}]
    return _store_options(caches, persistent_path, capacity, size_factor, storage_dim, physical_block_size, fn)


def check_store_options(fn, options):
    """(persistent path or list, capacity hint, size_factor, storage_dim, rows on disk, the
    table's memory budget in bytes: half for the key index, half for its pages in the page cache;
    0 keeps the index in memory) of valid store options."""
    if not isinstance(options, dict) or "kv_store" not in options:
        raise ValueError(f"{fn}: store_options must be made by make_device_mem_store_options, "
                         "make_cached_host_mem_store_options or make_cached_ssd_store_options "
                         "(a dict with 'kv_store')")
    kv = options["kv_store"]
    if not isinstance(kv, dict) or "persistent_table" not in kv:
        raise ValueError(f"{fn}: store_options['kv_store'] needs a 'persistent_table'")
    caches = kv.get("caches", [])
    if isinstance(caches, dict):
        caches = [caches]
    if not isinstance(caches, (list, tuple)) or len(caches) > 2:
        raise ValueError(f"{fn}: store_options['kv_store']['caches'] must be at most two caches")
    for c in caches:
        if not isinstance(c, dict):
            raise ValueError(f"{fn}: a cache must be a dict, got {type(c).__name__}")
        if c.get("policy") not in ("lru", "full"):
            raise ValueError(f"{fn}: unknown cache policy {c.get('policy')!r} (expected 'lru' or 'full')")
        if c.get("value_memory_kind") not in ("device", "host"):
            raise ValueError(f"{fn}: unknown store kind {c.get('value_memory_kind')!r} for a cache's "
                             "value_memory_kind (expected 'device' or 'host')")
        if not (c.get("cache_memory_budget_mb", 0) > 0 or c.get("capacity", 0) > 0):
            raise ValueError(f"{fn}: a cache needs a positive cache_memory_budget_mb or capacity")
    table = kv["persistent_table"]
    if not isinstance(table, dict) or not isinstance(table.get("path"), (str, list, tuple)):
        raise ValueError(f"{fn}: store_options['kv_store']['persistent_table'] needs a 'path'")
    size_factor = _count(fn, "store_options['size_factor']", options.get("size_factor", 1))
    storage_dim = _count(fn, "store_options['storage_dim']", options.get("storage_dim", -1))
    if size_factor < 1:
        raise ValueError(f"{fn}: store_options['size_factor'] must be positive, got {size_factor}")
    capacity = _count(fn, "the capacity hint", table.get("capacity_hint", 0) or 0)
    # the SSD store (no cache holds the whole table): rows and key index in files (Note
    # [Tables on disk])
    on_disk = not any(c.get("policy") == "full" for c in caches)
    # the SSD store's key index in files too, and the table's memory within the caches' budget:
    # half for the index (Note [Index on disk], src/embedding/disk_index.h), half for the pages
    # of its files in the page cache (Note [Row cache], src/embedding/store.h)
    budget = sum(int(c.get("cache_memory_budget_mb", 0)) for c in caches) << 20 if on_disk else 0
    return table["path"], capacity, size_factor, storage_dim, on_disk, budget
