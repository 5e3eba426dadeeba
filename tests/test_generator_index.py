"""The generator features the selection / scatter ops added (tools/gen_ops.py, gen_autograd.py):

* differentiable ``TensorLike?`` parameters (a tensor, a Python number or None: scatter's
  ``src``), which C++ receives as ``std::optional<Tensor>``;
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


def test_differentiable_optional_tensorlike_parameter():
    # std::optional<Tensor> in C++ (tests/test_codegen.py); a formula for it (scatter's src)
    # records an edge and saves it through the optional, None being the undefined tensor.
    op = _op("scat(Tensor input, TensorLike? src=None) -> Tensor", {"input": "grad", "src": "F(grad, src)"})
    assert op.decl() == ["Tensor Scat(const Tensor& input, std::optional<Tensor> src);"]
    f = gen_autograd.Formulas(op)
    node, members, outs = gen_autograd.gen_node(f, [op])
    entry = "\n".join(gen_autograd.gen_entry(f, members, outs, False))
    assert "RequiresGrad((src ? *src : Tensor()))" in entry
    assert "GradEdge((src ? *src : Tensor()))" in entry
    assert "SavedVariable((src ? *src : Tensor()), false)" in entry


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
