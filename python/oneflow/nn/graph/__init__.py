"""oneflow.nn.Graph: static graphs traced from build() (graph.py)."""
from .config import GraphConfig  # noqa: F401
from .graph import Graph  # noqa: F401
from .block import GraphModule  # noqa: F401,E402  (OneFlow: block.to(GraphModule).set_stage(...))
from .block import GraphTensor, Proxy  # noqa: F401,E402  (OneFlow: proxy.to(GraphTensor).type)
