"""oneflow.compatible: the legacy API under its OneFlow 0.x import path."""
