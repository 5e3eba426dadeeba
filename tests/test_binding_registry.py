"""Note [Binding registry] (src/api/bind_registry.h): flow._C is assembled from binding files that
register themselves. module.cpp binds the types and the Tensor class with the op entries; every
other binding file (src/api/*_bind.cpp, and the CUDA-only src/cuda/*_bind.cpp) registers its Bind
function with OF_BIND, and no list names them."""
import pathlib
import re

import oneflow as flow

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
# Bound by module.cpp itself, in a fixed order (hand-written overloads before the generated ones).
MODULE_BINDINGS = {"BindTensorClass", "BindGeneratedOps", "BindManualOps"}


def _registrations(folder):
    """{function: (rank, file)} of every OF_BIND in the folder's *_bind.cpp files."""
    found = {}
    for f in sorted((SRC / folder).glob("*_bind.cpp")):
        text = f.read_text(encoding="utf-8")
        for rank, fn in re.findall(r"^OF_BIND\((\d+), (\w+)\);", text, re.M):
            assert re.search(rf"^void {fn}\(", text, re.M), f"{f.name}: OF_BIND names {fn}, not defined there"
            assert fn not in found, f"{fn} registered twice"
            found[fn] = (int(rank), f.name)
    return found


def test_every_binding_file_registers_itself():
    for folder in ("api", "cuda"):
        for f in sorted((SRC / folder).glob("*_bind.cpp")):
            text = f.read_text(encoding="utf-8")
            binds = set(re.findall(r"^void (Bind\w+)\(", text, re.M)) - MODULE_BINDINGS
            registered = set(re.findall(r"^OF_BIND\(\d+, (\w+)\);", text, re.M))
            # a file's helpers (BindStores, BindGloo) are called by its registered function
            assert registered or not binds, f"{folder}/{f.name} defines {sorted(binds)} but registers none"


def test_no_binding_is_declared_for_the_module_init():
    # the module init calls no Bind function of another file beyond MODULE_BINDINGS: nothing to declare
    for h in ("convert.h", "global.h"):
        declared = set(re.findall(r"^void (Bind\w+)\(", (SRC / "api" / h).read_text(encoding="utf-8"), re.M))
        assert declared <= MODULE_BINDINGS, (h, declared - MODULE_BINDINGS)
    module = (SRC / "api" / "module.cpp").read_text(encoding="utf-8")
    called = set(re.findall(r"^  (Bind\w+)\(", module, re.M))
    assert called <= MODULE_BINDINGS | {"BindDTypes", "BindDevice"}, called


def test_the_module_ran_every_registered_binding_in_rank_order():
    regs = _registrations("api")
    cuda = flow._C._cuda_version if hasattr(flow._C, "_cuda_version") else None
    if cuda is not None:  # a CUDA build compiles src/cuda's binding files into the module too
        regs.update(_registrations("cuda"))
    expected = [fn for fn, _ in sorted(regs.items(), key=lambda kv: (kv[1][0], kv[0]))]
    assert list(flow._C._bindings()) == expected
    assert len(expected) >= 14


def test_cuda_bindings_are_only_in_src_cuda():
    # the CUDA-only bindings live in src/cuda (compiled only with CUDA): no #ifdef in src/api
    for f in sorted((SRC / "api").glob("*.cpp")):
        assert "ONEFLOW_WITH_CUDA" not in f.read_text(encoding="utf-8"), f.name
    assert set(_registrations("cuda")) == {"BindCuda", "BindNccl"}
    # a CPU build binds none of them, and Python reads their absence
    if not hasattr(flow._C, "_cuda_version"):
        assert not hasattr(flow._C, "_NcclGroup") and not flow.distributed.is_nccl_available()
