#!/usr/bin/env python3
"""The sa_tma2dmcast rows of b200_published.csv from SemiAnalysis's
tma2dmcast_throughput/tma2dmcast_sweep_results.csv (github.com/SemiAnalysisAI/microbench-blackwell,
HEAD 9a068d8): for each mode, cluster size C, sharing group S and box of 128 fp32 x H rows (4, 8,
boxes of 8, 16, 32 and 56 KiB (H = 16, 32, 64, 112)), ncu's SM cycles of the whole run over the loop's
iterations = the cycles of one iteration.

Iterations: every CTA loads 4 boxes per iteration; an iteration strides over all groups' rows, so
iterations = 2 GiB // (4 H (x C for no_sharing) rows x groups x 512 B), groups = CTAs / S (CTAs =
148 // S x S). The published tma_instructions column is checked against 4 x CTAs x iterations.

Usage: sa_mcast_rows.py tma2dmcast_sweep_results.csv > rows.csv
"""
import csv
import sys

NAMES = {'0': 'implicit_l2_intra', '1': 'explicit_mcast', '2': 'no_sharing', '3': 'implicit_l2_cross'}
for x in csv.DictReader(open(sys.argv[1])):
    tile = int(x['tile_bytes'])
    if x['smem_width'] != '128' or tile not in (8192, 16384, 32768, 57344):
        continue
    mode, c, s, h = x['mode'], int(x['cluster_size']), int(x['sharing_group']), int(x['smem_height'])
    sharing = s if mode == '3' else c
    ctas = 148 // sharing * sharing
    group_rows = 4 * h * (c if mode == '2' else 1)
    iterations = (2 << 30) // (group_rows * (ctas // sharing) * 512)
    assert int(x['tma_instructions']) == 4 * ctas * iterations, x
    print(f"sa_tma2dmcast_{NAMES[mode]}_c{c}_g{s},{tile},{round(float(x['sm_cycles']) / iterations)}")
