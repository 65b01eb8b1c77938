#!/usr/bin/env python3
"""The README's fmha_bwd prediction table: head dims 64/128, causal and not, seqlen 1k..16k at
32k tokens and 16 heads, one CTA per key tile and (head dim 128) CTA pairs, on the B200 config.
Usage: tools/fmha_bwd_table.py [BWSIM [HEADDIMS [HEADER]]] > table.md (HEADDIMS e.g. 64,128;
HEADER 0 leaves the header out, to run head dims in parallel and join the rows)."""
import json
import subprocess
import sys

bwsim = sys.argv[1] if len(sys.argv) > 1 else "build/bwsim"
head_dims = [int(d) for d in sys.argv[2].split(",")] if len(sys.argv) > 2 else [64, 128]
if len(sys.argv) <= 3 or sys.argv[3] != "0":
    print("| head dim | causal | seqlen | batch x heads | CTAs | cycles (pre + main + post) | TFLOP/s | tensor | MUFU "
          "| FMA | L2 reduce-add | L2 link | bound by | sustained MHz | sustained TFLOP/s | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")

for d in head_dims:
    for causal in (0, 1):
        for group in (1,) if d == 64 else (1, 2):
            for seqlen in (1024, 2048, 4096, 8192, 16384):
                batch = 32768 // seqlen
                out = subprocess.run([bwsim, "run", "fmha_bwd", "--batch", str(batch), "--heads", "16", "--seqlen",
                                      str(seqlen), "--headdim", str(d), "--causal", str(causal), "--cta-group",
                                      str(group), "--json", "--no-check-races"],
                                     check=True, capture_output=True, text=True).stdout
                r = json.loads(out)
                # Busy shares of the main kernel's cycles.
                busy = {"tensor": r["tensor_busy_fraction"], "MUFU": r["mufu_busy_fraction"],
                        "L2 link": r["memory"]["l2_busy_fraction"], "FMA": r["fma_busy_fraction"]}
                bound = max(busy, key=busy.get)
                s = r["power"]["sustained"]
                # The main kernel at the clock its power settles at, with the pre- and
                # post-kernels' cycles beside it (their energy is not in the power model's run).
                sustained_cycles = s["cycles_per_kernel"] + r["pre_cycles"] + r["post_cycles"]
                sustained_tflops = r["flops"] / (sustained_cycles / (s["clock_ghz"] * 1e9)) / 1e12
                print(f"| {d} | {'yes' if causal else 'no'} | {seqlen} | {batch} x 16 | {'pair' if group == 2 else 1} "
                      f"| {r['total_cycles']:,} ({r['pre_cycles']:,} + {r['main_cycles']:,} + {r['post_cycles']:,}) "
                      f"| {r['tflops']:.0f} | {busy['tensor']:.1%} | {busy['MUFU']:.1%} | {busy['FMA']:.1%} "
                      f"| {r['l2_reduce_bytes'] / 2**30:.2f} GiB | {busy['L2 link']:.1%} | {bound} "
                      f"| {s['clock_ghz'] * 1000:.0f} | {sustained_tflops:.0f} | {r['wall_seconds']:.1f} |", flush=True)
