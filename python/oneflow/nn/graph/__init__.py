"""oneflow.nn.Graph: static graphs traced from build() (graph.py)."""
from .graph import Graph, GraphConfig  # noqa: F401
