"""A short tour: tensors, ops, broadcasting, reductions, indexing, matmul and numpy interop."""
import numpy as np

import oneflow as flow

flow.manual_seed(0)
x = flow.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print("x =", x)
print("x.shape =", x.shape, " x.dtype =", x.dtype, " x.device =", x.device)
print("x * 2 + 1 =", x * 2 + 1)
print("x + [10, 20, 30] (broadcast) =", x + flow.tensor([10.0, 20.0, 30.0]))
print("exp(x) =", flow.exp(x))
print("x.sum() =", x.sum(), " x.mean(dim=0) =", x.mean(dim=0))
print("max over dim 1 (values, indices) =", flow.max(x, dim=1))
print("x[:, 1:] =", x[:, 1:], " x[x > 2] =", x[x > 2])
w = flow.randn(3, 4)
print("x @ w has shape", (x @ w).shape)
a = np.arange(6, dtype=np.float32).reshape(2, 3)
t = flow.from_numpy(a)
t[0, 0] = 42.0
print("from_numpy shares memory:", a[0, 0] == 42.0)
print("flow.Tensor(2, 3) =", flow.Tensor(2, 3))

# Autograd: gradients of a tiny linear model, and a second derivative.
w = flow.randn(3, 1, requires_grad=True)
b = flow.zeros(1, requires_grad=True)
loss = ((x @ w + b) ** 2).mean()
loss.backward()
print("loss =", loss, " w.grad shape =", w.grad.shape, " b.grad =", b.grad)
s = flow.tensor(2.0, requires_grad=True)
(ds,) = flow.autograd.grad(s ** 3, s, create_graph=True)
(dds,) = flow.autograd.grad(ds, s)
print("d/ds s^3 at 2 =", ds.item(), " second derivative =", dds.item())
