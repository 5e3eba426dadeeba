"""oneflow.nn.Graph: static graphs traced from build() (graph.py)."""
from .graph import Graph, GraphConfig  # noqa: F401
from .block import GraphModule  # noqa: F401,E402  (OneFlow: block.to(GraphModule).set_stage(...))
