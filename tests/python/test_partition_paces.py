"""tools/calibration/partition_paces.py and fabric_rows.py on hand-made inputs: the figures they
print, derived by hand.

Tile log: six CTAs on SMs 0-5, SMs 0-2 in partition 0 (GPC 0), 3-5 in partition 1 (GPC 1), tiles
j = 0..3 starting at 0, then every 100, 100, 130 cycles (CTAs 0-2) and 110, 130, 130 (CTAs 3-5).
"""
import os
import sys
import tempfile
import unittest

SOURCE = os.environ.get("BWSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "tools", "calibration"))  # the scripts, and tile_drift they import

import fabric_rows  # noqa: E402
import partition_paces  # noqa: E402

STEP = {0: 100, 1: 100, 2: 130, 3: 110, 4: 130, 5: 130}
SMS = {0: (0, 0), 1: (0, 0), 2: (0, 0), 3: (1, 1), 4: (1, 1), 5: (1, 1)}


def rows():
    return [{"cta": c, "smid": c, "j": j, "start_cycles": j * step} for c, step in STEP.items() for j in range(4)]


class PartitionPacesTest(unittest.TestCase):
    def test_partitions_start_and_pace_as_derived_by_hand(self):
        parts = partition_paces.paces(rows(), SMS)
        # intervals from tile 1 to 3: 100, 100, 130, 110, 130, 130; median 120
        # partition 0: tile 1 at 100, 100, 130 (median 100; mean 110), tile 2 at 200, 200, 260 (200)
        self.assertEqual(parts[0][:3], (3, 100, 200))
        self.assertAlmostEqual(parts[0][3], (100 + 100 + 130) / 3 / 120)
        # partition 1: tile 1 at 110, 130, 130 (median 130; mean 123.3), tile 2 at 220, 260, 260 (260)
        self.assertEqual(parts[1][:3], (3, 130, 260))
        self.assertAlmostEqual(parts[1][3], (110 + 130 + 130) / 3 / 120)

    def test_a_k_block_log_starts_each_tile_at_its_k_block_0(self):
        kb_rows = [dict(r, kb=kb, start_cycles=r["start_cycles"] + 7 * kb) for r in rows() for kb in (0, 1, 2)]
        self.assertEqual(partition_paces.paces(kb_rows, SMS), partition_paces.paces(rows(), SMS))
        # k-blocks 0 and 2 of tile 1 (first=0, last=2): partition 0 at 100 / 114 (medians of 100, 100,
        # 130 and 114, 114, 144; 7 cycles per k-block)
        self.assertEqual(partition_paces.kb_paces(kb_rows, SMS, first=0, last=2, tiles=(1,))[(1, 0)], (100, 114, 7))

    def test_the_gpc_grouping_keys_by_gpc_and_partition(self):
        gpcs = partition_paces.paces(rows(), SMS, group=lambda gpc, part: (gpc, part))
        self.assertEqual(sorted(gpcs), [(0, 0), (1, 1)])

    def test_maps_from_silicon_lines_and_from_a_config(self):
        with tempfile.TemporaryDirectory() as d:
            silicon = os.path.join(d, "map.txt")
            with open(silicon, "w") as f:
                f.write("# map,reference_sm,0\n# sm,0,gpc,3,partition,0,first_pass_cycles_per_load,316.4\n"
                        "# sm,1,gpc,8,partition,1,first_pass_cycles_per_load,403.2\n")
            self.assertEqual(partition_paces.read_map(silicon), {0: (3, 0), 1: (8, 1)})
            config = os.path.join(d, "chip.yaml")
            with open(config, "w") as f:
                f.write("sm:\n  gpc_tpcs: [1, 2]\ndies:\n  of_gpc: [1, 0]\n")
            # GPC 0: one TPC (SMs 0, 1) in partition 1; GPC 1: two TPCs (SMs 2-5) in partition 0
            self.assertEqual(partition_paces.read_map("model:" + config),
                             {0: (0, 1), 1: (0, 1), 2: (1, 0), 3: (1, 0), 4: (1, 0), 5: (1, 0)})


class FabricRowsTest(unittest.TestCase):
    def test_each_point_is_the_median_of_its_rounds_in_first_order(self):
        lines = ["# date,x", "row,0,swap,16,1,132,1,1,6842,1975,2212.6", "row,1,oneway,16,1,66,1,1,6770,1978,1118.1",
                 "partition_spans,0,swap,16,66,1,2,66,1,2", "row,0,swap,16,1,132,1,1,6930,1980,2184.5",
                 "row,0,swap,16,1,132,1,1,6900,1980,2200.4"]
        self.assertEqual(fabric_rows.rows(lines), {("swap", 16): 2200, ("oneway", 16): 1118})
        self.assertEqual(list(fabric_rows.rows(lines)), [("swap", 16), ("oneway", 16)])


if __name__ == "__main__":
    unittest.main()
