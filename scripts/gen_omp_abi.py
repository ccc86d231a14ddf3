#!/usr/bin/env python3
"""Generates the OpenMP front door's symbol map and its refusals of what it does not implement.

    scripts/gen_omp_abi.py [--check]

Input:
  src/omp/libgomp_abi.txt  the GOMP_* and omp_* entry points of gcc 12's libgomp.so.1 with their
                           symbol versions (one "VERSION name" per line; made once with
                           `objdump -T libgomp.so.1 | grep ' DF .text'`);
  src/omp/libomp_abi.txt   the functions LLVM 16's libomp.so.5 exports under its version node
                           `VERSION` (__kmpc_*, kmp_*, kmpc_*, ompc_*, omp_*, GOMP_*; made once
                           with `objdump -T libomp.so.5 | grep ' DF .text' | grep ' VERSION '`);
  and the functions that src/omp/*.cpp define: a definition written out (DEF_RE: its name at
  the start of a line, its body opening there or its parameters going on), or an invocation, at
  the start of a line, of one of the forwarding macros that define one-line entry points
  (MACRO_FORMS: each defines exactly the names listed):
    FORTRAN_GETTER(omp_x)            omp_x_                      (fortran.cpp)
    FORTRAN_SETTER(omp_x)            omp_x_, omp_x_8_            (fortran.cpp)
    FORTRAN_FLAG_SETTER(omp_x)       omp_x_, omp_x_8_            (fortran.cpp)
    FORTRAN_INT_QUERY(omp_x)         omp_x_, omp_x_8_            (fortran.cpp)
    KMPC_LOCK(x), KMPC_NEST_LOCK(x)  __kmpc_x                    (kmp_ext.cpp)
    KMPC_EACH_WIDTH(KMPC_FAMILY)     __kmpc_family_4, __kmpc_family_4u, __kmpc_family_8,
                                     __kmpc_family_8u: libomp's four integer widths, the family
                                     in lower case (kmp_loop.cpp; KMPC_EACH_WIDTH(KMPC_DISPATCH_NEXT)
                                     defines __kmpc_dispatch_next_4 ... __kmpc_dispatch_next_8u)

Output:
  src/omp/libgomp.map          the version script: every libgomp entry point under libgomp's
                               version name, so that a gcc-built program binds to ours (by linking
                               or LD_PRELOAD), and every libomp entry point under `VERSION`, the
                               one version a clang-built program asks libomp.so.5 for; nothing
                               else is exported.
  src/omp/unimplemented.cpp    one function per entry point that no source defines: it stops the
                               program with one line naming the entry point (exit 2).
  src/omp/libomp_versions.cpp  the omp_* names both libraries export: a clang-built program binds
                               omp_get_thread_num@VERSION, a gcc-built one omp_get_thread_num@OMP_1.0,
                               and a symbol has one default version. The libgomp version stays the
                               function's own; @VERSION is a jump to it (GOMP_* too: libomp
                               exports them there). The Fortran names (a trailing underscore)
                               follow gfortran's conventions, which are not libomp's (lock
                               kinds): at VERSION they are refused. A name a source defines at
                               VERSION itself (PLAIT_AT_VERSION(name): a layout of libomp's) gets
                               no jump.

With --check nothing is written: exit 1 when the files on disk differ from what would be
generated (a test runs this). A defined GOMP_/omp_/__kmpc_/kmp_/kmpc_/ompc_ function that neither
library has is an error (exit 1): it would never be called.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OMP = os.path.join(ROOT, "src", "omp")
DEF_RE = re.compile(r"^(?:extern \"C\"\s+)?[A-Za-z_][\w\s\*:]*?\b((?:GOMP|omp|__kmpc|kmpc|kmp|ompc)_\w+)\s*\(")


def read_abi(name: str = "libgomp_abi.txt") -> list[tuple[str, str]]:
    out = []
    with open(os.path.join(OMP, name)) as f:
        for line in f:
            line = line.strip()
            if line:
                ver, name = line.split()
                out.append((ver, name))
    return out


# The forwarding macros' invocations and the names each defines (see the docstring).
MACRO_FORMS: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (re.compile(r"^FORTRAN_GETTER\((omp_\w+)\)"), ("{0}_",)),
    (re.compile(r"^FORTRAN_(?:SETTER|FLAG_SETTER|INT_QUERY)\((omp_\w+)\)"), ("{0}_", "{0}_8_")),
    (re.compile(r"^KMPC_(?:NEST_)?LOCK\((\w+)\)"), ("__kmpc_{0}",)),
    (re.compile(r"^KMPC_EACH_WIDTH\(KMPC_([A-Z_]+)\)"),
     ("__kmpc_{0}_4", "__kmpc_{0}_4u", "__kmpc_{0}_8", "__kmpc_{0}_8u")),
]


def names_defined_by(line: str) -> set[str]:
    """The entry points a source line defines: a definition written out, or a forwarding macro's."""
    for form, names in MACRO_FORMS:
        m = form.match(line)
        if m:
            # (a KMPC_ family is named in upper case; its entry points in lower case)
            groups = [g.lower() if g.isupper() else g for g in m.groups()]
            return {n.format(*groups) for n in names}
    m = DEF_RE.match(line)
    # A definition, not a declaration: its body opens on the line, or the line does not end the
    # statement (the parameter list goes on).
    if m and ("{" in line or not line.rstrip().endswith(";")):
        return {m.group(1)}
    return set()


AT_VERSION_RE = re.compile(r"^PLAIT_AT_VERSION\((\w+)\);")


def own_at_version() -> set[str]:
    """The omp_* names a source defines at libomp's version node itself (PLAIT_AT_VERSION: a layout
    of libomp's that differs from libgomp's), which get no jump."""
    names: set[str] = set()
    for fn in sorted(os.listdir(OMP)):
        if fn.endswith(".cpp") and fn not in ("unimplemented.cpp", "libomp_versions.cpp"):
            with open(os.path.join(OMP, fn)) as f:
                names |= {m.group(1) for m in map(AT_VERSION_RE.match, f) if m}
    return names


def defined_functions() -> set[str]:
    names: set[str] = set()
    for fn in sorted(os.listdir(OMP)):
        if not fn.endswith(".cpp") or fn in ("unimplemented.cpp", "libomp_versions.cpp"):
            continue
        with open(os.path.join(OMP, fn)) as f:
            for line in f:
                names |= names_defined_by(line)
    return names


def render(abi: list[tuple[str, str]], kmp: list[tuple[str, str]], defined: set[str]) -> tuple[str, str, str]:
    versions: dict[str, list[str]] = {}
    for ver, name in abi:
        versions.setdefault(ver, []).append(name)
    order = sorted(versions, key=lambda v: (v.split("_")[0], [int(x) for x in v.split("_")[1].split(".")]))
    gomp_names = {name for _, name in abi}
    # libomp's names that libgomp lacks take VERSION as their own (default) version; the omp_*
    # names both have keep libgomp's and get @VERSION from libomp_versions.cpp.
    kmp_own = sorted({name for _, name in kmp} - gomp_names)
    both = sorted(({name for _, name in kmp} & gomp_names) - own_at_version())
    lines = ["/* Generated by scripts/gen_omp_abi.py from src/omp/libgomp_abi.txt and src/omp/libomp_abi.txt: "
             "do not edit. */"]
    for i, ver in enumerate(order):
        lines.append(f"{ver} {{")
        lines.append("  global:")
        for name in sorted(versions[ver]):
            lines.append(f"    {name};")
        if i == 0:
            lines.append("  local:")
            lines.append("    *;")
        lines.append("};")
    lines.append("VERSION {")
    lines.append("  global:")
    for name in kmp_own:
        lines.append(f"    {name};")
    lines.append("};")
    mapfile = "\n".join(lines) + "\n"

    missing = sorted((gomp_names | set(kmp_own)) - defined)
    cpp = [
        "// Generated by scripts/gen_omp_abi.py: every libgomp or libomp entry point that src/omp/*.cpp",
        "// does not define. Each stops the program with one line naming it (exit 2): never a silent",
        "// wrong answer. Do not edit; run the script after adding or removing an implementation.",
        '#include "omp_internal.hpp"',
        "",
        'extern "C" {',
        "",
    ]
    for name in missing:
        cpp.append(f'void {name}() {{ plait::omp::fatal("%s is not implemented by the Plait OpenMP runtime", "{name}"); }}')
    cpp += ["", '}  // extern "C"', ""]

    ver = [
        "// Generated by scripts/gen_omp_abi.py: the omp_* entry points that libgomp and libomp both export,",
        "// under libomp's version node as well (a clang-built program binds name@VERSION). A name's own",
        "// (default) version is libgomp's; at VERSION it is a jump to the same function. The Fortran",
        "// names follow gfortran's conventions (libgomp's lock kinds), not libomp's: at VERSION they are",
        "// refused. Do not edit; run the script.",
        '#include "omp_internal.hpp"',
        "",
        "// name@VERSION: plait_kmpv_name, a jump to name (a refused name jumps to its refusal in",
        "// unimplemented.cpp).",
        "#define PLAIT_KMP_JUMP(name)                                                                 \\",
        '  __asm__(".text\\n.globl plait_kmpv_" #name "\\n.type plait_kmpv_" #name ", @function\\n"     \\',
        '          "plait_kmpv_" #name ": jmp " #name "@PLT\\n.size plait_kmpv_" #name ", .-plait_kmpv_" #name \\',
        '          "\\n.symver plait_kmpv_" #name ", " #name "@VERSION")',
        "// name@VERSION for a Fortran name: plait_kmpf_name, which stops the program naming it.",
        "#define PLAIT_KMP_REFUSE(name)                                                                \\",
        '  extern "C" void plait_kmpf_##name() {                                                       \\',
        '    plait::omp::fatal("%s with libomp\'s Fortran conventions is not implemented by the Plait " \\',
        '                      "OpenMP runtime", #name);                                              \\',
        "  }                                                                                         \\",
        '  __asm__(".symver plait_kmpf_" #name ", " #name "@VERSION")',
        "",
    ]
    for name in both:
        ver.append(f"PLAIT_KMP_{'REFUSE' if name.endswith('_') else 'JUMP'}({name});")
    ver.append("")
    return mapfile, "\n".join(cpp), "\n".join(ver)


def main() -> int:
    ap = argparse.ArgumentParser(description="Generate the OpenMP front door's version script and refusals.")
    ap.add_argument("--check", action="store_true", help="only compare with the files on disk")
    args = ap.parse_args()
    abi = read_abi()
    kmp = read_abi("libomp_abi.txt")
    defined = defined_functions()
    extra = sorted(defined - {name for _, name in abi} - {name for _, name in kmp})
    if extra:
        print(f"gen_omp_abi: defined but in neither libgomp's nor libomp's ABI: {', '.join(extra)}", file=sys.stderr)
        return 1
    mapfile, cpp, ver = render(abi, kmp, defined)
    targets = {os.path.join(OMP, "libgomp.map"): mapfile, os.path.join(OMP, "unimplemented.cpp"): cpp,
               os.path.join(OMP, "libomp_versions.cpp"): ver}
    if args.check:
        stale = [p for p, text in targets.items() if not os.path.exists(p) or open(p).read() != text]
        if stale:
            print(f"gen_omp_abi: out of date: {', '.join(os.path.relpath(p, ROOT) for p in stale)}; "
                  "run scripts/gen_omp_abi.py", file=sys.stderr)
            return 1
        return 0
    for p, text in targets.items():
        with open(p, "w") as f:
            f.write(text)
    names = {n for _, n in abi} | {n for _, n in kmp}
    print(f"gen_omp_abi: {len(names)} entry points ({len({n for _, n in abi})} libgomp, {len({n for _, n in kmp})} "
          f"libomp), {len(names & defined)} implemented, {len(names - defined)} refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
