"""oneflow.one_embedding: OneFlow's large-scale embedding tables for recommender models
(docs/one_embedding.md). Rows live in a C++ key -> row store (src/embedding/store.h), are created
on first lookup from their table's initializer, and are trained by fused sparse updates driven by
the optimizer over the embedding's parameters (Note [Embedding gradients], _embedding.py)."""
from ._embedding import Embedding, MultiTableEmbedding, MultiTableMultiColumnEmbedding
from ._optim import Ftrl, SmartDecayAdam
from ._options import (
    make_cached_host_mem_store_options,
    make_cached_ssd_store_options,
    make_column_options,
    make_constant_initializer,
    make_device_mem_store_options,
    make_normal_initializer,
    make_table,
    make_table_options,
    make_trunc_normal_initializer,
    make_uniform_initializer,
)
from ._persistent import make_persistent_table_reader, make_persistent_table_writer
from ._wrapper import Optimizer

__all__ = [
    "Embedding", "MultiTableEmbedding", "MultiTableMultiColumnEmbedding", "Ftrl", "Optimizer",
    "SmartDecayAdam", "make_cached_host_mem_store_options", "make_cached_ssd_store_options",
    "make_column_options", "make_constant_initializer", "make_device_mem_store_options",
    "make_normal_initializer", "make_table", "make_table_options", "make_trunc_normal_initializer",
    "make_uniform_initializer", "make_persistent_table_reader", "make_persistent_table_writer",
]
