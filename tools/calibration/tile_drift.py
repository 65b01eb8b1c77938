#!/usr/bin/env python3
"""How far apart in time a persistent GEMM's CTAs run, from a tile log.

Reads the CSV that `gemm_sm90_twin --tile-log FILE` writes on hardware, or that
`bwsim run gemm_sm90 --tile-log FILE` writes (same columns: cta,smid,j,tile,m,n,start_ns,
start_cycles, times from the first tile's start; of a k-block log, --kb-log 1, each tile's first
k-block), and prints per file:
  - the interval between a CTA's consecutive tile starts (p10 / median / p90, cycles) and the
    spread of the CTAs' mean intervals (min, max, coefficient of variation);
  - for the CTAs that read the same A tile (same m) in the same round of the schedule, how far
    apart they start it (median |difference|, cycles) at a few tile indices j;
  - the time since the previous read of the same A tile (m), per tile start: the share within
    1000 cycles (it can join that read's fill in flight) and within 10000 (an L2 hit unless the
    line was evicted since).
With --fast-set BASE.csv, it compares the SMs' paces instead: the fast set is BASE's SMs whose
mean tile interval is below 0.9 of BASE's median; for BASE and each LOG it prints that set's mean
pace and the other SMs' (intervals over the log's median), the log's own fast set and how much of
BASE's it holds, and the correlation of the SMs' intervals with BASE's.
With --rounds MAP.csv (a GPC map as for --gpc), it prints for each LOG the shares of tile starts
that another CTA starts the same A tile (m) within 10000 cycles of: a CTA of the same round of the
persistent schedule (round = tile // CTAs: those that share the A tile by design), or of another
round (a CTA a round ahead or behind reading it at the same time) in the same GPC or another.
With --rate BYTES, it prints for each LOG the bytes per cycle all SMs receive together when each
moves BYTES per tile, x 100 (the values of {h100,h200}_loads_private.csv: BYTES 1048576, a tile's
64 boxes of 16 KiB).
With --gpc MAP.csv (a GPC map as h200_gpc_map_loads.csv, its "# gpc,G,SMS,smid ..." lines, of the
machine the logs come from), it prints for each LOG the SMs' paces (intervals over the median) GPC
by GPC, mean and standard deviation, leaving out the log's own fast set (below 0.9 of the median).
Usage: tile_drift.py LOG.csv [LOG.csv ...]
       tile_drift.py --fast-set BASE.csv [LOG.csv ...]
       tile_drift.py --rate BYTES LOG.csv [LOG.csv ...]
       tile_drift.py --gpc MAP.csv LOG.csv [LOG.csv ...]
       tile_drift.py --rounds MAP.csv LOG.csv [LOG.csv ...]
"""
import csv
import gzip
import statistics
import sys
from collections import defaultdict


def quantile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def cta_tiles(rows):
    """Tile-log rows (dicts with the CSV's columns) by CTA: cta -> (smid, {j: (cycle, m)})."""
    out = {}
    for r in rows:
        out.setdefault(int(r["cta"]), (int(r["smid"]), {}))[1][int(r["j"])] = (int(r["start_cycles"]), int(r["m"]))
    return out


def tile_times(seq):
    """A CTA's tile start cycles in its order (seq: j -> (cycle, m))."""
    return [seq[j][0] for j in sorted(seq)]


def drift(rows):
    """The figures summarize() prints, from tile-log rows (dicts with the CSV's columns)."""
    starts = {cta: seq for cta, (_, seq) in cta_tiles(rows).items()}  # cta -> j -> (cycle, m)
    intervals, means = [], []
    for seq in starts.values():
        times = tile_times(seq)
        gaps = [b - a for a, b in zip(times, times[1:])]
        intervals += gaps
        if gaps:
            means.append(statistics.mean(gaps))
    intervals.sort()
    out = {"tiles": len(rows), "ctas": len(starts)}
    if intervals:
        out["interval"] = tuple(quantile(intervals, q) for q in (0.1, 0.5, 0.9))
        out["cta_means"] = (min(means), max(means))
        out["cv"] = statistics.pstdev(means) / statistics.mean(means)
    # Readers of one A tile in one round: CTAs whose j-th tiles share m.
    out["same_a_tile"] = {}
    for j in (1, 2, 5, 10, 20, 30):
        by_m = defaultdict(list)
        for seq in starts.values():
            if j in seq:
                by_m[seq[j][1]].append(seq[j][0])
        diffs = [abs(t - ts[0]) for ts in by_m.values() if len(ts) > 1 for t in ts[1:]]
        if diffs:
            out["same_a_tile"][j] = statistics.median(diffs)
    reads = defaultdict(list)
    for seq in starts.values():
        for cycle, m in seq.values():
            reads[m].append(cycle)
    since = []
    for times in reads.values():
        times.sort()
        since += [b - a for a, b in zip(times, times[1:])]
    if since:
        out["reread_within"] = (sum(1 for s in since if s < 1000) / len(since),
                                sum(1 for s in since if s < 10000) / len(since))
    return out


def sm_paces(rows):
    """Each SM's mean interval between its CTA's consecutive tile starts (CTAs of 2+ tiles)."""
    out = {}
    for sm, seq in cta_tiles(rows).values():
        times = tile_times(seq)
        if len(times) > 1:
            out[sm] = (times[-1] - times[0]) / (len(times) - 1)
    return out


def total_rate(paces, tile_bytes):
    """The bytes per cycle all SMs receive together when each moves `tile_bytes` per tile."""
    return sum(tile_bytes / v for v in paces.values())


def fast_set(paces, below=0.9):
    """The SMs whose interval is below `below` of the median, sorted."""
    median = statistics.median(paces.values())
    return sorted(s for s, v in paces.items() if v < below * median)


def compare_paces(base, paces):
    """For `paces` against `base` (both sm -> interval): the base fast set's mean pace and the
    other SMs' (over the median), the own fast set's size and overlap, the correlation over the
    SMs both have."""
    fast = fast_set(base)
    median = statistics.median(paces.values())
    own = fast_set(paces)
    common = sorted(set(base) & set(paces))
    x, y = [base[s] for s in common], [paces[s] for s in common]
    mx, my = statistics.mean(x), statistics.mean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx, syy = sum((a - mx) ** 2 for a in x), sum((b - my) ** 2 for b in y)
    in_fast = [paces[s] / median for s in fast if s in paces]
    return {"fast_pace": statistics.mean(in_fast) if in_fast else float("nan"),
            "other_pace": statistics.mean(v / median for s, v in paces.items() if s not in fast),
            "own_fast": len(own), "overlap": len(set(own) & set(fast)),
            "corr": sxy / (sxx * syy) ** 0.5 if sxx and syy else 0.0}


def read_gpc_map(path):
    """smid -> GPC from a GPC map's "# gpc,G,SMS,smid smid ..." lines. The probe finds GPC 0's four
    loose TPCs as groups 8-11 of 2 SMs each (the cluster probe cannot join them to GPC 0); they are
    GPC 0's, 8 + 8 SMs as the configs' sm.gpc_tpcs count them."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("# gpc,"):
                _, gpc, _, sms = line.strip().split(",", 3)
                out.update((int(s), int(gpc) if int(gpc) < 8 else 0) for s in sms.split())
    return out


def gpc_paces(gpc_of, paces):
    """GPC -> (mean, standard deviation, SMs) of its SMs' intervals over the median, the fast set
    (below 0.9 of the median) left out."""
    median = statistics.median(paces.values())
    fast = set(fast_set(paces))
    by_gpc = defaultdict(list)
    for s, v in paces.items():
        if s not in fast:
            by_gpc[gpc_of.get(s, -1)].append(v / median)
    return {g: (statistics.mean(v), statistics.pstdev(v), len(v)) for g, v in sorted(by_gpc.items())}


def reread_rounds(rows, gpc_of, within=10000):
    """Shares of the tile starts that another CTA's start of the same A tile (m) lies within
    `within` cycles of, before or after: one of the same round of the persistent schedule (round =
    tile // CTAs), of another round in the same GPC, of another round in another GPC (a start can
    count in more than one)."""
    grid = len(cta_tiles(rows))
    by_m = defaultdict(list)
    for r in rows:
        by_m[int(r["m"])].append((int(r["start_cycles"]), int(r["tile"]) // grid, gpc_of.get(int(r["smid"])), int(r["cta"])))
    keys = ("same round", "other round, same GPC", "other round, other GPC")
    counts = dict.fromkeys(keys, 0)
    for starts in by_m.values():
        starts.sort()
        for i, (cycle, rnd, gpc, cta) in enumerate(starts):
            near = set()
            for other in starts[max(0, i - 8):i + 9]:  # neighbours in time; a tile has at most a few readers near
                o_cycle, o_rnd, o_gpc, o_cta = other
                if o_cta == cta or abs(o_cycle - cycle) >= within:
                    continue
                near.add(keys[0] if o_rnd == rnd else keys[1] if o_gpc == gpc else keys[2])
            for k in near:
                counts[k] += 1
    return {k: v / len(rows) for k, v in counts.items()}


def read_csv(path):
    """A CSV's rows as dicts by its header, its "#" comment lines skipped (gzip-compressed if PATH
    ends in .gz)."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def first_kb(rows):
    """Tile-log rows; of a k-block log (a kb column: --kb-log 1) each tile's first k-block's."""
    return [r for r in rows if int(r.get("kb", 0)) == 0]


def read_rows(path):
    """A tile log's rows, each tile's first k-block's of a k-block log (first_kb)."""
    return first_kb(read_csv(path))


def summarize_paces(base_path, paths):
    base = sm_paces(read_rows(base_path))
    fast = fast_set(base)
    print(f"{base_path}: fast set {len(fast)} SMs: {' '.join(map(str, fast))}")
    for p in [base_path] + paths:
        c = compare_paces(base, sm_paces(read_rows(p)))
        print(f"  {p}: fast set pace {c['fast_pace']:.3f}, others {c['other_pace']:.3f}; own fast set "
              f"{c['own_fast']} SMs ({c['overlap']} of the base's); correlation with the base {c['corr']:.2f}")


def summarize(path):
    d = drift(read_rows(path))
    print(f"{path}: {d['tiles']} tiles over {d['ctas']} CTAs")
    if "interval" in d:
        p10, p50, p90 = d["interval"]
        lo, hi = d["cta_means"]
        print(f"  tile interval p10 {p10} median {p50} p90 {p90}; CTA means {lo:.0f}..{hi:.0f} (cv {d['cv']:.3f})")
    if d["same_a_tile"]:
        line = ", ".join(f"j={j}: {v:.0f}" for j, v in d["same_a_tile"].items())
        print("  same A tile, same round, |start difference| median: " + line)
    if "reread_within" in d:
        near, warm = d["reread_within"]
        print(f"  A tile read again: {near:.0%} within 1000 cycles of its previous read, {warm:.0%} within 10000")


if __name__ == "__main__":
    if len(sys.argv) < 2 or (sys.argv[1] in ("--fast-set", "--rate", "--gpc", "--rounds") and len(sys.argv) < 3):
        sys.exit(__doc__)
    if sys.argv[1] == "--fast-set":
        summarize_paces(sys.argv[2], sys.argv[3:])
        sys.exit(0)
    if sys.argv[1] == "--gpc":
        gpc_of = read_gpc_map(sys.argv[2])
        for p in sys.argv[3:]:
            by_gpc = gpc_paces(gpc_of, sm_paces(read_rows(p)))
            print(f"{p}: " + "  ".join(f"GPC {g}: {m:.3f} sd {sd:.3f} ({n})" for g, (m, sd, n) in by_gpc.items()))
        sys.exit(0)
    if sys.argv[1] == "--rounds":
        gpc_of = read_gpc_map(sys.argv[2])
        for p in sys.argv[3:]:
            shares = reread_rounds(read_rows(p), gpc_of)
            print(f"{p}: tile starts with another CTA's start of their A tile within 10000 cycles: "
                  + ", ".join(f"{k} {v:.0%}" for k, v in shares.items()))
        sys.exit(0)
    if sys.argv[1] == "--rate":
        for p in sys.argv[3:]:
            paces = sm_paces(read_rows(p))
            print(f"{p}: {len(paces)} SMs, {round(100 * total_rate(paces, int(sys.argv[2])))} (B/clk x 100)")
        sys.exit(0)
    for p in sys.argv[1:]:
        summarize(p)
