"""The code generator's features used by the random and autocast work, on a synthetic table:
`Generator?` parameters, in-place-only ops (names ending in `_`), the `autocast:` field, and
`TensorLike?` parameters / defaults. The generated text is checked (it is compiled for real in
the build, from src/ops/table)."""

import os
import subprocess
import sys
import textwrap

import pytest

import optable_path  # noqa: F401  (tools/ on sys.path)
import gen_ops  # noqa: E402
import optable  # noqa: E402

TABLE = textwrap.dedent("""
    ops:
    - name: fill_thing_
      sig: fill_thing_(Tensor input, float a=0, *, Generator? generator=None) -> Tensor
      flow: false
      backward: ZerosFor(grad)
    - name: draw
      sig: draw(Tensor input, TensorLike? p=None, TensorLike scale=1.0, *,
        Generator? generator=None) -> Tensor
      inplace: true
      backward:
        input: ZerosFor(grad)
    - name: mix
      sig: mix(Tensor input, Tensor other) -> Tensor
      autocast: lower
      backward:
        input: grad
        other: grad
    - name: pick
      sig: pick(Tensor[] tensors) -> Tensor
      autocast: promote
      backward: none
""")


@pytest.fixture()
def generated(tmp_path):
    table = tmp_path / "table"
    table.mkdir()
    (table / "fam.yaml").write_text(TABLE)
    ops = [gen_ops.Op(e) for e in optable.load(str(table))]
    files = gen_ops.outputs(ops, optable.families(str(table)), str(tmp_path))
    return {name: make() for name, make in files.items()}


def test_inplace_only_op(generated):
    decl = generated["decl/fill_thing_.h"]
    assert "Tensor& FillThing_(Tensor& input, double a, const GeneratorPtr& generator);" in decl
    assert "FillThing(" not in decl  # no out-of-place form
    bind = generated["bind_fam.cpp"]
    assert 'cls.def("fill_thing_"' in bind and 'm.def("fill_thing_"' in bind
    assert "ToTensorMut(input)" in bind and "ToGenerator(generator)" in bind
    fn = generated["functional_fam.cpp"]
    # recorded as an in-place op: leaf check, history rebased onto the node
    assert 'CheckInplace(input, "fill_thing_")' in fn and "RebaseHistory(input" in fn
    boxed = generated["boxed_fam.cpp"]
    assert "Tensor self = TensorValue(a[0]);" in boxed and "ValueAs<GeneratorPtr>(a[2])" in boxed


def test_optional_tensorlike_and_generator(generated):
    decl = generated["decl/draw.h"]
    assert (
        "Tensor Draw(const Tensor& input, std::optional<Tensor> p, const Tensor& scale, "
        "const GeneratorPtr& generator);"
    ) in decl
    assert "Tensor& Draw_(" in decl
    fn = generated["functional_fam.cpp"]
    assert "!(p && result_.is_same(*p))" in fn
    boxed = generated["boxed_fam.cpp"]
    assert '"scale", "TensorLike", false, false, false, true, Value(double(1.0))' in boxed


def test_autocast_blocks(generated):
    fn = generated["functional_fam.cpp"]
    assert "autocast::TargetOf(autocast::Policy::kLower, input, other)" in fn
    assert "return functional::Mix(autocast::Cast(input, *dt), autocast::Cast(other, *dt));" in fn
    # a non-differentiable op with autocast gets its own entry instead of a using-declaration
    assert "autocast::Policy::kPromote, tensors" in fn
    # (while a graph traces, the op is recorded below the entry's autograd: Note [Backward nodes])
    assert ('return (lazy::Active() ? lazy::RecordEntry<Tensor>("pick", {lazy::V(tensors)}) : '
            'OF_KERNEL_CALL("pick", ::oneflow::Pick(OF_H(tensors))));') in fn
    decl = generated["decl/pick.h"]
    assert (
        "using ::oneflow::Pick;" not in decl
        and "Tensor Pick(const std::vector<Tensor>& tensors);" in decl
    )


def test_kernel_calls_go_through_the_host_fallback(generated):
    """Note [Host fallback] (src/ops/host_fallback.h): every functional entry calls its kernel
    entry through OF_KERNEL_CALL with the tensor (and device) arguments wrapped in OF_H; a
    non-differentiable op has such an entry only in CUDA builds (CPU builds re-export the kernel
    entry, one hop less)."""
    fn = generated["functional_fam.cpp"]
    assert '#include "ops/host_fallback.h"' in fn
    assert ('OF_KERNEL_CALL("draw", ::oneflow::Draw(OF_H(input), OF_H(p), OF_H(scale), generator))'
            in fn)
    assert 'OF_KERNEL_CALL_INPLACE("draw_", input, ::oneflow::Draw_(OF_H(input), OF_H(p), OF_H(scale), ' \
           'generator))' in fn
    assert 'OF_KERNEL_CALL_INPLACE("fill_thing_", input, ::oneflow::FillThing_(OF_H(input), a, generator))' in fn
    assert "::oneflow::Mix(input, other)" not in fn


def test_non_differentiable_ops_get_entries_of_their_own(tmp_path):
    """Every build declares a non-differentiable op's functional entries (not the kernel entry
    re-exported): they hold the host fallback of CUDA builds and the lazy test that records the op
    while a graph traces, which backward formulas calling such ops need (Note [Backward nodes])."""
    table = tmp_path / "table"
    table.mkdir()
    (table / "fam.yaml").write_text(textwrap.dedent("""
        ops:
        - name: count
          sig: count(Tensor input, *, Device? device=None) -> Tensor
          inplace: true
          backward: none
    """))
    ops = [gen_ops.Op(e) for e in optable.load(str(table))]
    files = {n: make() for n, make in gen_ops.outputs(ops, optable.families(str(table)), str(tmp_path)).items()}
    decl = files["decl/count.h"]
    assert "#ifdef ONEFLOW_WITH_CUDA" not in decl and "using ::oneflow::Count" not in decl
    assert decl.count("Tensor Count(const Tensor& input, std::optional<Device> device);") == 2  # kernel, functional
    fn = files["functional_fam.cpp"]
    assert "#ifdef ONEFLOW_WITH_CUDA" not in fn
    assert ('return (lazy::Active() ? lazy::RecordEntry<Tensor>("count", {lazy::V(input), lazy::V(device)}) : '
            'OF_KERNEL_CALL("count", ::oneflow::Count(OF_H(input), OF_H(device))));') in fn
    assert ('return (lazy::Active() ? lazy::RecordEntryInplace(input, "count_", {lazy::V(input), lazy::V(device)}) : '
            'OF_KERNEL_CALL_INPLACE("count_", input, ::oneflow::Count_(OF_H(input), OF_H(device))));') in fn


def test_each_file_includes_the_decls_of_the_ops_it_calls(generated):
    """Per-op headers (tools/op_decls.py): a generated file includes exactly the ops it calls, so a
    new op recompiles nothing that does not call it."""
    assert '#include "decl/mix.h"' in generated["functional_fam.cpp"]
    assert '#include "decl/draw.h"' in generated["bind_fam.cpp"]
    assert "decl/" not in generated["ops_bind.cpp"]  # calls the families' bindings only
    assert "BindOps_fam(m, cls);" in generated["ops_bind.cpp"]
    for name in ("fill_thing_", "draw", "mix", "pick"):
        assert '#include "decl/' + name + '.h"' in generated["boxed_fam.cpp"]


def test_empty_pointwise_buckets_are_listed_for_cmake(tmp_path):
    """CMake compiles the buckets no op hashes to without the precompiled header (loading it costs
    more than compiling an empty file; docs/build.md): --list-empty names exactly those."""
    table = tmp_path / "table"
    table.mkdir()
    (table / "fam.yaml").write_text(textwrap.dedent("""
        ops:
        - name: twice
          sig: twice(Tensor input) -> Tensor
          kind: unary
          result: same
          dtypes: all
          backward: grad
        - name: pick
          sig: pick(Tensor[] tensors) -> Tensor
          backward: none
    """))
    tool = os.path.join(os.path.dirname(gen_ops.__file__), "gen_ops.py")
    out = subprocess.run([sys.executable, tool, str(table), "--list-empty"], capture_output=True, text=True,
                         check=True).stdout.strip().split(";")
    full = f"pointwise_fam_{gen_ops.bucket('twice')}.cpp"
    assert full not in out
    assert sorted(out + [full]) == [f"pointwise_fam_{k}.cpp" for k in range(gen_ops.POINTWISE_BUCKETS)]


def test_bad_autocast_value_is_rejected(tmp_path):
    (tmp_path / "bad.yaml").write_text(
        "ops:\n- name: x\n  sig: x(Tensor input) -> Tensor\n  autocast: fp16\n  backward: none\n"
    )
    with pytest.raises(AssertionError, match="autocast"):
        optable.load(str(tmp_path))


def test_inplace_only_ops_take_no_inplace_field(tmp_path):
    (tmp_path / "bad.yaml").write_text(
        "ops:\n- name: y_\n  sig: y_(Tensor input) -> Tensor\n  inplace: true\n  backward: none\n"
    )
    with pytest.raises(AssertionError, match="in-place-only"):
        [gen_ops.Op(e) for e in optable.load(str(tmp_path))]


def test_real_table_random_ops_are_inplace_only():
    names = {e["name"] for e in optable.load()}
    for n in [
        "uniform_",
        "normal_",
        "exponential_",
        "geometric_",
        "log_normal_",
        "cauchy_",
        "random_",
    ]:
        assert n in names
    assert os.path.basename(optable.table_dir()) == "table"


def test_hand_written_op_includes_are_up_to_date():
    """Every hand-written source includes the decl headers of the ops it mentions
    (tools/fix_op_includes.py keeps the lists; a stale list is a missing or a needless rebuild)."""
    import fix_op_includes

    assert fix_op_includes.main(["--check"]) == 0


def test_coverage_report_is_up_to_date():
    """docs/ops.md is generated from the table (tools/gen_coverage.py); a new op regenerates it."""
    import subprocess
    import sys

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    d = os.path.abspath(root)  # the report lists the spec's INVENTORY.md (../shared/spec), which a
    while not os.path.exists(os.path.join(d, "shared", "spec", "INVENTORY.md")):  # bare copy
        if os.path.dirname(d) == d:  # of the checkout (the lent GPU machine's) lacks
            pytest.skip("shared/spec/INVENTORY.md is not beside this checkout")
        d = os.path.dirname(d)
    r = subprocess.run([sys.executable, os.path.join(root, "tools", "gen_coverage.py"), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
