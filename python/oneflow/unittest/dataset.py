"""Where OneFlow-ecosystem tests find their data sets (upstream's `oneflow.unittest.dataset_dir`):
$ONEFLOW_TEST_DATASET_DIR, or /dataset as in upstream's CI; tests skip themselves when a data set
is not there."""
import os


def dataset_dir(sub_dir=None):
    base = os.getenv("ONEFLOW_TEST_DATASET_DIR") or "/dataset"
    return base if sub_dir is None else os.path.join(base, sub_dir)
