"""oneflow.unittest: what OneFlow-ecosystem test files import (`@flow.unittest.skip_unless_1n1d()`,
`flow.unittest.TestCase`, `flow.unittest.env.eager_execution_enabled()`); defined in
oneflow/framework/unittest.py, upstream's place for them."""
from ..framework.unittest import (  # noqa: F401
    TestCase, num_nodes_required, register_test_cases, skip_unless_1n1d, skip_unless_1n2d,
    skip_unless_1n4d, skip_unless_2n1d, skip_unless_2n2d, skip_unless_2n4d,
)
from . import env  # noqa: F401
from .dataset import dataset_dir  # noqa: F401
