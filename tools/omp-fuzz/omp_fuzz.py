#!/usr/bin/env python3
"""Differential tester for the OpenMP front door: random, legal, deterministic OpenMP programs, each
compiled once by gcc and run on libgomp, on LLVM's libomp (preloaded: it implements the GOMP ABI)
and on libplait-omp (preloaded) at several thread counts. Every run must print the same answer.
With --compiler clang the programs are compiled by clang-16 (libomp's ABI, __kmpc_*) and run on
libomp, the reference, and on libplait-omp (preloaded, its libomp.so.5 first on the library path).

    omp_fuzz.py [--seed S] [--programs N | --seconds T] [--threads 1,2,3,8] [--lang c|cxx|both]
                [--compiler gcc|clang] [--plait LIB] [--libomp LIB] [--work DIR] [--keep-going] [--quiet]
    omp_fuzz.py --replay FILE.json [...]     rerun saved (reduced) programs: the regression tests
                                             (--no-skip: also on the references' known faults)

A program is a list of blocks (what the generator chose, as JSON); each block is a C function that
returns a 64-bit value which does not depend on the schedule, the team sizes or the runtime: sums
(modulo 2^64) of per-item hashes, sequential hashes only where the program orders them (ordered
loops, inout dependence chains, taskwait), and checks that print 0 when what the standard
guarantees held (code after a cancel never runs, ordered regions in iteration order, threadprivate
copies). main prints one line per block. Constructs: parallel (num_threads, nested), worksharing
loops (every schedule, chunk, ordered, collapse, nowait, reductions, reduction(task, ...)),
sections, single (copyprivate), masked, critical, atomic, locks, barriers, tasks (if, final,
untied, mergeable, priority, shared results and taskwait), depend (in, out, inout,
mutexinoutset, inoutset, array sections, iterators), taskwait depend, detach (fulfilled by the
task or by another), taskgroup with task_reduction / in_reduction, taskloop (grainsize, num_tasks,
nogroup, reduction, collapse), cancellation of parallel, for, sections and taskgroup
(OMP_CANCELLATION=true for every run), threadprivate with copyin.

Verdicts. All runs agree: pass. A disagreement is run once more: one that does not come back is
*flaky* (a reference's timeout under load, most often) unless Plait's answer was wrong, which stays
a fault. Otherwise the runs are grouped by their output; when libgomp and
libomp agree at every thread count and Plait differs (or hangs, or crashes), it is Plait's fault:
the program is reduced (delta debugging over its blocks, then over each block's simplifications)
and written to WORK/plait-fault-*.json with the outputs; exit status 1. When libgomp and libomp
disagree with each other the program is reported as a reference disagreement (not Plait's fault
when Plait agrees with one of them) and kept in WORK/reference-*.json. Bad input: one line, exit 2.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIBOMP_CANDIDATES = ("/usr/lib/llvm-16/lib/libomp.so.5", "/usr/lib/x86_64-linux-gnu/libomp.so.5")
RUN_TIMEOUT_S = 10

PRELUDE = r"""
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t u64;
static inline u64 mix(u64 x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
#define AADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define ALOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ASTORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
static volatile int spin_sink;
static void spin(int n) { for (int i = 0; i < n; ++i) spin_sink = i; }
"""


# ---------------------------------------------------------------------------------------------
# Blocks. Each has `kind`, parameters, render(k, lang) -> (globals, function body), and
# simplifications() -> list of simpler parameter dicts (for the reducer).

def _sched(p):
    s = p["sched"]
    if s == "none":
        return ""
    c = f", {p['chunk']}" if p.get("chunk") and s not in ("auto", "runtime") else ""
    return f" schedule({s}{c})"


class Block:
    kind = "?"

    def __init__(self, params):
        self.p = dict(params)

    def to_json(self):
        return {"kind": self.kind, **self.p}

    def simplifications(self):
        return []

    @staticmethod
    def smaller(p, key, floor=1):
        if p.get(key, floor) > floor:
            q = dict(p)
            q[key] = max(floor, p[key] // 2)
            return [q]
        return []

    @staticmethod
    def off(p, key, value=False):
        if p.get(key) not in (None, value):
            q = dict(p)
            q[key] = value
            return [q]
        return []


class ForBlock(Block):
    """A worksharing loop: schedule, chunk, collapse, ordered, nowait, a reduction; optionally a
    second loop after a nowait one and an inner parallel loop (nested) per outer iteration."""
    kind = "for"

    @classmethod
    def make(cls, r):
        return cls({"n": r.randint(1, 300), "m": r.randint(1, 12) if r.random() < 0.3 else 0,
                    "sched": r.choice(["none", "static", "dynamic", "guided", "auto", "runtime"]),
                    "chunk": r.choice([0, 0, 1, 2, 7]), "ordered": r.random() < 0.3, "nowait": r.random() < 0.3,
                    "op": r.choice(["+", "^"]), "nt": r.choice([0, 0, 1, 2, 3]), "nested": r.random() < 0.15,
                    "seed": r.getrandbits(32)})

    def render(self, k, lang):
        p = self.p
        n, m = p["n"], p["m"]
        coll = " collapse(2)" if m else ""
        ordc = " ordered" if p["ordered"] else ""
        nowait = " nowait" if p["nowait"] else ""
        nt = f" num_threads({p['nt']})" if p["nt"] else ""
        op = p["op"]
        inner = "for (long j = 0; j < %d; ++j) " % m if m else "{ const long j = 0; "
        close = "" if m else "}"
        iters = n * (m or 1)
        nested = ""
        if p["nested"]:
            nested = ("      { u64 s = 0;\n"
                      "        #pragma omp parallel for num_threads(2) reduction(+: s)\n"
                      "        for (int q = 0; q < 5; ++q) s += mix(v + q);\n"
                      "        acc2 += s; }\n")
        ordered = ""
        if p["ordered"]:
            ordered = ("      #pragma omp ordered\n"
                       "      { if (expect != i * %d + j) bad++; expect++; ord = mix(ord ^ v); }\n" % (m or 1))
        second = ""
        if p["nowait"]:
            second = ("    #pragma omp for schedule(dynamic, 3) reduction(+: acc3)\n"
                      "    for (long i = 0; i < %d; ++i) acc3 += mix(%du + (u64)i);\n" % (n, p["seed"] + 1))
        body = (f"  u64 acc = 0, acc2 = 0, acc3 = 0, ord = {p['seed']}u; long expect = 0, bad = 0;\n"
                f"  #pragma omp parallel{nt} shared(ord, expect, bad)\n"
                "  {\n"
                f"    #pragma omp for{_sched(p)}{coll}{ordc}{nowait} reduction({op}: acc) reduction(+: acc2)\n"
                f"    for (long i = 0; i < {n}; ++i) {inner}{{\n"
                f"      u64 v = mix({p['seed']}u ^ (u64)(i * 1000003 + j));\n"
                f"      acc {op}= v;\n"
                f"{nested}{ordered}"
                f"    }}{close}\n"
                f"{second}"
                "  }\n"
                f"  if ({1 if p['ordered'] else 0} && expect != {iters}) bad++;\n"
                "  return acc ^ mix(acc2) ^ (acc3 * 3) ^ (ord * 5) ^ ((u64)bad << 40);\n")
        return "", body

    def simplifications(self):
        p = self.p
        out = self.smaller(p, "n") + self.off(p, "m", 0) + self.off(p, "ordered") + self.off(p, "nowait")
        out += self.off(p, "nested") + self.off(p, "nt", 0) + self.off(p, "chunk", 0)
        if p["sched"] != "none":
            q = dict(p)
            q["sched"] = "none"
            out.append(q)
        return out


class SectionsBlock(Block):
    kind = "sections"

    @classmethod
    def make(cls, r):
        return cls({"k": r.randint(1, 6), "nowait": r.random() < 0.3, "seed": r.getrandbits(32)})

    def render(self, k, lang):
        p = self.p
        secs = "".join("      #pragma omp section\n      AADD(&acc, mix(%du + %d));\n" % (p["seed"], s)
                       for s in range(p["k"]))
        nowait = " nowait" if p["nowait"] else ""
        body = ("  u64 acc = 0;\n"
                "  #pragma omp parallel shared(acc)\n"
                "  {\n"
                f"    #pragma omp sections{nowait}\n"
                "    {\n" + secs + "    }\n"
                "  }\n"
                "  return acc;\n")
        return "", body

    def simplifications(self):
        return self.smaller(self.p, "k") + self.off(self.p, "nowait")


class SyncBlock(Block):
    """critical, atomic (update and capture), a lock, single with copyprivate, masked, barrier."""
    kind = "sync"

    @classmethod
    def make(cls, r):
        return cls({"n": r.randint(1, 200), "how": r.choice(["critical", "atomic", "capture", "lock"]),
                    "single": r.random() < 0.5, "masked": r.random() < 0.4, "seed": r.getrandbits(32)})

    def render(self, k, lang):
        p = self.p
        upd = {
            "critical": "#pragma omp critical (crit%d)\n        acc += v;" % k,
            "atomic": "#pragma omp atomic\n        acc += v;",
            "capture": "u64 old;\n        #pragma omp atomic capture\n        { old = acc; acc += v; }\n        (void)old;",
            "lock": "omp_set_lock(&lk);\n        acc += v;\n        omp_unset_lock(&lk);",
        }[p["how"]]
        single = ""
        if p["single"]:
            single = ("    u64 b = 0;\n"
                      "    #pragma omp single copyprivate(b)\n"
                      "    b = mix(%du);\n"
                      "    if (b != mix(%du)) AADD(&bad, 1);\n" % (p["seed"] + 7, p["seed"] + 7))
        masked = ""
        if p["masked"]:
            masked = ("    #pragma omp masked\n"
                      "    AADD(&acc2, mix(%du));\n"
                      "    #pragma omp barrier\n" % (p["seed"] + 9))
        body = ("  u64 acc = 0, acc2 = 0, bad = 0;\n"
                "  omp_lock_t lk;\n"
                "  omp_init_lock(&lk);\n"
                "  #pragma omp parallel shared(acc, acc2, bad, lk)\n"
                "  {\n"
                f"{single}{masked}"
                "    #pragma omp for\n"
                f"    for (int i = 0; i < {p['n']}; ++i) {{\n"
                f"        u64 v = mix({p['seed']}u + (u64)i);\n"
                f"        {upd}\n"
                "    }\n"
                "  }\n"
                "  omp_destroy_lock(&lk);\n"
                "  return acc ^ (acc2 << 1) ^ (bad << 50);\n")
        return "", body

    def simplifications(self):
        return self.smaller(self.p, "n") + self.off(self.p, "single") + self.off(self.p, "masked")


class TaskTreeBlock(Block):
    """A recursive task tree made by one thread: each node spawns b children with a mix of clauses
    (if, final, untied, mergeable, priority), results through shared locals and taskwait, or through
    an atomic sum and a taskgroup."""
    kind = "tasktree"

    @classmethod
    def make(cls, r):
        return cls({"depth": r.randint(1, 6), "b": r.randint(1, 3), "ifd": r.choice([0, 0, 2, 3]),
                    "finald": r.choice([0, 0, 2, 4]), "untied": r.random() < 0.3, "mergeable": r.random() < 0.3,
                    "prio": r.random() < 0.3, "mode": r.choice(["wait", "group"]), "maker": r.choice(["single", "masked"]),
                    "seed": r.getrandbits(32)})

    def render(self, k, lang):
        p = self.p
        cl = []
        if p["ifd"]:
            cl.append(f"if(d < {p['ifd']})")
        if p["finald"]:
            cl.append(f"final(d >= {p['finald']})")
        if p["untied"]:
            cl.append("untied")
        if p["mergeable"]:
            cl.append("mergeable")
        if p["prio"]:
            cl.append("priority((int)(id % 5))")
        clauses = " ".join(cl)
        b = p["b"]
        if p["mode"] == "wait":
            fn = (f"static u64 tree{k}(int d, u64 id) {{\n"
                  f"  u64 r = mix(id);\n"
                  f"  if (d >= {p['depth']}) return r;\n"
                  f"  u64 c[{b}];\n"
                  f"  for (int i = 0; i < {b}; ++i) {{\n"
                  f"    #pragma omp task shared(c) firstprivate(i) {clauses}\n"
                  f"    c[i] = tree{k}(d + 1, id * 31 + (u64)i + 1);\n"
                  f"  }}\n"
                  f"  #pragma omp taskwait\n"
                  f"  for (int i = 0; i < {b}; ++i) r += c[i] * (u64)(i + 1);\n"
                  f"  return r;\n}}\n")
            call = f"r = tree{k}(0, {p['seed']}u);"
        else:
            fn = (f"static void tree{k}(int d, u64 id, u64* acc) {{\n"
                  f"  AADD(acc, mix(id));\n"
                  f"  if (d >= {p['depth']}) return;\n"
                  f"  for (int i = 0; i < {b}; ++i) {{\n"
                  f"    #pragma omp task firstprivate(i) {clauses}\n"
                  f"    tree{k}(d + 1, id * 31 + (u64)i + 1, acc);\n"
                  f"  }}\n}}\n")
            call = f"#pragma omp taskgroup\n      tree{k}(0, {p['seed']}u, &r);"
        maker = "single" if p["maker"] == "single" else "masked"
        body = ("  u64 r = 0;\n"
                "  #pragma omp parallel shared(r)\n"
                f"  #pragma omp {maker}\n"
                "  {\n"
                f"      {call}\n"
                "  }\n"
                "  return r;\n")
        return fn, body

    def simplifications(self):
        p = self.p
        return (self.smaller(p, "depth") + self.smaller(p, "b") + self.off(p, "ifd", 0) + self.off(p, "finald", 0)
                + self.off(p, "untied") + self.off(p, "mergeable") + self.off(p, "prio"))


# depend(inoutset: ...) is OpenMP 5.1: gcc 13 parses it, gcc 12 does not (probed once, main()).
HAVE_INOUTSET = True


class DepsBlock(Block):
    """One thread makes n tasks over m cells with depend clauses: inout/out apply a non-commutative
    step (ordered by the dependences), mutexinoutset and inoutset a commutative one (atomic for
    inoutset, whose members may run at once), in reads (one cell, an array section or an iterator
    over cells) into an atomic sum; taskwait depend in the middle reads a cell."""
    kind = "deps"

    @classmethod
    def make(cls, r):
        m = r.randint(1, 4)
        ops = []
        for _ in range(r.randint(1, 40)):
            kind = r.choice(["inout", "inout", "out", "mutex", "inoutset" if HAVE_INOUTSET else "mutex", "in", "in",
                             "section", "iter", "twait"])
            ops.append([kind, r.randrange(m), r.randint(1, m)])
        return cls({"m": m, "ops": ops, "seed": r.getrandbits(32), "prio": r.random() < 0.2})

    def render(self, k, lang):
        p = self.p
        m = p["m"]
        lines = []
        for t, (kind, c, ln) in enumerate(p["ops"]):
            pr = f" priority({t % 3})" if p["prio"] else ""
            v = f"mix({p['seed']}u + {t}u)"
            if kind in ("inout", "out"):
                lines.append(f"      #pragma omp task depend({kind}: x[{c}]) shared(x){pr}\n"
                             f"      x[{c}] = mix(x[{c}] ^ {v});")
            elif kind == "mutex":
                lines.append(f"      #pragma omp task depend(mutexinoutset: x[{c}]) shared(x){pr}\n"
                             f"      x[{c}] += {v};")
            elif kind == "inoutset":
                lines.append(f"      #pragma omp task depend(inoutset: x[{c}]) shared(x){pr}\n"
                             f"      AADD(&x[{c}], {v});")
            elif kind == "in":
                lines.append(f"      #pragma omp task depend(in: x[{c}]) shared(x, acc){pr}\n"
                             f"      AADD(&acc, mix(ALOAD(&x[{c}]) + {t}u));")
            elif kind == "section":
                # A section of one cell: depend list items must be identical or disjoint, and gcc
                # and libgomp take a section by its first element (x[2:2] does not depend on x[3]).
                lo = min(c, m - 1)
                l2 = 1
                lines.append(f"      #pragma omp task depend(in: x[{lo}:{l2}]) shared(x, acc){pr}\n"
                             f"      {{ u64 s = 0; for (int q = {lo}; q < {lo + l2}; ++q) s += ALOAD(&x[q]) * (u64)(q + 1);\n"
                             f"        AADD(&acc, mix(s + {t}u)); }}")
            elif kind == "iter":
                l2 = max(1, min(ln, m))
                lines.append(f"      #pragma omp task depend(iterator(it = 0:{l2}), in: x[it]) shared(x, acc){pr}\n"
                             f"      {{ u64 s = 0; for (int q = 0; q < {l2}; ++q) s += ALOAD(&x[q]) * (u64)(q + 3);\n"
                             f"        AADD(&acc, mix(s ^ {t}u)); }}")
            else:  # taskwait depend: the producer reads the cell once its earlier writers are done
                lines.append(f"      #pragma omp taskwait depend(in: x[{c}])\n"
                             f"      AADD(&acc, mix(ALOAD(&x[{c}]) ^ {t * 7}u));")
        body = (f"  u64 x[{m}], acc = 0;\n"
                f"  for (int q = 0; q < {m}; ++q) x[q] = mix({p['seed']}u + 100u + (u64)q);\n"
                "  #pragma omp parallel shared(x, acc)\n"
                "  #pragma omp single\n"
                "  {\n" + "\n".join(lines) + "\n"
                "      #pragma omp taskwait\n"
                "  }\n"
                f"  u64 r = acc;\n  for (int q = 0; q < {m}; ++q) r = mix(r ^ x[q]);\n  return r;\n")
        return "", body

    def simplifications(self):
        p = self.p
        out = []
        ops = p["ops"]
        if len(ops) > 1:
            for part in (ops[: len(ops) // 2], ops[len(ops) // 2:]):
                q = dict(p)
                q["ops"] = part
                out.append(q)
            for i in range(len(ops)):
                q = dict(p)
                q["ops"] = ops[:i] + ops[i + 1:]
                out.append(q)
        out += self.off(p, "prio")
        return out


class ReductionBlock(Block):
    """Task reductions: taskgroup task_reduction with in_reduction tasks (nested ones too), a
    worksharing loop with reduction(task, +) whose iterations make in_reduction tasks, a scope."""
    kind = "taskred"

    @classmethod
    def make(cls, r):
        return cls({"n": r.randint(1, 60), "form": r.choice(["taskgroup", "for"]), "nested": r.random() < 0.4,
                    "seed": r.getrandbits(32)})

    def render(self, k, lang):
        p = self.p
        nested = ""
        if p["nested"]:
            nested = ("        #pragma omp task in_reduction(+: r)\n"
                      "        r += mix(v + 1);\n")
        if p["form"] == "taskgroup":
            body = ("  u64 r = 0;\n"
                    "  #pragma omp parallel shared(r)\n"
                    "  #pragma omp single\n"
                    "  {\n"
                    "    #pragma omp taskgroup task_reduction(+: r)\n"
                    "    {\n"
                    f"      for (int i = 0; i < {p['n']}; ++i) {{\n"
                    "        #pragma omp task in_reduction(+: r) firstprivate(i)\n"
                    "        {\n"
                    f"        u64 v = mix({p['seed']}u + (u64)i);\n"
                    "        r += v;\n"
                    f"{nested}"
                    "        }\n"
                    "      }\n"
                    "    }\n"
                    "  }\n"
                    "  return r;\n")
        else:
            body = ("  u64 r = 0;\n"
                    "  #pragma omp parallel\n"
                    "  {\n"
                    "    #pragma omp for reduction(task, +: r)\n"
                    f"    for (int i = 0; i < {p['n']}; ++i) {{\n"
                    f"      u64 v = mix({p['seed']}u + (u64)i);\n"
                    "      #pragma omp task in_reduction(+: r) firstprivate(v)\n"
                    "      {\n"
                    "        r += v;\n"
                    f"{nested}"
                    "      }\n"
                    "    }\n"
                    "  }\n"
                    "  return r;\n")
        return "", body

    def simplifications(self):
        return self.smaller(self.p, "n") + self.off(self.p, "nested")


class TaskloopBlock(Block):
    kind = "taskloop"

    @classmethod
    def make(cls, r):
        return cls({"n": r.randint(0, 400), "gran": r.choice(["none", "grainsize", "num_tasks"]), "g": r.randint(1, 40),
                    "nogroup": r.random() < 0.3, "red": r.random() < 0.5, "collapse": r.random() < 0.2,
                    "seed": r.getrandbits(32)})

    def render(self, k, lang):
        p = self.p
        g = "" if p["gran"] == "none" else f" {p['gran']}({p['g']})"
        red = " reduction(+: r)" if p["red"] and not p["nogroup"] else ""
        nog = " nogroup" if p["nogroup"] else ""
        coll = " collapse(2)" if p["collapse"] else ""
        add = "r += v;" if red else "AADD(&r, v);"
        inner = "for (int j = 0; j < 3; ++j) " if p["collapse"] else "{ const int j = 0; "
        close = "" if p["collapse"] else "}"
        wait = "      #pragma omp taskwait\n" if p["nogroup"] else ""
        body = ("  u64 r = 0;\n"
                "  #pragma omp parallel shared(r)\n"
                "  #pragma omp single\n"
                "  {\n"
                f"      #pragma omp taskloop{g}{nog}{red}{coll}{'' if red else ' shared(r)'}\n"
                f"      for (int i = 0; i < {p['n']}; ++i) {inner}{{\n"
                f"        u64 v = mix({p['seed']}u + (u64)(i * 7 + j));\n"
                f"        {add}\n"
                f"      }}{close}\n"
                f"{wait}"
                "  }\n"
                "  return r;\n")
        return "", body

    def simplifications(self):
        p = self.p
        return (self.smaller(p, "n", 0) + self.off(p, "nogroup") + self.off(p, "red") + self.off(p, "collapse")
                + ([dict(p, gran="none")] if p["gran"] != "none" else []))


class DetachBlock(Block):
    kind = "detach"

    @classmethod
    def make(cls, r):
        return cls({"n": r.randint(1, 12), "by": r.choice(["self", "other", "mixed"]), "seed": r.getrandbits(32)})

    def render(self, k, lang):
        p = self.p
        n = p["n"]
        body = (f"  u64 r = 0;\n"
                "  #pragma omp parallel shared(r)\n"
                "  #pragma omp single\n"
                "  {\n"
                f"    omp_event_handle_t ev[{n}];\n"
                f"    for (int i = 0; i < {n}; ++i) {{\n"
                f"      int self = {'1' if p['by'] == 'self' else '0' if p['by'] == 'other' else 'i % 2'};\n"
                "      omp_event_handle_t e;\n"
                "      #pragma omp task detach(e) shared(r) firstprivate(i, self)\n"
                f"      {{ AADD(&r, mix({p['seed']}u + (u64)i)); if (self) omp_fulfill_event(e); }}\n"
                "      ev[i] = e;\n"
                "      if (!self) {\n"
                "        #pragma omp task firstprivate(e)\n"
                "        omp_fulfill_event(e);\n"
                "      }\n"
                "    }\n"
                "    (void)ev;\n"
                "    #pragma omp taskwait\n"
                "  }\n"
                "  return r;\n")
        return "", body

    def simplifications(self):
        return self.smaller(self.p, "n") + ([dict(self.p, by="self")] if self.p["by"] != "self" else [])


class CancelBlock(Block):
    """Cancellation (OMP_CANCELLATION=true): what the standard guarantees — code after a cancel
    never runs in the task or thread that cancelled, and the construct ends — printed as 0."""
    kind = "cancel"

    @classmethod
    def make(cls, r):
        return cls({"what": r.choice(["taskgroup", "for", "parallel", "sections"]), "n": r.randint(1, 100),
                    "at": r.randint(0, 99)})

    def render(self, k, lang):
        p = self.p
        at = p["at"] % p["n"]
        if p["what"] == "taskgroup":
            body = ("  int after = 0;\n"
                    "  #pragma omp parallel shared(after)\n"
                    "  #pragma omp single\n"
                    "  #pragma omp taskgroup\n"
                    "  {\n"
                    f"    for (int i = 0; i < {p['n']}; ++i) {{\n"
                    "      #pragma omp task firstprivate(i) shared(after)\n"
                    "      {\n"
                    f"        if (i == {at}) {{\n"
                    "          #pragma omp cancel taskgroup\n"
                    "          AADD(&after, 1);\n"
                    "        }\n"
                    "        #pragma omp cancellation point taskgroup\n"
                    "        spin(10);\n"
                    "      }\n"
                    "    }\n"
                    "  }\n"
                    "  return (u64)after;\n")
        elif p["what"] == "for":
            body = ("  int after = 0;\n"
                    "  #pragma omp parallel shared(after)\n"
                    "  {\n"
                    "    #pragma omp for schedule(dynamic, 1)\n"
                    f"    for (int i = 0; i < {p['n']}; ++i) {{\n"
                    f"      if (i == {at}) {{\n"
                    "        #pragma omp cancel for\n"
                    "        AADD(&after, 1);\n"
                    "      }\n"
                    "      #pragma omp cancellation point for\n"
                    "      spin(10);\n"
                    "    }\n"
                    "  }\n"
                    "  return (u64)after;\n")
        elif p["what"] == "parallel":
            body = ("  int after = 0;\n"
                    "  #pragma omp parallel shared(after)\n"
                    "  {\n"
                    "    if (omp_get_thread_num() == 0) {\n"
                    "      #pragma omp cancel parallel\n"
                    "      AADD(&after, 1);\n"
                    "    }\n"
                    "    #pragma omp cancellation point parallel\n"
                    "    #pragma omp barrier\n"
                    "  }\n"
                    "  return (u64)after;\n")
        else:
            body = ("  int after = 0;\n"
                    "  #pragma omp parallel shared(after)\n"
                    "  {\n"
                    "    #pragma omp sections\n"
                    "    {\n"
                    "      #pragma omp section\n"
                    "      {\n"
                    "        #pragma omp cancel sections\n"
                    "        AADD(&after, 1);\n"
                    "      }\n"
                    "      #pragma omp section\n"
                    "      spin(10);\n"
                    "    }\n"
                    "  }\n"
                    "  return (u64)after;\n")
        return "", body

    def simplifications(self):
        return self.smaller(self.p, "n")


class ThreadprivateBlock(Block):
    kind = "threadprivate"

    @classmethod
    def make(cls, r):
        return cls({"seed": r.getrandbits(32), "n": r.randint(1, 50)})

    def render(self, k, lang):
        p = self.p
        glob = f"static u64 tp{k};\n#pragma omp threadprivate(tp{k})\n"
        body = (f"  u64 bad = 0, acc = 0;\n"
                f"  tp{k} = mix({p['seed']}u);\n"
                f"  #pragma omp parallel copyin(tp{k}) shared(bad, acc)\n"
                "  {\n"
                f"    if (tp{k} != mix({p['seed']}u)) AADD(&bad, 1);\n"
                "    #pragma omp for\n"
                f"    for (int i = 0; i < {p['n']}; ++i) AADD(&acc, mix(tp{k} + (u64)i));\n"
                "  }\n"
                "  return acc ^ (bad << 48);\n")
        return glob, body

    def simplifications(self):
        return self.smaller(self.p, "n")


class CxxCopyBlock(Block):
    """C++ only: firstprivate objects with a copy constructor (gcc's task copy function)."""
    kind = "cxxcopy"

    @classmethod
    def make(cls, r):
        return cls({"n": r.randint(1, 30), "if0": r.random() < 0.3, "seed": r.getrandbits(32)})

    def render(self, k, lang):
        p = self.p
        glob = (f"struct Obj{k} {{ u64 v[4]; Obj{k}() {{ for (int i = 0; i < 4; ++i) v[i] = mix({p['seed']}u + i); }}\n"
                f"  Obj{k}(const Obj{k}& o) {{ for (int i = 0; i < 4; ++i) v[i] = o.v[i]; }} }};\n")
        iff = " if(0)" if p["if0"] else ""
        body = ("  u64 r = 0;\n"
                f"  Obj{k} o;\n"
                "  #pragma omp parallel shared(r) firstprivate(o)\n"
                "  #pragma omp single\n"
                "  {\n"
                f"    for (int i = 0; i < {p['n']}; ++i) {{\n"
                f"      #pragma omp task firstprivate(o, i) shared(r){iff}\n"
                "      AADD(&r, mix(o.v[i % 4] + (u64)i));\n"
                "    }\n"
                "  }\n"
                "  return r;\n")
        return glob, body

    def simplifications(self):
        return self.smaller(self.p, "n") + self.off(self.p, "if0")


BLOCKS = {c.kind: c for c in (ForBlock, SectionsBlock, SyncBlock, TaskTreeBlock, DepsBlock, ReductionBlock,
                              TaskloopBlock, DetachBlock, CancelBlock, ThreadprivateBlock, CxxCopyBlock)}
C_KINDS = [k for k in BLOCKS if k != "cxxcopy"]


def make_program(seed: int, lang: str) -> dict:
    r = random.Random(seed)
    kinds = C_KINDS + (["cxxcopy"] if lang == "cxx" else [])
    blocks = [BLOCKS[r.choice(kinds)].make(r).to_json() for _ in range(r.randint(1, 5))]
    return {"seed": seed, "lang": lang, "blocks": blocks}


def block_of(j: dict) -> Block:
    j = dict(j)
    return BLOCKS[j.pop("kind")](j)


def render(prog: dict) -> str:
    globs, funcs, calls = [], [], []
    for k, bj in enumerate(prog["blocks"]):
        g, body = block_of(bj).render(k, prog["lang"])
        globs.append(g)
        funcs.append(f"static u64 block{k}(void) {{\n{body}}}\n")
        calls.append(f'  printf("block{k} %016llx\\n", (unsigned long long)block{k}());\n')
    return (PRELUDE + "".join(globs) + "\n".join(funcs) +
            "int main(void) {\n  omp_set_max_active_levels(2);\n" + "".join(calls) + "  return 0;\n}\n")


# ---------------------------------------------------------------------------------------------
# Reference runtimes' own faults, found by this tester (reduced by hand to one or two blocks;
# docs/openmp.md, "Differential testing"). A program that has one is not run on that runtime: its
# crash or hang would hide what the other runtimes answer. Each entry: runtime, a test on the
# program's blocks, why.
def _cancelled_worksharing_then_more(blocks) -> bool:
    return any(b["kind"] == "cancel" and b.get("what") in ("sections", "for") for b in blocks[:-1])


KNOWN_REFERENCE_FAULTS = [
    ("libomp", lambda bs: any(b["kind"] == "detach" for b in bs),
     "libomp 16 crashes (SIGSEGV) on GOMP_task with a detach clause (gcc's detach through the GOMP ABI), "
     "at every thread count"),
    ("libomp", lambda bs: any(b["kind"] == "cxxcopy" and b.get("if0") for b in bs),
     "libomp 16 crashes (SIGSEGV) on an undeferred GOMP_task (if(0)) with a copy function (a C++ "
     "firstprivate object)"),
    ("libomp", _cancelled_worksharing_then_more,
     "libomp 16, with 2 or more threads, hangs or computes wrong results in the regions after one whose "
     "worksharing construct (for or sections) was cancelled (a later sections construct hangs; a later "
     "loop lost iterations)"),
    ("libgomp", lambda bs: any(b["kind"] == "for" and b.get("nested") and b.get("nt") == 1 for b in bs),
     "libgomp 12 takes seconds for a loop in a team of one whose iterations each start a nested team (1,390 "
     "nested regions of 2 threads: 3.2 s against Plait's 7 ms), past the run's timeout under load"),
    ("libgomp", lambda bs: any(b["kind"] == "tasktree" and b.get("prio") and b.get("mode") == "wait" for b in bs),
     "libgomp 12 crashes (SIGSEGV in GOMP_taskwait) with 2 or more threads when tasks with priority(...) "
     "wait for their own children (OMP_MAX_TASK_PRIORITY > 0)"),
]


def skipped_runtimes(prog: dict) -> dict:
    out = {}
    for rt, test, why in KNOWN_REFERENCE_FAULTS:
        if test(prog["blocks"]):
            out.setdefault(rt, why)
    return out


# ---------------------------------------------------------------------------------------------
# Running

class Runner:
    def __init__(self, plait: str, libomp: str | None, threads: list[int], work: Path, compiler: str = "gcc"):
        self.plait, self.libomp, self.threads, self.work = plait, libomp, threads, work
        self.compiler = compiler
        # libomp.so.5 as libplait-omp, for a clang-built program: the build tree's omp-compat/
        # (or an installed plait-omp-compat/) beside the library
        here = Path(plait).resolve().parent
        self.compat = next((str(d) for d in (here / "omp-compat", here / "plait-omp-compat")
                            if (d / "libomp.so.5").exists()), None)

    def runtimes(self):
        if self.compiler == "clang":  # the program's own libomp is the reference
            return [("libomp", None), ("plait", self.plait)]
        rts = [("libgomp", None)]
        if self.libomp:
            rts.append(("libomp", self.libomp))
        rts.append(("plait", self.plait))
        return rts

    def compile(self, prog: dict, name: str) -> Path | None:
        src = self.work / f"{name}.{'cpp' if prog['lang'] == 'cxx' else 'c'}"
        src.write_text(render(prog))
        exe = self.work / name
        if self.compiler == "clang":
            cc = ["clang++-16", "-x", "c++"] if prog["lang"] == "cxx" else ["clang-16"]
            cmd = cc + ["-fopenmp", "-fopenmp-version=51", "-O1", "-w", str(src), "-o", str(exe), "-latomic", "-lm"]
        else:
            cc = ["g++", "-x", "c++"] if prog["lang"] == "cxx" else ["gcc"]
            cmd = cc + ["-fopenmp", "-O1", "-w", str(src), "-o", str(exe)]
        cp = subprocess.run(cmd, capture_output=True, text=True)
        if cp.returncode != 0:
            raise RuntimeError(f"the generator made a program {cmd[0]} refuses ({src}):\n{cp.stderr[-2000:]}")
        return exe

    def run_all(self, exe: Path, skip=()) -> dict:
        jobs = []
        for rt, lib in self.runtimes():
            if rt in skip:
                continue
            for t in self.threads:
                env = dict(os.environ, OMP_NUM_THREADS=str(t), OMP_CANCELLATION="true", OMP_MAX_TASK_PRIORITY="4")
                env.pop("LD_PRELOAD", None)
                if lib:
                    env["LD_PRELOAD"] = lib
                    if self.compiler == "clang" and self.compat:
                        env["LD_LIBRARY_PATH"] = self.compat + (":" + env["LD_LIBRARY_PATH"]
                                                                if env.get("LD_LIBRARY_PATH") else "")
                jobs.append(((rt, t), env))

        def one(job):
            key, env = job
            try:
                cp = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
                out = cp.stdout if cp.returncode == 0 else f"exit {cp.returncode}\n{cp.stdout}{cp.stderr[-500:]}"
            except subprocess.TimeoutExpired:
                out = f"timeout after {RUN_TIMEOUT_S} s"
            return key, out

        with ThreadPoolExecutor(max_workers=2) as ex:
            return dict(ex.map(one, jobs))


def verdict(outs: dict) -> str:
    """pass: every run gave the same answer. plait: Plait's answers differ from those of each
    reference runtime (libgomp, and libomp when it is there) at some thread count, while a reference
    gave one answer at every thread count. reference: Plait agrees with a reference everywhere but
    the references disagree (one of them crashed, hung or answered otherwise), or Plait gave one
    answer at every thread count and a reference gave it too wherever it did not crash or hang.
    generator: no runtime gave one answer at every thread count (or only Plait did, and a
    reference gave other answers) — the program is not deterministic, a fault of this generator,
    never counted against a runtime."""
    if len(set(outs.values())) == 1:
        return "pass"
    rts = sorted({rt for rt, _ in outs})
    threads = sorted({t for _, t in outs})
    refs = [rt for rt in rts if rt != "plait"]
    if not refs:
        return "pass"
    consistent = [rt for rt in rts if len({outs[(rt, t)] for t in threads}) == 1 and
                  not outs[(rt, threads[0])].startswith(("exit", "timeout"))]
    if not consistent:
        return "generator"
    if any(all(outs[("plait", t)] == outs[(ref, t)] for t in threads) for ref in refs):
        return "reference"
    if any(ref in consistent for ref in refs):
        return "plait"
    if "plait" in consistent:
        # A reference that crashed or hung at some thread counts and gave Plait's answer at the
        # others is the reference's fault (libgomp with one thread and a detached task, past the
        # timeout on a loaded machine), not a program without one answer.
        answer = outs[("plait", threads[0])]
        for ref in refs:
            got = {outs[(ref, t)] for t in threads}
            if got - {answer} and all(o.startswith(("exit", "timeout")) for o in got - {answer}):
                return "reference"
        return "generator"
    return "plait"


def reduce_program(prog: dict, runner: Runner, still_fails, log) -> dict:
    """Delta debugging over the blocks, then greedy simplification of each block's parameters."""
    best = prog
    n = 2
    while len(best["blocks"]) >= 2:
        blocks = best["blocks"]
        size = max(1, len(blocks) // n)
        chunks = [blocks[i:i + size] for i in range(0, len(blocks), size)]
        progressed = False
        for i in range(len(chunks)):
            complement = [b for j, c in enumerate(chunks) if j != i for b in c]
            for cand in (chunks[i], complement):
                if cand and len(cand) < len(blocks) and still_fails(dict(best, blocks=cand)):
                    best = dict(best, blocks=cand)
                    n = max(n - 1, 2)
                    progressed = True
                    break
            if progressed:
                break
        if not progressed:
            if n >= len(blocks):
                break
            n = min(len(blocks), n * 2)
    changed = True
    while changed:
        changed = False
        for i, bj in enumerate(best["blocks"]):
            for q in block_of(bj).simplifications():
                cand_blocks = list(best["blocks"])
                cand_blocks[i] = {"kind": bj["kind"], **q}
                cand = dict(best, blocks=cand_blocks)
                if still_fails(cand):
                    best = cand
                    changed = True
                    log(f"  reduced: {json.dumps(cand_blocks[i])[:160]}")
                    break
            if changed:
                break
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--programs", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--threads", default="1,2,3,8")
    ap.add_argument("--lang", choices=["c", "cxx", "both"], default="both")
    ap.add_argument("--compiler", choices=["gcc", "clang"], default="gcc",
                    help="gcc: libgomp's ABI, run on libgomp, libomp and Plait; clang: clang-16, libomp's ABI, "
                         "run on libomp and Plait")
    ap.add_argument("--plait", default=None, help="libplait-omp.so.1 to preload")
    ap.add_argument("--libomp", default=None, help="LLVM's libomp.so.5 (default: the first found; 'none': skip)")
    ap.add_argument("--work", default=None, help="where programs and findings go (default: a temporary folder)")
    ap.add_argument("--replay", nargs="*", default=None, help="saved programs (JSON) to run again")
    ap.add_argument("--keep-going", action="store_true", help="go on after a finding")
    ap.add_argument("--reduce-all", action="store_true", help="reduce reference and generator findings too")
    ap.add_argument("--no-skip", action="store_true",
                    help="run every program on every reference, known faults too (shows them)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)

    def die(msg):
        print(f"omp_fuzz: error: {msg}", file=sys.stderr)
        return 2

    if a.plait is None or not Path(a.plait).is_file():
        return die(f"--plait {a.plait}: no such library; accepted: the path of libplait-omp.so.1")
    try:
        threads = [int(x) for x in a.threads.split(",")]
        if not threads or min(threads) < 1 or max(threads) > 64:
            raise ValueError
    except ValueError:
        return die(f"--threads {a.threads}: accepted a comma-separated list of integers 1..64")
    if a.programs is not None and a.programs < 0:
        return die(f"--programs {a.programs}: accepted an integer >= 0")
    libomp = None
    if a.libomp != "none":
        libomp = a.libomp or next((c for c in LIBOMP_CANDIDATES if Path(c).is_file()), None)
        if a.libomp and not Path(a.libomp).is_file():
            return die(f"--libomp {a.libomp}: no such library")
    if shutil.which("gcc") is None:
        return die("gcc not found")
    if a.compiler == "clang" and (shutil.which("clang-16") is None or shutil.which("clang++-16") is None):
        return die("--compiler clang: clang-16 / clang++-16 not found")
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="omp-fuzz-"))
    work.mkdir(parents=True, exist_ok=True)
    global HAVE_INOUTSET
    probe = work / "inoutset_probe.c"
    probe.write_text("int x;\nvoid f(void) {\n#pragma omp task depend(inoutset: x)\n x++;\n}\n")
    HAVE_INOUTSET = subprocess.run(["gcc", "-fopenmp", "-c", str(probe), "-o", str(work / "inoutset_probe.o")],
                                   capture_output=True).returncode == 0
    runner = Runner(a.plait, libomp, threads, work, a.compiler)
    # The references' known faults are those of the GOMP ABI's programs (libomp running gcc's
    # calls); a clang-built program runs on libomp's own ABI.
    known = (lambda p: {}) if a.compiler == "clang" else skipped_runtimes
    log = (lambda *m: None) if a.quiet else (lambda *m: print(*m, flush=True))

    if a.replay is not None:
        progs = []
        for f in a.replay:
            try:
                progs.append(json.loads(Path(f).read_text())["program"])
            except (OSError, ValueError, KeyError) as e:
                return die(f"{f}: not a saved program ({e})")
    else:
        progs = None

    counts = {"pass": 0, "plait": 0, "reference": 0, "generator": 0, "flaky": 0}
    skip_counts: dict[str, int] = {}
    deadline = time.time() + a.seconds if a.seconds else None
    limit = a.programs if a.programs is not None else (None if deadline else 100)
    i = 0
    while True:
        if progs is not None:
            if i >= len(progs):
                break
            prog = progs[i]
        else:
            if limit is not None and i >= limit:
                break
            if deadline is not None and time.time() >= deadline:
                break
            lang = a.lang if a.lang != "both" else ("c" if i % 2 == 0 else "cxx")
            prog = make_program(a.seed * 1000003 + i, lang)
        name = f"p{i}"
        try:
            exe = runner.compile(prog, name)
        except RuntimeError as e:
            print(f"omp_fuzz: {e}", file=sys.stderr)
            return 3
        skip = {} if a.no_skip else known(prog)
        outs = runner.run_all(exe, skip)
        v = verdict(outs)
        first = outs
        if v != "pass":
            # Once more: a disagreement that does not come back is kept apart. (Plait's stays a fault
            # even so: a wrong answer now and then is a race; the record keeps both runs' outputs.)
            again = runner.run_all(exe, skip)
            if verdict(again) == "pass" and v != "plait":
                v = "flaky"
        for rt, why in skip.items():
            skip_counts[why] = skip_counts.get(why, 0) + 1
        counts[v] += 1
        if v != "pass":
            kinds = ",".join(b["kind"] for b in prog["blocks"])
            log(f"program {i} (seed {prog['seed']}, {prog['lang']}, {kinds}): {v}")

            def still(cand, want=v):
                try:
                    e = runner.compile(cand, name + "r")
                except RuntimeError:
                    return False
                return verdict(runner.run_all(e, known(cand))) == want

            small = reduce_program(prog, runner, still, log) if v == "plait" or a.reduce_all else prog
            final = runner.run_all(runner.compile(small, name + "f"), known(small))
            rec = {"verdict": v, "program": small, "original_seed": prog["seed"],
                   "outputs": {f"{rt}@{t}": out for (rt, t), out in sorted(final.items())},
                   "first_outputs": {f"{rt}@{t}": out for (rt, t), out in sorted(first.items())}}
            out = work / f"{'plait-fault' if v == 'plait' else v}-{prog['seed']}.json"
            out.write_text(json.dumps(rec, indent=1) + "\n")
            log(f"  kept {out}")
            if v == "plait" and not a.keep_going:
                break
        elif not a.quiet and (i + 1) % 25 == 0:
            log(f"{i + 1} programs, {counts['pass']} agree, {counts['plait']} Plait faults, "
                f"{counts['reference']} reference disagreements, {counts['generator']} not deterministic")
        for f in work.glob(f"{name}*"):
            if f.suffix != ".json":
                f.unlink(missing_ok=True)
        i += 1
    rts = "+".join(rt for rt, _ in runner.runtimes())
    print(f"omp_fuzz: {i} programs ({rts} at {a.threads} threads): {counts['pass']} agree, "
          f"{counts['plait']} Plait faults, {counts['reference']} reference disagreements, "
          f"{counts['generator']} not deterministic (the generator's fault), {counts['flaky']} not repeated on a "
          f"second run (a reference's timeout under load, most often); work {work}")
    for why, n in sorted(skip_counts.items()):
        print(f"omp_fuzz: {n} programs not run on a reference with a known fault: {why}")
    if a.work is None and sum(counts.values()) == counts["pass"]:
        shutil.rmtree(work, ignore_errors=True)  # nothing found: no folder left behind
    return 1 if counts["plait"] else (3 if counts["generator"] else 0)


if __name__ == "__main__":
    sys.exit(main())
