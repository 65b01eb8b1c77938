#!/usr/bin/env python3
"""Each GPC's pace, from per-CTA logs of a 132-CTA grid (one CTA per SM).

A 132-CTA grid fills the GPCs in CTA blocks of 16, 16, 16, 16, 16, 16, 18, 18 (h100.yaml and
h200.yaml, `gpc_tpcs`), in L2 partitions 0, 1, 1, 1, 0, 0, 0, 1 (`dies.of_gpc`). Reads:
  - a tile log (gemm_sm90_twin --tile-log, bwsim run gemm_sm90 --tile-log: cta,j,start_cycles):
    per GPC, the mean cycles from a CTA's first tile to its second, then per tile over the run;
  - a CTA log (h100_stage_ring.cu --cta-log: parts,stages,launch,cta,smid,cycles_per_kblock): per
    ring and launch, each GPC's mean cycles per k-block.
Prints each GPC's figures and the slowest GPC's over the fastest's.
Usage: gpc_pace.py LOG.csv [LOG.csv ...]
"""
import csv
import statistics
import sys
from collections import defaultdict

BLOCKS = [(0, 16), (16, 32), (32, 48), (48, 64), (64, 80), (80, 96), (96, 114), (114, 132)]
PARTITION = [0, 1, 1, 1, 0, 0, 0, 1]


def rows_of(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith('#')))


def per_gpc(value_of_cta):
    return [statistics.mean(value_of_cta[c] for c in range(lo, hi)) for lo, hi in BLOCKS]


def show(label, means):
    cells = ' '.join(f'G{g}(p{PARTITION[g]}) {m:.0f}' for g, m in enumerate(means))
    print(f'  {label}: {cells}; slowest / fastest {max(means) / min(means):.3f}')


def tile_log(rows):
    start = {(int(r['cta']), int(r['j'])): int(r['start_cycles']) for r in rows}
    last = defaultdict(int)
    for cta, j in start:
        last[cta] = max(last[cta], j)
    show('first tile', per_gpc({c: start[(c, 1)] - start[(c, 0)] for c in range(132)}))
    show('per tile over the run', per_gpc({c: (start[(c, last[c])] - start[(c, 0)]) / last[c] for c in range(132)}))


def cta_log(rows):
    runs = defaultdict(dict)
    for r in rows:
        runs[(r['parts'], int(r['stages']), int(r['launch']))][int(r['cta'])] = float(r['cycles_per_kblock'])
    for (parts, stages, launch), per_cta in sorted(runs.items()):
        show(f'ring {parts}, {stages} stages, launch {launch}', per_gpc(per_cta))


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    for path in paths:
        rows = rows_of(path)
        print(path)
        if rows and 'start_cycles' in rows[0]:
            tile_log(rows)
        elif rows and 'cycles_per_kblock' in rows[0]:
            cta_log(rows)
        else:
            print('  neither a tile log nor a CTA log')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
