"""The generator's joint formulas (`input, weight, bias: F(...)`, used by the normalisation ops):
one call of F for several inputs, its results picked per input, `grad_input_mask` available,
on a synthetic table. The real ops (batch_norm, layer_norm, group_norm) compile and run them;
tests/test_ops_grad.py checks their gradients."""

import textwrap

import pytest

import optable_path  # noqa: F401  (tools/ on sys.path)
import gen_ops  # noqa: E402
import optable  # noqa: E402

TABLE = textwrap.dedent("""
    ops:
    - name: norm_like
      sig: norm_like(Tensor input, Tensor? weight=None, Tensor? bias=None, float eps=1e-5) -> (Tensor out, Tensor stat)
      flow: false
      backward:
        input, weight, bias: JointThing(grad, input, weight, stat, eps, grad_input_mask)
    - name: mixed
      sig: mixed(Tensor a, Tensor b, Tensor c) -> Tensor
      backward:
        a: grad
        b, c: PairThing(grad, b, c)
    - name: clashy
      sig: clashy(Tensor v, Tensor r, Tensor k, Tensor node, Tensor outs, Tensor o) -> Tensor
      backward:
        v, r: PairThing(grad, v, r, k, node, outs, o)
""")


@pytest.fixture()
def functional(tmp_path):
    table = tmp_path / "table"
    table.mkdir()
    (table / "fam.yaml").write_text(TABLE)
    ops = [gen_ops.Op(e) for e in optable.load(str(table))]
    files = gen_ops.outputs(ops, optable.families(str(table)), str(tmp_path))
    return files["functional_fam.cpp"]()


def _node(text, name):
    start = text.index(f"struct {name} final")
    return text[start:text.index("\n};", start)]


def test_joint_formula_runs_once_for_all_inputs(functional):
    node = _node(functional, "NormLikeBackward0")
    assert node.count("JointThing(") == 1
    assert "if (needs(0) || needs(1) || needs(2)) {" in node
    assert "const std::array<bool, 3> grad_input_mask{needs(0), needs(1), needs(2)};" in node
    for k in range(3):
        assert f"if (needs({k})) in_grads_[{k}] = JointGrad<{k}>(joint_);" in node
    # what the formula reads is saved once (the named output `stat` and the attribute `eps`)
    assert node.count("SavedVariable input_;") == 1 and "SavedVariable stat_;" in node
    assert "double eps_;" in node


def test_joint_and_single_formulas_mix(functional):
    node = _node(functional, "MixedBackward0")
    assert "if (needs(0)) {" in node and "in_grads_[0] = grad;" in node
    assert node.count("PairThing(") == 1
    assert "in_grads_[1] = JointGrad<0>(joint_);" in node and "in_grads_[2] = JointGrad<1>(joint_);" in node
    # every joint input is an edge of the node, in signature order
    entry = functional[functional.index("Tensor Mixed("):]
    assert entry.index("GradEdge(a)") < entry.index("GradEdge(b)") < entry.index("GradEdge(c)")


def test_parameters_named_like_the_old_generated_locals(functional):
    # The generated locals end in `_` (in_grads_, joint_, node_, outs_...), parameters never do:
    # parameters named v, r, k, node, outs, o are unpacked and passed as themselves
    # (native_fused_glu's `v` compiles and runs in tests/test_fused_ops.py).
    node = _node(functional, "ClashyBackward0")
    assert "Tensor v = v_.Unpack(this); Tensor r = r_.Unpack(this); Tensor k = k_.Unpack(this);" in node
    assert "auto joint_ = PairThing(grad, v, r, k, node, outs, o);" in node
    assert "in_grads_[0] = JointGrad<0>(joint_);" in node and "in_grads_[1] = JointGrad<1>(joint_);" in node
    entry = functional[functional.index("Tensor Clashy("):]
    entry = entry[:entry.index("\n}")]
    assert "IntrusivePtr<ClashyBackward0> node_(new ClashyBackward0());" in entry
    assert "node_->node_ = SavedVariable(node, false);" in entry and "node_->outs_ = SavedVariable(outs, false);" in entry
    assert "Tensor result_ = " in entry and "return result_;" in entry


@pytest.mark.parametrize("name", ["grad", "grads", "grad_input_mask", "needs", "in_grads", "joint"])
def test_parameter_named_like_a_backward_node_name_is_an_error(tmp_path, name):
    table = tmp_path / "table"
    table.mkdir()
    (table / "fam.yaml").write_text(textwrap.dedent(f"""
        ops:
        - name: bad
          sig: bad(Tensor input, Tensor {name}) -> Tensor
          backward:
            input: grad
    """))
    ops = [gen_ops.Op(e) for e in optable.load(str(table))]
    with pytest.raises(AssertionError, match="reserved in backward nodes"):
        gen_ops.outputs(ops, optable.families(str(table)), str(tmp_path))["functional_fam.cpp"]()


def test_unknown_input_in_a_joint_key_is_an_error(tmp_path):
    table = tmp_path / "table"
    table.mkdir()
    (table / "fam.yaml").write_text(textwrap.dedent("""
        ops:
        - name: bad
          sig: bad(Tensor input) -> Tensor
          backward:
            input, nope: F(grad)
    """))
    ops = [gen_ops.Op(e) for e in optable.load(str(table))]
    with pytest.raises(AssertionError, match="unknown input nope"):
        gen_ops.outputs(ops, optable.families(str(table)), str(tmp_path))["functional_fam.cpp"]()
