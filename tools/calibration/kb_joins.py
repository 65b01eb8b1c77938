#!/usr/bin/env python3
"""kb_joins.py MAP.csv LOG.csv [LOG.csv ...]: how long after a GPC-mate's request for the same box
each request of a k-block tile log comes.

LOG: a tile log with a kb column (gemm_sm90_twin / h100_gemm_loads --kb-log 1, or bwsim run
gemm_sm90 / gemm_sm90_loads --kb-log): one row per k-block issue, cta,smid,j,tile,m,n,kb,start_ns,
start_cycles. MAP: the machine's GPC map (tile_drift.read_gpc_map). For the B box (n, kb) and the A
box (m, kb) of every issue, the time since the latest earlier issue of the same box by an SM of the
same GPC (silicon joins a second reader of a GPC up to about the first one's L2 wait later, 500 to
3000 cycles under load: h200_join_window_arrivals*.csv), and by any SM. Prints a CSV row per LOG and
operand: the share of issues with such an earlier issue within 250 / 1000 / 2500 / 5000 cycles,
the share that are their GPC's first issue of the box, and the shares after any SM's issue. The A
rows mean nothing for logs of loads without A (--parts b) or with private A (--private-a: the box
is the CTA's own, not the tile's (m, kb)).
"""
import sys
from collections import defaultdict

from tile_drift import read_csv, read_gpc_map

LIMITS = (250, 1000, 2500, 5000)


def gaps(rows, gpc_of, operand):
    """For each issue of `operand` ("a": box (m, kb), "b": box (n, kb)): (cycles since the latest
    earlier issue of the box in its GPC or None, the same over all SMs or None)."""
    by_box = defaultdict(list)
    for r in rows:
        key = (int(r["m" if operand == "a" else "n"]), int(r["kb"]))
        by_box[key].append((float(r["start_cycles"]), gpc_of.get(int(r["smid"]), -1)))
    out = []
    for issues in by_box.values():
        issues.sort()
        last_in_gpc = {}
        last_any = None
        for t, g in issues:
            out.append((t - last_in_gpc[g] if g in last_in_gpc else None, t - last_any if last_any is not None else None))
            last_in_gpc[g] = t
            last_any = t
    return out


def shares(values):
    known = sorted(v for v in values if v is not None)
    n = len(values)
    return [sum(1 for v in known if v < limit) / n for limit in LIMITS], (n - len(known)) / n


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    gpc_of = read_gpc_map(argv[1])
    limits = [str(v) for v in LIMITS]
    print(",".join(["log", "operand", "issues"] + [f"gpc_mate_within_{v}" for v in limits] + ["first_in_gpc"] +
                   [f"any_sm_within_{v}" for v in limits]))
    for path in argv[2:]:
        rows = read_csv(path)
        for operand in ("a", "b"):
            g = gaps(rows, gpc_of, operand)
            in_gpc, first = shares([x for x, _ in g])
            anywhere, _ = shares([y for _, y in g])
            print(",".join([path, operand.upper(), str(len(g))] + [f"{v:.3f}" for v in in_gpc] + [f"{first:.3f}"] +
                           [f"{v:.3f}" for v in anywhere]))


if __name__ == "__main__":
    main(sys.argv)
