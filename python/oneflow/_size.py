class Size(tuple):
    """oneflow.Size: the shape of a tensor, a tuple of ints."""

    def __new__(cls, sizes=()):
        return super().__new__(cls, (int(s) for s in sizes))

    def __repr__(self):
        return f"oneflow.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, k):
        r = super().__getitem__(k)
        return Size(r) if isinstance(k, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))
