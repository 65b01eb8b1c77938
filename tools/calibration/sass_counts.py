#!/usr/bin/env python3
"""Count the SASS opcodes of each kernel's loop body in `cuobjdump -sass` listings.

Usage: sass_counts.py [--match REGEX] [--elements N] [--pipes FILE] [--listing FILE] ARCH=DUMP...
Writes CSV to stdout: arch,kernel,opcode,count,per_element (per_element = count / N; N = 128, the
columns of a softmax row tile, by default). --pipes FILE: the per-pipe totals of the same loop bodies,
arch,kernel,pipe,count,per_element. --listing FILE: each loop body's SASS, and what lies outside it.
ARCH labels the rows of DUMP (a plain DUMP takes the arch of its `code for sm_XX` line). --match keeps
the kernels whose name (demangled with c++filt where it is installed) matches REGEX.

Finding the loop. cuobjdump prints each instruction as `/*ADDR*/  [@P] OPCODE operands ;` (an
encoding comment may follow, and line breaks may split it) and each branch target as a label line
`.L_x_N:` referred to as `(.L_x_N)` (older versions write the target's address, 0x...). A branch whose
target lies before it closes a loop whose body is every instruction from the target to the branch. A
branch to itself (the trap after EXIT) is no loop. Of the loops we take the innermost ones (holding no
other loop) and of those the one with the most instructions: in h100_cudacore.cu's kernels that is the
timed `#pragma unroll 1` iteration loop, whose body is one fully unrolled row tile (or 512 unit steps)
plus the loop's own counter update, compare and branch. The counts do not depend on where the
compiler rotated the loop: a rotated body still executes each instruction once per iteration. A kernel
without a backward branch is counted whole, after a comment line (# ...) saying so: then every opcode
listed lies outside any loop.
"""

import argparse
import collections
import csv
import re
import shutil
import subprocess
import sys

INSTR = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s+(.*?)\s*;")
LABEL = re.compile(r"^\s*(\.L_x_\d+|\.L_\w+):\s*$")
FUNCTION = re.compile(r"Function\s*:\s*(\S+)")
ARCH = re.compile(r"code for (sm_\w+)")
TARGET_LABEL = re.compile(r"`\((\.L_\w+)\)")
TARGET_ADDR = re.compile(r"\b0x([0-9a-fA-F]+)\b")

# Modifiers that matter, by opcode: the function of MUFU, every modifier of the conversions, the
# access size of memory instructions, the kind of IMAD (MOV/SHL/IADD are IMADs ptxas uses as moves,
# shifts and adds on the FMA pipe), rounding of the FP32 arithmetic (FADD.RM is the software exp2's
# floor) and HFMA2.MMA (a move ptxas puts on the tensor pipe). Other modifiers (.FTZ, .LUT, .U32, the
# ISETP comparison, ...) are dropped.
KEEP_ALL = {"MUFU", "F2FP", "FRND", "F2I", "I2F", "F2F", "I2FP", "F2IP"}
MEMORY = {"LDS", "STS", "LDG", "STG", "LD", "ST", "LDL", "STL", "LDSM", "STSM", "ATOMS", "ATOMG", "ATOM", "RED"}
SIZES = {"U8", "S8", "U16", "S16", "32", "64", "128"}
IMAD_KINDS = {"MOV", "SHL", "IADD", "WIDE", "HI", "X"}
ROUNDING = {"RM", "RP", "RZ"}
FP32 = {"FADD", "FMUL", "FFMA", "FADD2", "FMUL2", "FFMA2"}


def normalize(op):
    base, *mods = op.split(".")
    if base in KEEP_ALL:
        return op
    if base in MEMORY:
        keep = [m for m in mods if m in SIZES]
    elif base == "IMAD":
        keep = mods[:1] if mods and mods[0] in IMAD_KINDS else []
    elif base in FP32:
        keep = [m for m in mods if m in ROUNDING]
    elif base == "HFMA2":
        keep = [m for m in mods if m == "MMA"]
    else:
        keep = []
    return ".".join([base] + keep)


# Opcode -> pipe: OUR ASSIGNMENT, from NVIDIA's descriptions of the pipes that Nsight Compute reports
# (fma = fmaheavy + fmalite: FP32 add/mul/fma; fmaheavy alone: integer multiply-add, IMAD and its
# move/shift/add forms; alu: integer add/compare/logic/shift, FP32 min/max/compare/select, and on
# Ampere and later the fast fp32 -> fp16/bf16 conversion (F2FP); xu, here "mufu": transcendentals
# (MUFU), int <-> float conversions, rounding (FRND), bit counts; lsu: shared/global/local memory,
# S2R, shuffles; branch: the ADU/CBU instructions (branches, convergence, block barriers, constant
# loads); uniform: the U* datapath). GH100 runs FP32 at 2 x 16 lanes per sub-partition (fmaheavy +
# fmalite) and FP16x2 on the same pipes. Where NVIDIA says nothing we guessed: I2FP/F2IP (the "P"
# conversions that sm_86+ added next to the XU ones) and VIADD/VIMNMX as alu, CS2R as alu, LDC and
# BAR as branch. FFMA2/FADD2/FMUL2 (sm_100) are one instruction for two FP32 lanes' worth of work on
# the fma pipe. Anything unknown is "other" (listed in --listing).
PIPES = {
    "fma": "FFMA FMUL FADD FFMA2 FMUL2 FADD2 FSWZADD HFMA2 HADD2 HMUL2",
    "fmaheavy": "IMAD IMAD.MOV IMAD.SHL IMAD.IADD IMAD.WIDE IMAD.HI IMAD.X IMUL IDP IDP4A",
    "alu": "FMNMX FMNMX3 FSEL FSETP FSET FCHK LOP3 LOP IADD3 IADD VIADD IABS IMNMX VIMNMX ISETP ICMP SEL SHF SHL "
    "SHR LEA PRMT PLOP3 P2R R2P MOV BMSK SGXT F2FP I2FP F2IP CS2R HMNMX2 HSETP2 VABSDIFF VABSDIFF4",
    "mufu": "MUFU FRND F2I I2F F2F POPC FLO BREV",
    "lsu": "LDS STS LDG STG LD ST LDL STL LDSM STSM ATOMS ATOMG ATOM RED SHFL S2R MATCH MEMBAR",
    "branch": "BRA BRX JMP JMX CALL RET EXIT BSSY BSYNC WARPSYNC BREAK YIELD BAR LDC ELECT VOTE",
    "mma": "HFMA2.MMA HMMA IMMA HGMMA QGMMA",
}
PIPE_OF = {op: pipe for pipe, ops in PIPES.items() for op in ops.split()}
PIPE_ORDER = ["fma", "fmaheavy", "alu", "mufu", "lsu", "uniform", "branch", "mma", "other"]


def pipe_of(op):
    if op in PIPE_OF:
        return PIPE_OF[op]
    base = op.split(".")[0]
    if base in PIPE_OF:
        return PIPE_OF[base]
    if base.startswith("U") and not base.startswith("UTMA"):
        return "uniform"
    return "other"


class Instr:
    def __init__(self, addr, text):
        self.addr = addr
        self.text = text
        words = text.split()
        self.pred = words[0] if words and words[0].startswith("@") else ""
        rest = words[1:] if self.pred else words
        self.op = rest[0] if rest else "?"
        self.operands = " ".join(rest[1:])


def parse(path, arch_label):
    """{(arch, mangled name): ([Instr], {label: address})} of one cuobjdump -sass listing."""
    functions = collections.OrderedDict()
    arch, current, pending = arch_label, None, []
    with open(path, errors="replace") as f:
        for line in f:
            m = ARCH.search(line)
            if m and not arch_label:
                arch = m.group(1)
            m = FUNCTION.search(line)
            if m:
                current = functions.setdefault((arch or "?", m.group(1)), ([], {}))
                pending = []
                continue
            if current is None:
                continue
            m = LABEL.match(line)
            if m:
                pending.append(m.group(1))
                continue
            m = INSTR.match(line)
            if m:
                instr = Instr(int(m.group(1), 16), m.group(2))
                current[0].append(instr)
                for label in pending:
                    current[1][label] = instr.addr
                pending = []
    return functions


def branch_target(instr, labels):
    if not instr.op.startswith(("BRA", "JMP")):
        return None
    m = TARGET_LABEL.search(instr.operands)
    if m:
        return labels.get(m.group(1))
    m = TARGET_ADDR.findall(instr.operands)
    return int(m[-1], 16) if m else None


def find_loop(instrs, labels):
    """(first address, last address, number of loops) of the chosen loop, or None."""
    loops = []
    for i in instrs:
        t = branch_target(i, labels)
        if t is not None and t < i.addr:
            loops.append((t, i.addr))
    inner = [a for a in loops if not any(b != a and a[0] <= b[0] and b[1] <= a[1] for b in loops)]
    if not inner:
        return None
    size = lambda lp: sum(1 for i in instrs if lp[0] <= i.addr <= lp[1])
    best = max(inner, key=size)
    return best[0], best[1], len(loops)


def demangle(names):
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True, check=False)
    lines = out.stdout.splitlines()
    if out.returncode != 0 or len(lines) != len(names):
        return {n: n for n in names}
    return dict(zip(names, lines))


def short_name(demangled):
    """'void k_softmax<false, 1>(Timing*, ...)' -> 'k_softmax<false;1>' (no commas: a CSV field)."""
    name = demangled.split("(", 1)[0]
    name = re.sub(r"^void\s+", "", name)
    return re.sub(r"\s+", "", name).replace(",", ";")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dumps", nargs="+", help="ARCH=FILE or FILE (cuobjdump -sass output)")
    ap.add_argument("--match", default="", help="regex on the kernel name")
    ap.add_argument("--elements", type=int, default=128, help="per_element divisor (default 128)")
    ap.add_argument("--pipes", help="write the per-pipe totals here")
    ap.add_argument("--listing", help="write the loop bodies' SASS here")
    args = ap.parse_args()

    parsed = collections.OrderedDict()
    for spec in args.dumps:
        label, path = spec.split("=", 1) if "=" in spec else ("", spec)
        parsed.update(parse(path, label))
    names = demangle(sorted({name for _, name in parsed}))
    match = re.compile(args.match)

    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["arch", "kernel", "opcode", "count", "per_element"])
    pipe_rows, listing = [], []
    found = 0
    for (arch, mangled), (instrs, labels) in parsed.items():
        kernel = short_name(names.get(mangled, mangled))
        if not match.search(kernel) and not match.search(mangled):
            continue
        found += 1
        loop = find_loop(instrs, labels)
        if loop:
            body = [i for i in instrs if loop[0] <= i.addr <= loop[1]]
            outside = [i for i in instrs if not loop[0] <= i.addr <= loop[1]]
            head = (f"== {arch} {kernel}: loop /*{loop[0]:04x}*/../*{loop[1]:04x}*/, {len(body)} instructions "
                    f"(the largest innermost loop; {loop[2]} loop(s) in all)")
        else:
            body, outside = instrs, []
            head = f"== {arch} {kernel}: NO LOOP FOUND, the whole function ({len(body)} instructions)"
            sys.stdout.write(f"# {arch} {kernel}: no backward branch; the counts are of the whole function "
                             f"(every opcode below is outside any loop)\n")
        counts = collections.Counter(normalize(i.op) for i in body)
        for op, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            out.writerow([arch, kernel, op, n, f"{n / args.elements:.4f}"])
        pipes = collections.Counter()
        for op, n in counts.items():
            pipes[pipe_of(op)] += n
        for pipe in PIPE_ORDER:
            if pipes[pipe]:
                pipe_rows.append([arch, kernel, pipe, pipes[pipe], f"{pipes[pipe] / args.elements:.4f}"])
        listing.append(head)
        listing.extend(f"  /*{i.addr:04x}*/ {i.text}" for i in body)
        others = sorted({op for op in counts if pipe_of(op) == "other"})
        if others:
            listing.append("  opcodes with no pipe assigned: " + " ".join(others))
        if outside:
            rest = collections.Counter(normalize(i.op) for i in outside)
            listing.append(f"  outside the loop: {len(outside)} instructions: "
                           + ", ".join(f"{op} {n}" for op, n in sorted(rest.items(), key=lambda kv: (-kv[1], kv[0]))))
        listing.append("")

    if args.pipes:
        with open(args.pipes, "w") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["arch", "kernel", "pipe", "count", "per_element"])
            w.writerows(pipe_rows)
    if args.listing:
        with open(args.listing, "w") as f:
            f.write("\n".join(listing) + "\n")
    if not found:
        sys.exit(f"sass_counts.py: no kernel matched {args.match!r} in {', '.join(args.dumps)}")


if __name__ == "__main__":
    main()
