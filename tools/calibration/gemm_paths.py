#!/usr/bin/env python3
"""Summarizes <tag>_gemm_sm90_paths.csv (run_gemm_paths.sh): per configuration, the median over
CTAs of the producer's and of each consumer warpgroup's mean cycles from a wait's return to the
instruction it gates (the k-block loops' own code).
Usage: gemm_paths.py PATHS.csv
"""
import statistics
import sys
from collections import defaultdict

from tile_drift import read_csv

if len(sys.argv) != 2:
    sys.exit(__doc__)
rows = defaultdict(list)
for r in read_csv(sys.argv[1]):
    rows[r["config"]].append(r)
print(f"{'configuration':24} {'CTAs':>5} {'producer':>9} {'WG0':>7} {'WG1':>7}")
for config, ctas in rows.items():
    def med(column):
        values = [float(r[column]) for r in ctas if float(r[column]) > 0]
        return f"{statistics.median(values):.1f}" if values else "-"
    print(f"{config:24} {len(ctas):>5} {med('producer_cycles'):>9} {med('wg0_cycles'):>7} {med('wg1_cycles'):>7}")
