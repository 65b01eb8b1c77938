#!/usr/bin/env python3
"""The README's fmha_bwd prediction table: head dims 64/128, causal and not, seqlen 1k..16k at
32k tokens and 16 heads, one CTA per key tile and (head dim 128) CTA pairs, on the B200 config.
Usage: tools/fmha_bwd_table.py [BWSIM] > table.md"""
import json
import subprocess
import sys

bwsim = sys.argv[1] if len(sys.argv) > 1 else "build/bwsim"
print("| head dim | causal | seqlen | batch x heads | CTAs | cycles (pre + main + post) | TFLOP/s | tensor | MUFU | FMA "
      "| L2 reduce-add | L2 link | bound by | sustained MHz | sustained TFLOP/s | wall s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for d in (64, 128):
    for causal in (0, 1):
        for group in ((1,) if d == 64 else (1, 2)):
          for seqlen in (1024, 2048, 4096, 8192, 16384):
            batch = 32768 // seqlen
            out = subprocess.run([bwsim, "run", "fmha_bwd", "--batch", str(batch), "--heads", "16", "--seqlen",
                                  str(seqlen), "--headdim", str(d), "--causal", str(causal), "--cta-group",
                                  str(group), "--json", "--no-check-races"], check=True, capture_output=True,
                                 text=True).stdout
            r = json.loads(out)
            busy = {"tensor": r["tensor_busy_fraction"], "MUFU": r["mufu_busy_fraction"],
                    "L2 link": r["memory"]["l2_busy_fraction"], "FMA": r["fma_busy_fraction"]}
            bound = max(busy, key=busy.get)
            s = r["power"]["sustained"]
            print(f"| {d} | {'yes' if causal else 'no'} | {seqlen} | {batch} x 16 | {'pair' if group == 2 else 1} | {r['cycles']:,} ({r['pre_cycles']:,} + "
                  f"{r['main_cycles']:,} + {r['post_cycles']:,}) | {r['tflops']:.0f} | {busy['tensor']:.1%} | "
                  f"{busy['MUFU']:.1%} | {busy['FMA']:.1%} | {r['l2_reduce_bytes'] / 2**30:.2f} GiB | "
                  f"{busy['L2 link']:.1%} | {bound} | {s['clock_ghz'] * 1000:.0f} | "
                  f"{r['flops'] / (s['cycles_per_kernel'] / (s['clock_ghz'] * 1e9)) / 1e12:.0f} | {r['wall_seconds']:.1f} |",
                  flush=True)
