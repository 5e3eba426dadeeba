"""oneflow.utils.vision (as OneFlow 0.7 shipped it): MNIST-format datasets and image
transforms (`oneflow.utils.vision.datasets`, `oneflow.utils.vision.transforms`)."""
from . import datasets, transforms  # noqa: F401
