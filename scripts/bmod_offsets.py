#!/usr/bin/env python3
"""Code-placement sweep: sparselu's bmod, the same machine code, run from every offset of a page.

Copies the bytes of `sparselu::bmod` out of a built binary into an executable buffer at each
STEP-byte offset of a page (and up to --span bytes), calls it --calls times per offset on three
page-aligned 50x50 blocks, and prints the best of 5 per-call times. bmod is a leaf function
without RIP-relative addressing, so the copy runs as it does in place; the harness checks for a
`call` or `rip` in its disassembly first and stops with an error if there is one.

It showed why one clang build of sparselu-plait was 17-20 % slower than the next with the same
object code: ~42 us per call at offsets 0 mod 128, ~34 us at 64 mod 128
(docs/notes/2026-11-22-code-placement.md, "The clang sparselu binary"; docs/bench-protocol.md,
"Code placement").

    scripts/bmod_offsets.py [--binary build/clang-release/bin/sparselu-plait] [--step 64]
                            [--span 4096] [--calls 300]

Needs nm, objdump, readelf and a C compiler (cc). Pin it for steadier numbers
(`taskset -c 1 scripts/bmod_offsets.py`).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYMBOL = "_ZN8sparselu4bmodEPKfS1_Pfm"

HARNESS = r"""
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
typedef void (*bmod_t)(const float*, const float*, float*, unsigned long);
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 2; }
  static unsigned char code[1 << 16];
  size_t n = fread(code, 1, sizeof code, f);
  fclose(f);
  long step = strtol(argv[2], 0, 0), span = strtol(argv[3], 0, 0);
  int calls = atoi(argv[4]);
  size_t region = (size_t)span + n + 4096;
  unsigned char* buf = mmap(NULL, region, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) { perror("mmap"); return 2; }
  const unsigned long bs = 50;
  float* a = aligned_alloc(4096, 3 * 4096); float* b = aligned_alloc(4096, 3 * 4096); float* c = aligned_alloc(4096, 3 * 4096);
  for (int i = 0; i < 2500; i++) { a[i] = (float)(i % 7) * 0.01f; b[i] = (float)(i % 5) * 0.01f; c[i] = 1.0f; }
  for (long off = 0; off < span; off += step) {
    memcpy(buf + off, code, n);
    __builtin___clear_cache((char*)buf + off, (char*)buf + off + n);
    bmod_t fn = (bmod_t)(buf + off);
    double best = 1e9;
    for (int t = 0; t < 5; t++) {
      double t0 = now();
      for (int r = 0; r < calls; r++) fn(a, b, c, bs);
      double dt = (now() - t0) / calls;
      if (dt < best) best = dt;
    }
    printf("0x%05lx %.2f\n", off, best * 1e6);
    memset(buf + off, 0xcc, n);
  }
  return 0;
}
"""


def function_bytes(binary):
    if not os.path.isfile(binary):
        sys.exit(f"bmod_offsets: no such file: {binary} (build it first: cmake --build build/clang-release)")
    syms = subprocess.check_output(["nm", binary], text=True)
    m = re.search(r"^([0-9a-f]+) T " + re.escape(SYMBOL) + "$", syms, re.M)
    if not m:
        sys.exit(f"bmod_offsets: {binary} has no symbol {SYMBOL} (a sparselu binary is needed)")
    start = int(m.group(1), 16)
    dis = subprocess.check_output(["objdump", "-d", "--no-show-raw-insn", binary], text=True)
    body = re.search(r"^[0-9a-f]+ <" + re.escape(SYMBOL) + r">:\n(.*?)\n\n", dis, re.S | re.M)
    if not body:
        sys.exit(f"bmod_offsets: no disassembly of {SYMBOL} in {binary}")
    lines = [l for l in body.group(1).splitlines() if re.match(r"\s+[0-9a-f]+:", l)]
    if any(re.search(r"\bcall|%rip", l) for l in lines):
        sys.exit("bmod_offsets: this bmod calls out or addresses memory relative to rip; a copy would not run")
    end = int(lines[-1].split(":")[0], 16) + 16  # past the last instruction (at most 15 bytes long)
    sections = subprocess.check_output(["readelf", "-S", "-W", binary], text=True)
    for l in sections.splitlines():
        f = l.split("]")[-1].split()
        if len(f) > 3 and f[0] == ".text":
            addr, off = int(f[2], 16), int(f[3], 16)
            with open(binary, "rb") as fh:
                fh.seek(start - addr + off)
                return start, fh.read(end - start)
    sys.exit(f"bmod_offsets: no .text section in {binary}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/clang-release/bin/sparselu-plait"))
    ap.add_argument("--step", type=lambda s: int(s, 0), default=64, help="bytes between offsets (default 64)")
    ap.add_argument("--span", type=lambda s: int(s, 0), default=4096, help="offsets from 0 up to this (default 4096)")
    ap.add_argument("--calls", type=int, default=300, help="calls per timing (default 300)")
    a = ap.parse_args()
    if a.step < 1 or a.span < a.step or a.calls < 1:
        sys.exit("bmod_offsets: --step must be >= 1, --span >= --step, --calls >= 1")
    start, code = function_bytes(a.binary)
    with tempfile.TemporaryDirectory() as d:
        src, exe, blob = (os.path.join(d, x) for x in ("h.c", "h", "bmod.bin"))
        open(src, "w").write(HARNESS)
        open(blob, "wb").write(code)
        subprocess.check_call(["cc", "-O2", src, "-o", exe])
        out = subprocess.check_output([exe, blob, str(a.step), str(a.span), str(a.calls)], text=True)
    print(f"bmod at 0x{start:x} in {a.binary}; its page offset is 0x{start % 4096:03x}")
    rows = [(int(o, 16), float(t)) for o, t in (l.split() for l in out.splitlines())]
    for o, t in rows:
        print(f"0x{o:05x} {t:7.2f} us")
    by = {}
    for o, t in rows:
        by.setdefault(o % 128, []).append(t)
    print("median per offset mod 128: " + ", ".join(f"{k}: {statistics.median(v):.1f} us" for k, v in sorted(by.items())))


if __name__ == "__main__":
    main()
