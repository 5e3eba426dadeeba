"""oneflow.unittest.env: the test job's shape (oneflow/framework/unittest.py)."""
from ..framework.unittest import (  # noqa: F401
    device_num, eager_execution_enabled, has_node_list, has_world_size, node_list, node_size,
    typing_check_enabled, world_size,
)
