#!/usr/bin/env python3
"""The README's B200 GEMM prediction table: gemm_persistent (bf16, fp32 D, raster auto, swizzle 1)
for the listed shapes, 1-SM and 2-SM, on the B200 config, with the clock a 10 s sustained run
settles at under the board's power limit. Usage: tools/gemm_table.py [BWSIM [SHAPES [HEADER
[FIDELITY]]]] > table.md (SHAPES e.g. 1024x1024x1024,8192x8192x8192; HEADER 0 leaves the header
out; FIDELITY 1 adds bwsim fidelity's uncertainty column, about 80 runs a row)."""
import json
import subprocess
import sys

bwsim = sys.argv[1] if len(sys.argv) > 1 else "build/bwsim"
default_shapes = ["1024x1024x1024", "2048x2048x2048", "4096x4096x4096", "8192x8192x8192", "16384x16384x16384",
                  "8192x8192x1024", "1024x1024x16384"]
shapes = sys.argv[2].split(",") if len(sys.argv) > 2 and sys.argv[2] else default_shapes
header = len(sys.argv) <= 3 or sys.argv[3] != "0"
fidelity = len(sys.argv) > 4 and sys.argv[4] == "1"
config = "sim_configs/b200.yaml"

if header:
    print("| M x N x K | variant | cycles | µs | TFLOP/s | tensor busy | HBM GB/s | L2 hit | L2 busy | die-to-die busy "
          "| wall s | sustained MHz | sustained TFLOP/s |" + (" uncertainty (top value) |" if fidelity else ""))
    print("|---" * (13 + fidelity) + "|")
for shape in shapes:
    m, n, k = shape.split("x")
    for variant in ("1sm", "2sm"):
        args = ["gemm_persistent", "--m", m, "--n", n, "--k", k, "--variant", variant, "--config", config]
        r = json.loads(subprocess.run([bwsim, "run", *args, "--json", "--sustained", "10"], check=True,
                                      capture_output=True, text=True).stdout)
        mem, s = r["memory"], r["power"]["sustained"]
        # the same work in the sustained run's cycles per kernel, at its clock
        sustained_tflops = r["tflops"] * r["cycles"] / s["cycles_per_kernel"] * s["clock_ghz"] / r["power"]["clock_ghz"]
        row = (f"| {shape} | {variant} | {r['cycles']:,} | {r['time_us']:.1f} | {r['tflops']:.0f} "
               f"| {r['tensor_busy_fraction']:.1%} | {mem['hbm_gbytes_per_second']:.0f} | {mem['l2_hit_rate']:.1%} "
               f"| {mem['l2_busy_fraction']:.1%} | {mem['d2d_busy_fraction']:.1%} | {r['wall_seconds']:.2f} "
               f"| {s['clock_ghz'] * 1000:.0f} | {sustained_tflops:.0f} |")
        if fidelity:  # the uncertainty and its H100/E share (last line), the value with the largest effect (first)
            lines = subprocess.run([bwsim, "fidelity", *args, "--no-check-races"], check=True, capture_output=True,
                                   text=True).stdout.strip().splitlines()
            last = lines[-1]
            top = lines[next(i for i, l in enumerate(lines) if l.startswith("value")) + 1].split()
            band = last.split("+-")[1].split()[0].rstrip(";")
            share = last.split("), ")[1].split("%")[0]
            row += f" ±{band} ({share}% H100/E; {top[0]} {top[1]}) |"
        print(row, flush=True)
