"""oneflow.compatible.single_client.typing: the same annotations as oneflow.typing."""
from oneflow.typing import Callback, ListListNumpy, ListNumpy, Numpy  # noqa: F401
