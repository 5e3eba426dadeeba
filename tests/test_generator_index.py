"""The generator features the selection / scatter ops added (tools/gen_ops.py, gen_autograd.py):

* ``TensorLike?`` parameters: a tensor, a Python number or None (scatter's ``src``), passed to
  C++ as ``const Tensor&`` (undefined = None) through ``OptTensorLike``;
* a non-differentiable ``Tensor[]`` parameter read by a formula (index_put's ``indices``) is
  saved in the node as version-checked saved variables.
"""

import optable_path  # noqa: F401  (tools/ on sys.path)
import gen_autograd
import gen_ops


def _op(sig, backward, **extra):
    e = {"name": sig.split("(")[0], "sig": sig, "backward": backward, "family": "test", "kind": "custom"}
    e.update(extra)
    return gen_ops.Op(e)


def test_optional_tensorlike_parameter():
    op = _op("scat(Tensor input, TensorLike? src=None) -> Tensor", {"input": "grad"})
    src = op.params[1]
    assert src.cpp_type() == "const Tensor&"
    assert src.convert("h") == "OptTensorLike(h)"
    assert op.decl() == ["Tensor Scat(const Tensor& input, const Tensor& src);"]
    lam, annots = gen_ops.binding_lambda(op)
    assert "OptTensorLike(src)" in lam and '"src"_a = nb::none()' in annots


def test_optional_tensor_parameter_unchanged():
    op = _op("f(Tensor input, Tensor? w=None) -> Tensor", "none")
    assert op.params[1].cpp_type() == "const Tensor&" and op.params[1].convert("h") == "OptTensor(h)"


def test_saved_tensor_list_of_a_formula():
    op = _op("put(Tensor input, Tensor[] indices, Tensor values) -> Tensor",
             {"input": "F(grad, indices)", "values": "G(grad, indices)"})
    f = gen_autograd.Formulas(op)
    decls = [m[0] for m in gen_autograd.saved_members(f)]
    assert "std::vector<SavedVariable> indices_;" in decls
    node, _, _ = gen_autograd.gen_node(f, [op])
    text = "\n".join(node)
    assert "for (const SavedVariable& s : indices_) indices.push_back(s.Unpack(this));" in text
    assert "for (SavedVariable& s : indices_) s.Reset();" in text
