"""oneflow.special: filled from the op table (entries whose `also:` names `special.X`)."""
