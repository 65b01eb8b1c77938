#!/usr/bin/env python3
"""Sweeps a GEMM's pipeline stages x tile widths with bwsim and plots TFLOP/s.

    PYTHONPATH=build/python python3 examples/sweep.py --out sweep.png
    PYTHONPATH=build/python python3 examples/sweep.py --kernel gemm --m 2048 --n 2048 --k 2048 --stages 2,4
"""
import argparse

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt

import bwsim


def numbers(text):
    return [int(v) for v in text.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", default="gemm_persistent", help="a GEMM kernel of bwsim.kernels()")
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--stages", type=numbers, default=[2, 3, 4, 6], help="comma-separated")
    ap.add_argument("--tile-n", type=numbers, default=[64, 128, 256], help="comma-separated")
    ap.add_argument("--config", default="", help="config YAML (default: the B200's)")
    ap.add_argument("--out", default="sweep.png")
    args = ap.parse_args()

    fig, ax = plt.subplots(figsize=(6, 4))
    for tile_n in args.tile_n:
        tflops = []
        for stages in args.stages:
            r = bwsim.run(args.kernel, config=args.config, m=args.m, n=args.n, k=args.k, stages=stages, tile_n=tile_n)
            tflops.append(r["summary"]["tflops"])
            print(f"tile-n {tile_n:4d}  stages {stages:2d}  {r['summary']['cycles']:>10,} cycles  {tflops[-1]:8.1f} TFLOP/s")
        ax.plot(args.stages, tflops, marker="o", label=f"tile N = {tile_n}")
    ax.set_xticks(args.stages)
    ax.set_xlabel("mainloop SMEM stages")
    ax.set_ylabel("TFLOP/s (config clock)")
    ax.set_title(f"{args.kernel} {args.m}x{args.n}x{args.k} bf16")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
