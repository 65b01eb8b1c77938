#!/usr/bin/env python3
"""How each L2 partition's SMs run in a persistent GEMM, from tile logs.

Reads tile logs (`gemm_sm90_twin --tile-log` on hardware, `bwsim run gemm_sm90 --tile-log` in the
model: cta,smid,j,tile,m,n,start_ns,start_cycles) and a map of which SM reads through which L2
partition, and prints per log and partition: the median start of tiles 1 and 2 (cycles; tile 1
starts about when tile 0's loads are done, so this is the first tiles' pace) and the mean of the
partition's CTAs' paces over the run (each CTA's mean interval between tile starts from tile 1 to
its last, over the median CTA's: above 1 is slower). With --gpcs, the same per GPC as well. With
--kb (k-block logs: `--kb-log 1`, a kb column), per partition and tile j = 0, 1, 2 instead: the
median issue of k-blocks 8 and 127 and the cycles per k-block between them (the steady pace once
the stages are full).

MAP is either a silicon partition map (the "# sm,S,gpc,G,partition,P,..." lines that
`h100_l2_partitions map` prints, e.g. h200_partition_paces_map.txt of the same chip) or
model:CONFIG (a bwsim config: its SMs GPC by GPC in sm.gpc_tpcs order, two per TPC, each GPC in the
partition dies.of_gpc gives it).
Usage: partition_paces.py [--gpcs | --kb] MAP LOG.csv[.gz] [LOG.csv[.gz] ...]
"""
import re
import statistics
import sys
from collections import defaultdict

from tile_drift import first_kb, read_csv


def yaml_list(text, key):
    match = re.search(rf"^\s*{key}:\s*\[([^\]]*)\]", text, re.M)
    if not match:
        sys.exit(f"partition_paces.py: no {key} list in the config")
    return [int(v) for v in match.group(1).split(",")]


def read_map(source):
    """smid -> (gpc, partition)"""
    if source.startswith("model:"):
        text = open(source[len("model:"):]).read()
        of_gpc = yaml_list(text, "of_gpc")
        sms, smid = {}, 0
        for gpc, tpcs in enumerate(yaml_list(text, "gpc_tpcs")):
            for _ in range(2 * tpcs):
                sms[smid] = (gpc, of_gpc[gpc])
                smid += 1
        return sms
    sms = {}
    for line in open(source):
        match = re.match(r"# sm,(\d+),gpc,(-?\d+),partition,(\d+)", line)
        if match:
            sms[int(match.group(1))] = (int(match.group(2)), int(match.group(3)))
    if not sms:
        sys.exit(f"partition_paces.py: no '# sm,...,partition,...' lines in {source}")
    return sms


def starts_by_cta(rows):
    """cta -> ({j: start cycle}, smid) of a tile log's rows (dicts of its columns; of a k-block log,
    each tile's k-block 0)"""
    starts, sm_of = defaultdict(dict), {}
    for r in first_kb(rows):
        starts[int(r["cta"])][int(r["j"])] = int(r["start_cycles"])
        sm_of[int(r["cta"])] = int(r["smid"])
    return {cta: (by_j, sm_of[cta]) for cta, by_j in starts.items()}


def paces(rows, sms, group=lambda gpc, partition: partition):
    """group -> (CTAs, median start of tile 1, of tile 2, mean pace): the CTAs grouped by
    group(gpc, partition) of their SM; a CTA's pace is its mean interval between tile starts from
    tile 1 to its last over the median CTA's (CTAs with fewer than three tiles have none)."""
    by_cta = starts_by_cta(rows)
    interval = {cta: (by_j[max(by_j)] - by_j[1]) / (max(by_j) - 1)
                for cta, (by_j, _) in by_cta.items() if max(by_j) > 1 and 1 in by_j}
    median = statistics.median(interval.values())
    groups = defaultdict(list)
    for cta, (_, smid) in by_cta.items():
        groups[group(*sms[smid])].append(cta)
    out = {}
    for key, ctas in sorted(groups.items()):
        tile = [statistics.median(by_cta[c][0][j] for c in ctas if j in by_cta[c][0]) for j in (1, 2)]
        own = [interval[c] / median for c in ctas if c in interval]
        out[key] = (len(ctas), tile[0], tile[1], statistics.mean(own) if own else float("nan"))
    return out


def kb_paces(rows, sms, first=8, last=127, tiles=(0, 1, 2)):
    """(j, partition) -> (median issue of k-block `first`, of `last`, cycles per k-block between)"""
    issues = defaultdict(list)
    for r in rows:
        j, kb = int(r["j"]), int(r["kb"])
        if j in tiles and kb in (first, last):
            issues[(j, kb, sms[int(r["smid"])][1])].append(int(r["start_cycles"]))
    out = {}
    for j in tiles:
        for p in (0, 1):
            a, b = statistics.median(issues[(j, first, p)]), statistics.median(issues[(j, last, p)])
            out[(j, p)] = (a, b, (b - a) / (last - first))
    return out


def main(argv):
    gpcs, kb = "--gpcs" in argv, "--kb" in argv
    argv = [a for a in argv if a not in ("--gpcs", "--kb")]
    if len(argv) < 2:
        sys.exit(__doc__)
    sms = read_map(argv[0])
    for path in argv[1:]:
        rows = read_csv(path)
        if kb:
            print(f"{path.split('/')[-1]}: k-blocks 8 and 127 issued at, and cycles per k-block between them:")
            for (j, p), (a, b, per) in kb_paces(rows, sms).items():
                print(f"  tile {j}, partition {p}: {a:.0f} / {b:.0f}, {per:.1f}")
            continue
        parts = paces(rows, sms)
        print(f"{path.split('/')[-1]}: " + "; ".join(
            f"partition {p}: {n} CTAs, tiles 1 / 2 start {t1:.0f} / {t2:.0f}, pace {pace:.3f}"
            for p, (n, t1, t2, pace) in parts.items()))
        if gpcs:
            for (g, p), (n, t1, t2, pace) in paces(rows, sms, group=lambda gpc, part: (gpc, part)).items():
                print(f"  GPC {g} (partition {p}, {n} CTAs): tiles 1 / 2 start {t1:.0f} / {t2:.0f}, pace {pace:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
