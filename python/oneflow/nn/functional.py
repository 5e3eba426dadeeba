"""oneflow.nn.functional: filled from the op table (entries with `functional: true`)."""
