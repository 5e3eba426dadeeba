"""Generator features (tools/gen_ops.py, gen_autograd.py) checked on a small table of their own:
`backward: composite`, `kwarg_aliases`, and list defaults inside signatures."""

import textwrap

import pytest

import optable_path  # noqa: F401  (tools/ on sys.path)
import gen_autograd
import gen_ops
import op_decls
import optable


def _ops(tmp_path, text):
    d = tmp_path / "table"
    d.mkdir()
    (d / "fam.yaml").write_text(textwrap.dedent(text))
    return [gen_ops.Op(e) for e in optable.load(str(d))]


def test_composite_backward_gets_a_declaration_and_no_node(tmp_path):
    ops = _ops(tmp_path, """
        ops:
        - name: twice
          sig: twice(Tensor input) -> Tensor
          backward: composite
    """)
    decl = "\n".join(gen_autograd.functional_decl_lines(ops[0]))
    assert "Tensor Twice(const Tensor& input);" in decl  # the hand-written differentiable entry
    names = op_decls.declared(ops)
    body = gen_autograd.gen_functional(ops, "fam", names)
    assert "TwiceBackward0" not in body and "Tensor Twice(" not in body
    assert "functional::Twice(" in gen_ops.gen_bind(ops, "fam", names)


def test_kwarg_aliases_rename_before_the_keyword_check(tmp_path):
    ops = _ops(tmp_path, """
        ops:
        - name: tile2
          sig: tile2(Tensor input, int[]... dims) -> Tensor
          kwarg_aliases: {reps: dims}
          backward: none
    """)
    bind = gen_ops.gen_bind(ops, "fam", op_decls.declared(ops))
    line = next(ln for ln in bind.splitlines() if 'm.def("tile2"' in ln)
    assert line.index('"reps"') < line.index("CheckKwargs")
    assert 'PyDict_SetItemString(kwargs.ptr(), "dims"' in line


def test_kwarg_aliases_need_a_varargs_parameter(tmp_path):
    with pytest.raises(AssertionError, match="kwarg_aliases"):
        _ops(tmp_path, """
            ops:
            - name: f
              sig: f(Tensor input, int dim) -> Tensor
              kwarg_aliases: {axis: dim}
              backward: none
        """)


def test_list_defaults_in_signatures(tmp_path):
    ops = _ops(tmp_path, """
        ops:
        - name: rot
          sig: rot(Tensor input, int k=1, int[] dims=[0, 1]) -> Tensor
          backward: none
    """)
    (op,) = ops
    assert [p.name for p in op.params] == ["input", "k", "dims"]
    assert op.params[2].default == "[0, 1]"
    assert op.params[2].py_default() == "nb::cast(std::vector<int64_t>{0, 1})"
    assert gen_ops.split_params("Tensor a, int[] b=[1, 2], float c=0.5") == ["Tensor a", " int[] b=[1, 2]",
                                                                              " float c=0.5"]
