"""tools/calibration/tile_drift.py on a hand-made tile log: the figures it prints, derived by hand.

Four CTAs of a grid of 4 over 2 x 6 tiles (raster M: tile t is (t % 2, t // 2)), three tiles each.
Starts: CTA 0 and 1 at 0, 100, 200; CTA 2 at 0, 110, 220; CTA 3 at 10, 130, 250.
"""
import importlib.util
import os
import tempfile
import unittest

SOURCE = os.environ.get("BWSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
spec = importlib.util.spec_from_file_location("tile_drift", os.path.join(SOURCE, "tools", "calibration", "tile_drift.py"))
tile_drift = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tile_drift)

STARTS = {0: (0, 100, 200), 1: (0, 100, 200), 2: (0, 110, 220), 3: (10, 130, 250)}


def rows():
    out = []
    for cta, times in STARTS.items():
        for j, start in enumerate(times):
            t = cta + 4 * j
            out.append({"cta": cta, "smid": cta, "j": j, "tile": t, "m": t % 2, "n": t // 2, "start_ns": start,
                        "start_cycles": start})
    return out


class TileDriftTest(unittest.TestCase):
    def test_figures_match_the_hand_derivation(self):
        d = tile_drift.drift(rows())
        self.assertEqual((d["tiles"], d["ctas"]), (12, 4))
        # intervals 100 x4, 110 x2, 120 x2: p10 = sorted[0], median = sorted[4], p90 = sorted[7]
        self.assertEqual(d["interval"], (100, 110, 120))
        self.assertEqual(d["cta_means"], (100, 120))
        # means 100, 100, 110, 120: mean 107.5, variance 68.75
        self.assertAlmostEqual(d["cv"], 68.75 ** 0.5 / 107.5)
        # j = 1: m 0 read by CTAs 0 and 2 (100, 110), m 1 by CTAs 1 and 3 (100, 130): 10 and 30
        self.assertEqual(d["same_a_tile"], {1: 20, 2: 35})
        self.assertEqual(d["reread_within"], (1.0, 1.0))

    def test_sm_paces_and_the_fast_set(self):
        paces = tile_drift.sm_paces(rows())
        # CTA c runs on SM c: intervals (200 - 0) / 2, the same, (220 - 0) / 2, (250 - 10) / 2
        self.assertEqual(paces, {0: 100, 1: 100, 2: 110, 3: 120})
        # median 105: below 94.5 none; below 1.1 x 105 = 115.5 SMs 0, 1, 2
        # 1000 bytes per tile: 1000 / 100 x 2 + 1000 / 110 + 1000 / 120
        self.assertAlmostEqual(tile_drift.total_rate(paces, 1000), 20 + 1000 / 110 + 1000 / 120)
        self.assertEqual(tile_drift.fast_set(paces), [])
        self.assertEqual(tile_drift.fast_set(paces, below=1.1), [0, 1, 2])
        # base: SM 3 twice as fast as the rest (median 100: fast set [3]); against the log above
        c = tile_drift.compare_paces({0: 100, 1: 100, 2: 100, 3: 50}, paces)
        self.assertAlmostEqual(c["fast_pace"], 120 / 105)
        self.assertAlmostEqual(c["other_pace"], (100 + 100 + 110) / 3 / 105)
        self.assertEqual((c["own_fast"], c["overlap"]), (0, 0))
        # x = (100, 100, 100, 50) mean 87.5, y = (100, 100, 110, 120) mean 107.5:
        # sxy = (12.5)(-7.5) x 2 + (12.5)(2.5) + (-37.5)(12.5) = -625
        # sxx = 3 x 156.25 + 1406.25 = 1875, syy = 56.25 x 2 + 6.25 + 156.25 = 275
        self.assertAlmostEqual(c["corr"], -625 / (1875 * 275) ** 0.5)

    def test_gpc_map_folds_the_loose_tpcs_into_gpc_0_and_paces_go_by_gpc(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "map.csv")
            with open(path, "w") as f:  # GPC 8: one of GPC 0's loose TPCs, probed as its own group
                f.write("# date,x\n# gpc,0,2,0 1\n# gpc,1,2,2 3\n# gpc,8,2,4 5\n")
            gpc_of = tile_drift.read_gpc_map(path)
        self.assertEqual(gpc_of, {0: 0, 1: 0, 2: 1, 3: 1, 4: 0, 5: 0})
        # median of 100, 100, 110, 120, 60, 100 is 100; SM 4 (60) is the fast set (below 90), left out
        by_gpc = tile_drift.gpc_paces(gpc_of, {0: 100, 1: 100, 2: 110, 3: 120, 4: 60, 5: 100})
        self.assertEqual(set(by_gpc), {0, 1})
        self.assertEqual(by_gpc[0], (1.0, 0.0, 3))
        mean, sd, n = by_gpc[1]
        self.assertAlmostEqual(mean, 1.15)
        self.assertAlmostEqual(sd, 0.05)
        self.assertEqual(n, 2)

    def test_a_k_block_log_is_read_by_each_tiles_first_k_block(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "kb.csv")
            with open(path, "w") as f:
                f.write("# clock_mhz,1000\ncta,smid,j,tile,m,n,kb,start_ns,start_cycles\n")
                for j, t0 in enumerate((0, 500)):
                    for kb in range(3):
                        f.write(f"0,0,{j},{4 * j},{j},0,{kb},{t0 + 100 * kb},{t0 + 100 * kb}\n")
            rows = tile_drift.read_rows(path)
        self.assertEqual([(r["j"], r["start_cycles"]) for r in rows], [("0", "0"), ("1", "500")])
        self.assertEqual(tile_drift.sm_paces(rows), {0: 500})


if __name__ == "__main__":
    unittest.main()
