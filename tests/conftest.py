"""pytest configuration shared by the suite.

``OF_TEST_SHIM=torch`` runs the flow tests against a torch stand-in (see
harness.py); tests marked ``oneflow_only`` check OneFlow-specific behaviour
that the stand-in cannot have, so they are skipped in that mode only.
"""

import os

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "oneflow_only: checks behaviour where OneFlow differs from PyTorch"
    )


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("OF_TEST_SHIM"):
        return
    skip = pytest.mark.skip(reason="OneFlow-specific behaviour; not testable with the torch shim")
    for item in items:
        if item.get_closest_marker("oneflow_only"):
            item.add_marker(skip)
