#!/usr/bin/env python3
"""Where a GEMM's time goes, tile by tile: compares --phase-log files of gemm_sm90_twin.cu (silicon)
and bwsim run gemm_sm90 (the model), each a row per consumer warpgroup's tile with its CTA's start
and the tile's mainloop start, mainloop end and epilogue end, in cycles from the launch's first CTA
start. Prints, per file, the means over tiles of:
  start     first tile's mainloop start - CTA start (prologue: barrier init, setmaxnreg)
  ml_first  the first tile's mainloop (its pipeline fills from empty)
  ml_next   later tiles' mainloops (the producer ran ahead during the epilogue)
  epi       epilogue (mainloop end to the last TMA store's commit)
  gap       epilogue end to the warpgroup's next mainloop start (ping-pong: the turn wait)
  end       the last epilogue end over all warpgroups
Usage: phase_log.py FILE [FILE ...]
"""
import csv
import statistics
import sys


def load(path):
    with open(path) as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    by_wg = {}
    for r in rows:
        v = {k: int(float(r[k])) for k in r}
        by_wg.setdefault((v["cta"], v["wg"]), []).append(v)
    for tiles in by_wg.values():
        tiles.sort(key=lambda t: t["j"])
    return by_wg


def mean(values):
    return statistics.mean(values) if values else float("nan")


def summary(by_wg):
    start, ml_first, ml_next, epi, gap, end = [], [], [], [], [], 0
    for tiles in by_wg.values():
        start.append(tiles[0]["ml_start"] - tiles[0]["cta_start"])
        for i, t in enumerate(tiles):
            (ml_first if i == 0 else ml_next).append(t["ml_end"] - t["ml_start"])
            epi.append(t["epi_end"] - t["ml_end"])
            if i + 1 < len(tiles):
                gap.append(tiles[i + 1]["ml_start"] - t["epi_end"])
            end = max(end, t["epi_end"])
    return {"start": mean(start), "ml_first": mean(ml_first), "ml_next": mean(ml_next), "epi": mean(epi),
            "gap": mean(gap), "end": end, "tiles": len(ml_first) + len(ml_next)}


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 1
    keys = ["start", "ml_first", "ml_next", "epi", "gap", "end", "tiles"]
    print("file," + ",".join(keys))
    for path in sys.argv[1:]:
        s = summary(load(path))
        print(path + "," + ",".join(f"{s[k]:.0f}" for k in keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
