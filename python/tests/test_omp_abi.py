"""The OpenMP front door's generated files (version script, refusals) match their sources."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_generated_files_are_current():
    cp = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_omp_abi.py"), "--check"],
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr


def _gen():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_omp_abi", os.path.join(ROOT, "scripts", "gen_omp_abi.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _stubs(text):
    return [line for line in text.splitlines() if line.startswith("void ")]


def test_every_refusal_names_its_entry_point():
    """The refusals on disk are exactly the entry points of either ABI that no source defines, and an
    entry point left undefined gets a stub whose message names it."""
    gen = _gen()
    abi, kmp, defined = gen.read_abi(), gen.read_abi("libomp_abi.txt"), gen.defined_functions()
    with open(os.path.join(ROOT, "src", "omp", "unimplemented.cpp")) as f:
        on_disk = _stubs(f.read())
    names = {n for _, n in abi} | {n for _, n in kmp}
    assert sorted(line.split()[1].split("(")[0] for line in on_disk) == sorted(names - defined)
    # take implemented entry points of both ABIs away: each gets a refusal naming it
    gone = {"GOMP_target_ext", "omp_get_thread_num_", "__kmpc_fork_call", "__kmpc_omp_task", "kmp_set_stacksize"}
    assert gone <= defined
    _, cpp, _ = gen.render(abi, kmp, defined - gone)
    stubs = _stubs(cpp)
    refused = {line.split()[1].split("(")[0] for line in stubs}
    assert gone <= refused and refused - gone == names - defined
    for line in stubs:
        name = line.split()[1].split("(")[0]
        assert f'"{name}"' in line and "is not implemented" in line  # the message names the entry point


def test_libomp_names_live_at_its_version_node():
    """Every libomp entry point is exported at VERSION (the node a clang-built program asks
    libomp.so.5 for): the names libgomp lacks in the map's VERSION node, the omp_* / GOMP_* names
    both have through a jump (libomp_versions.cpp), except those a source defines there itself
    (libomp's 8-byte nestable lock), and the Fortran names refused there."""
    gen = _gen()
    abi, kmp, defined = gen.read_abi(), gen.read_abi("libomp_abi.txt"), gen.defined_functions()
    mapfile, _, ver = gen.render(abi, kmp, defined)
    node = mapfile[mapfile.index("VERSION {"):]
    gomp = {n for _, n in abi}
    own = gen.own_at_version()
    assert "omp_init_nest_lock" in own
    # the two forms, written once: a jump to the name's own version, a refusal naming it
    jump = ver[ver.index("#define PLAIT_KMP_JUMP(name)"):ver.index("#define PLAIT_KMP_REFUSE(name)")]
    refuse = ver[ver.index("#define PLAIT_KMP_REFUSE(name)"):]
    assert '": jmp " #name "@PLT' in jump and '" #name "@VERSION")' in jump
    assert "Fortran" in refuse and '" #name "@VERSION")' in refuse
    for _, name in kmp:
        if name not in gomp:
            assert f"    {name};" in node, name
        elif name in own:
            assert f"({name});" not in ver, name
        elif name.endswith("_"):
            assert f"\nPLAIT_KMP_REFUSE({name});\n" in ver, name
        else:
            assert f"\nPLAIT_KMP_JUMP({name});\n" in ver, name


def test_forwarding_macros_define_the_names_they_name(tmp_path, monkeypatch):
    """A one-line entry point written by a forwarding macro (FORTRAN_GETTER, KMPC_LOCK,
    KMPC_EACH_WIDTH, ...) counts as implemented under exactly the names the macro defines; a
    misspelt macro or name implements nothing of either ABI, and the entry point is refused."""
    gen = _gen()
    abi, kmp = gen.read_abi(), gen.read_abi("libomp_abi.txt")
    names = {n for _, n in abi} | {n for _, n in kmp}
    # the sources on disk: names written only through a macro are implemented
    macro_made = {"omp_get_level_", "omp_set_num_threads_8_", "omp_set_dynamic_8_", "omp_get_team_size_8_",
                  "__kmpc_set_lock", "__kmpc_test_nest_lock", "__kmpc_for_static_init_4u",
                  "__kmpc_dispatch_next_8u"}
    assert macro_made <= gen.defined_functions() <= names
    assert gen.names_defined_by("FORTRAN_SETTER(omp_set_num_threads)") == {"omp_set_num_threads_",
                                                                            "omp_set_num_threads_8_"}
    assert gen.names_defined_by("KMPC_EACH_WIDTH(KMPC_DIST_DISPATCH_INIT)") == {
        f"__kmpc_dist_dispatch_init_{w}" for w in ("4", "4u", "8", "8u")}
    # a misspelt name is defined under that name, which neither ABI has (--check fails on it)
    assert gen.names_defined_by("FORTRAN_GETTER(omp_get_levle)") == {"omp_get_levle_"}
    assert not gen.names_defined_by("KMPC_EACH_WIDTH(KMPC_DISPATCH_NXT)") & names
    # one source: what it defines is implemented, the misspelt macro's name refused
    (tmp_path / "fwd.cpp").write_text("FORTRAN_GETTER(omp_get_level)\nFORTRAN_GETER(omp_get_max_threads)\n"
                                      "KMPC_NEST_LOCK(set_nest_lock)\nKMPC_LOK(set_lock)\n")
    monkeypatch.setattr(gen, "OMP", str(tmp_path))
    defined = gen.defined_functions()
    assert defined == {"omp_get_level_", "__kmpc_set_nest_lock"}
    _, cpp, _ = gen.render(abi, kmp, defined)
    refused = {line.split()[1].split("(")[0] for line in _stubs(cpp)}
    assert {"omp_get_max_threads_", "__kmpc_set_lock"} <= refused
    assert not {"omp_get_level_", "__kmpc_set_nest_lock"} & refused
