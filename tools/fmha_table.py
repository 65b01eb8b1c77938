#!/usr/bin/env python3
"""The README's fmha forward prediction table: head dims 64, 128 and 192/128 (QK/V), causal and
not, seqlen 1k..32k at 32k tokens and 16 heads, the cutlass and fa4 variants, on the B200 config,
with the clock a 10 s sustained run settles at under the board's power limit. Usage:
tools/fmha_table.py [BWSIM [HEADDIMS [HEADER]]] > table.md (HEADDIMS e.g. 64,128,192; HEADER 0
leaves the header out, to run head dims in parallel and join the rows). The README's "before" and
"uncertainty" columns are not this script's: the first compares with the table it replaces, the
second comes from `bwsim fidelity`."""
import json
import subprocess
import sys

bwsim = sys.argv[1] if len(sys.argv) > 1 else "build/bwsim"
head_dims = [int(d) for d in sys.argv[2].split(",")] if len(sys.argv) > 2 else [64, 128, 192]
if len(sys.argv) <= 3 or sys.argv[3] != "0":
    print("| head dim | causal | seqlen | batch x heads | kernel | cycles | TFLOP/s | tensor | MUFU | FMA | issue "
          "| TMEM port | busiest | wall s | sustained MHz | sustained TFLOP/s |")
    print("|---" * 16 + "|")

for d in head_dims:
    for causal in (0, 1):
        for seqlen in (1024, 2048, 4096, 8192, 16384, 32768):
            for variant in ("cutlass", "fa4"):
                batch = 32768 // seqlen
                args = ["fmha", "--batch", str(batch), "--heads", "16", "--seqlen", str(seqlen), "--headdim", str(d),
                        "--causal", str(causal), "--variant", variant, "--config", "sim_configs/b200.yaml"]
                if d == 192:
                    args += ["--headdim-v", "128"]
                r = json.loads(subprocess.run([bwsim, "run", *args, "--json", "--sustained", "10"], check=True,
                                              capture_output=True, text=True).stdout)
                busy = {"tensor": r["tensor_busy_fraction"], "MUFU": r["mufu_busy_fraction"],
                        "FMA": r["fma_busy_fraction"], "issue": r["issue_busy_fraction"],
                        "TMEM port": r["tmem_port_busy_fraction"]}
                s = r["power"]["sustained"]
                sustained_tflops = r["tflops"] * r["cycles"] / s["cycles_per_kernel"] * s["clock_ghz"] / r["power"]["clock_ghz"]
                dims = "192/128" if d == 192 else str(d)
                print(f"| {dims} | {'yes' if causal else 'no'} | {seqlen} | {batch} x 16 | {variant} | {r['cycles']:,} "
                      f"| {r['tflops']:.0f} | " + " | ".join(f"{v:.1%}" for v in busy.values())
                      + f" | {max(busy, key=busy.get)} | {r['wall_seconds']:.1f} | {s['clock_ghz'] * 1000:.0f} "
                      f"| {sustained_tflops:.0f} |", flush=True)
