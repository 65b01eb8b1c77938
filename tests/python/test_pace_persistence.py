"""tools/calibration/pace_persistence.py on hand-made paces: the partition split and the pair
correlations it prints, derived by hand."""
import importlib.util
import os
import sys
import unittest

SOURCE = os.environ.get("BWSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CALIBRATION = os.path.join(SOURCE, "tools", "calibration")
sys.path.insert(0, CALIBRATION)  # pace_persistence imports tile_drift
spec = importlib.util.spec_from_file_location("pace_persistence", os.path.join(CALIBRATION, "pace_persistence.py"))
pace_persistence = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pace_persistence)


class PacePersistenceTest(unittest.TestCase):
    def test_partition_split_is_partition_0_less_the_other(self):
        # GPCs {0, 4, 5, 6} at 1.1, 1.0, 1.0, 1.0 (mean 1.025); {1, 2, 3, 7} at 0.9, 1.0, 1.0, 1.1 (1.0)
        means = {0: 1.1, 1: 0.9, 2: 1.0, 3: 1.0, 4: 1.0, 5: 1.0, 6: 1.0, 7: 1.1}
        self.assertAlmostEqual(pace_persistence.partition_split(means), 0.025)

    def test_pairs_are_grouped_by_what_they_share(self):
        a = {1: 100.0, 2: 110.0, 3: 120.0}
        reversed_a = {1: 120.0, 2: 110.0, 3: 100.0}
        launches = {("loads", 1, 0, 0): a, ("loads", 1, 2, 0): dict(a), ("loads", 2, 1, 1): reversed_a,
                    ("gemm", 1, 2, -1): a}
        kinds = pace_persistence.pair_correlations(launches)
        # no SM is below 0.9 of a median of 110, so all three count; the GEMM pairs with nothing
        self.assertEqual(sorted(kinds), ["loads, other A copy, two processes", "loads, same A copy, one process"])
        self.assertAlmostEqual(kinds["loads, same A copy, one process"][0], 1.0)
        self.assertEqual(len(kinds["loads, other A copy, two processes"]), 2)
        for value in kinds["loads, other A copy, two processes"]:
            self.assertAlmostEqual(value, -1.0)


if __name__ == "__main__":
    unittest.main()
