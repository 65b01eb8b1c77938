"""join_window.py [CHIP]: how long another SM's read of an L2 line still joins one in flight, from
CHIP_join_window.csv (ncu: the share of the partners' reads that reached the L2 slices on their
own, per pairing, mode and delay) and CHIP_join_window_arrivals.csv (the share of partner loads
that arrived with their leader's, with the L2 idle and loaded). CHIP: h200 (default) or h100.
Prints each table and the delay at which half the partners' reads join (linear between rows)."""
import csv
import sys

chip = sys.argv[1] if len(sys.argv) > 1 else "h200"


def rows(path):
    return list(csv.DictReader(line for line in open(path) if not line.startswith("#")))


def half_point(points):  # points: (delay, joined share), by delay; where the share crosses 0.5
    for (d0, j0), (d1, j1) in zip(points, points[1:]):
        if j0 >= 0.5 > j1:
            return d0 + (j0 - 0.5) / (j0 - j1) * (d1 - d0)
    return float("nan")


print("ncu: share of the partners' reads joined (sectors reaching the slices, beyond the leaders')")
groups = {}
for r in rows(f"{chip}_join_window.csv"):
    asked = int(r["sms"]) * int(r["loads"]) * int(r["box_bytes"]) // 32
    partner = asked // 2
    reached = int(r["lts__t_sectors_srcunit_tex_op_read"])
    joined = 1 - (reached - partner) / partner
    groups.setdefault((r["mode"], r["pairing"]), []).append((int(r["delay_cycles"]), joined))
for (mode, pairing), points in groups.items():
    shares = " ".join(f"{d}:{j:.2f}" for d, j in points)
    print(f"  {mode:4} {pairing}: {shares}  half at {half_point(points):.0f} cycles")

print("arrivals: share of partner loads arriving with their leader's (gpc pairing)")
by_bg = {}
for r in rows(f"{chip}_join_window_arrivals.csv"):
    by_bg.setdefault(r["background"], []).append(r)
for bg, rs in by_bg.items():
    points = [(int(r["delay_cycles"]), float(r["joined"])) for r in rs if int(r["delay_cycles"]) > 0]
    shares = " ".join(f"{d}:{j:.2f}" for d, j in points)
    print(f"  background {bg}: leader latency {rs[0]['lead_latency_cycles']} cycles; {shares}  "
          f"half at {half_point(points):.0f} cycles")
