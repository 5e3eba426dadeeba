"""oneflow.linalg: filled from the op table (entries whose `also:` names `linalg.X`)."""
