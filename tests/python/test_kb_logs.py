"""tools/calibration/kb_joins.py and kb_drift.py on hand-made k-block logs: the gaps between GPC-mates'
requests for one box and the drift of a pair's issue times, derived by hand."""
import importlib.util
import os
import sys
import unittest

SOURCE = os.environ.get("BWSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CALIBRATION = os.path.join(SOURCE, "tools", "calibration")
sys.path.insert(0, CALIBRATION)  # both import tile_drift


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(CALIBRATION, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kb_joins, kb_drift = load("kb_joins"), load("kb_drift")


def row(cta, smid, j, m, n, kb, cycle):
    return {"cta": str(cta), "smid": str(smid), "j": str(j), "tile": "0", "m": str(m), "n": str(n), "kb": str(kb),
            "start_cycles": str(cycle)}


class KbJoinsTest(unittest.TestCase):
    def test_gaps_count_from_the_latest_earlier_issue_in_the_gpc_and_anywhere(self):
        # B box (n 0, kb 0): SM 0 at 0 and SM 1 at 100 (GPC 0), SM 2 at 3000 (GPC 1), SM 1 again at 3100
        rows = [row(0, 0, 0, 0, 0, 0, 0), row(1, 1, 0, 1, 0, 0, 100), row(2, 2, 0, 2, 0, 0, 3000),
                row(1, 1, 1, 3, 0, 0, 3100)]
        gpc_of = {0: 0, 1: 0, 2: 1}
        self.assertEqual(sorted(kb_joins.gaps(rows, gpc_of, "b"), key=str),
                         sorted([(None, None), (100.0, 100.0), (None, 2900.0), (3000.0, 100.0)], key=str))
        in_gpc, first = kb_joins.shares([None, 100.0, None, 3000.0])
        self.assertEqual(in_gpc, [0.25, 0.25, 0.25, 0.5])  # within 250 / 1000 / 2500 / 5000 cycles
        self.assertEqual(first, 0.5)
        # A boxes are the tiles' (m, kb): four different ones, each read once
        self.assertEqual(kb_joins.gaps(rows, gpc_of, "a"), [(None, None)] * 4)


class KbDriftTest(unittest.TestCase):
    def test_a_steady_difference_of_pace_is_the_slope(self):
        # CTA 2 issues k-block k at 110 k, CTA 0 at 100 k: the difference grows by 10 per k-block
        rows = [row(c, c, 0, 0, 0, k, (100 + 5 * c) * k) for c in (0, 2) for k in range(5)]
        ctas = kb_drift.issue_times(rows)
        self.assertEqual(ctas[2], (2, [0.0, 110.0, 220.0, 330.0, 440.0]))
        d = [b - a for a, b in zip(ctas[0][1], ctas[2][1])]
        self.assertAlmostEqual(kb_drift.slope(d), 10.0)


if __name__ == "__main__":
    unittest.main()
