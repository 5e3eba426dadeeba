"""oneflow.framework.unittest (re-exported as oneflow.unittest): the decorators, TestCase and
environment queries OneFlow-ecosystem test files use, with upstream's behaviour: a test marked
`skip_unless_<n>n<d>d` runs only where the job has n nodes and d devices per node, read from
OneFlow's test variables (ONEFLOW_TEST_NODE_NUM / ONEFLOW_TEST_NODE_LIST, ONEFLOW_TEST_DEVICE_NUM).
One difference: without ONEFLOW_TEST_DEVICE_NUM, the devices of a node are the processes the
launcher started on it (LOCAL_WORLD_SIZE), since here each process drives one device; a script
run alone is 1 node x 1 device, as upstream's default."""
import os
import unittest

TestCase = unittest.TestCase


def eager_execution_enabled():
    return os.getenv("ONEFLOW_TEST_ENABLE_EAGER") == "1"


def typing_check_enabled():
    return os.getenv("ONEFLOW_TEST_ENABLE_TYPING_CHECK") == "1"


def has_node_list():
    return bool(os.getenv("ONEFLOW_TEST_NODE_LIST"))


def node_list():
    value = os.getenv("ONEFLOW_TEST_NODE_LIST")
    if not value:
        raise RuntimeError("oneflow.unittest.env.node_list: ONEFLOW_TEST_NODE_LIST is not set")
    return value.split(",")


def node_size():
    if os.getenv("ONEFLOW_TEST_NODE_NUM"):
        return int(os.environ["ONEFLOW_TEST_NODE_NUM"])
    if has_node_list():
        return len(node_list())
    return 1


def has_world_size():
    return True


def world_size():
    from .. import env

    return env.get_world_size()


def device_num():
    if os.getenv("ONEFLOW_TEST_DEVICE_NUM"):
        return int(os.environ["ONEFLOW_TEST_DEVICE_NUM"])
    return int(os.getenv("LOCAL_WORLD_SIZE", "1"))


def num_nodes_required(num_nodes):
    """Marks a test function with the number of nodes it needs (read by register_test_cases)."""
    def decorator(f):
        f.__oneflow_test_case_num_nodes_required__ = num_nodes
        return f
    return decorator


def _num_nodes_of(func):
    return getattr(func, "__oneflow_test_case_num_nodes_required__", 1)


def register_test_cases(scope, directory, filter_by_num_nodes, base_class=unittest.TestCase):
    """Adds to `scope` one TestCase class per test*.py file of `directory`, holding its test*
    functions whose required node count passes `filter_by_num_nodes`."""
    import importlib.util

    for fname in sorted(os.listdir(directory)):
        path = os.path.join(directory, fname)
        if not (os.path.isfile(path) and fname.startswith("test") and fname.endswith(".py")):
            continue
        spec = importlib.util.spec_from_file_location(fname[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        methods = {n: getattr(module, n) for n in dir(module)
                   if n.startswith("test") and callable(getattr(module, n))
                   and filter_by_num_nodes(_num_nodes_of(getattr(module, n)))}
        scope[fname[:-3]] = type(fname[:-3], (base_class,), methods)


def skip_unless(n, d):
    if node_size() == n and device_num() == d:
        return lambda func: func
    return unittest.skip(f"only runs when node_size is {n} and device_num is {d}")


def skip_unless_1n1d():
    return skip_unless(1, 1)


def skip_unless_1n2d():
    return skip_unless(1, 2)


def skip_unless_1n4d():
    return skip_unless(1, 4)


def skip_unless_2n1d():
    return skip_unless(2, 1)


def skip_unless_2n2d():
    return skip_unless(2, 2)


def skip_unless_2n4d():
    return skip_unless(2, 4)
