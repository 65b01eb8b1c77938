"""tools/calibration/l2_slices.py on a hand-made ncu file: the figures it prints, derived by hand.

Two single-line launches (sum 940 over mean 10: 94 slices) and two launches of 4 lines 16 KiB
apart whose busiest slice reads max - min = 512 and 256 sectors beyond the background: 2 and 1
lines of 64 reads x 4 sectors, mean 1.50.
"""
import contextlib
import importlib.util
import io
import os
import tempfile
import unittest

SOURCE = os.environ.get("BWSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
spec = importlib.util.spec_from_file_location("l2_slices", os.path.join(SOURCE, "tools", "calibration", "l2_slices.py"))
l2_slices = importlib.util.module_from_spec(spec)
spec.loader.exec_module(l2_slices)

NCU = """# date,2026-11-29
pattern,0,1,0,0
pattern,1,1,0,128
pattern,2,4,16384,0
pattern,3,4,16384,128
"ID","Kernel Name","lts__t_sectors.avg","lts__t_sectors.max","lts__t_sectors.min","lts__t_sectors.sum"
"","","sector","sector","sector","sector"
"0","k_lines","10.00","262","6","940"
"1","k_lines","10.00","262","6","940"
"2","k_lines","17.00","518","6","1,598"
"3","k_lines","17.00","262","6","1,598"
"""


class L2SlicesTest(unittest.TestCase):
    def test_slice_count_and_busiest_slice_match_the_hand_derivation(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ncu.txt")
            with open(path, "w") as f:
                f.write(NCU)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                l2_slices.main(["l2_slices.py", path])
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], "slices: 94")
        shape = lines[2].split(",")
        self.assertEqual(shape[:6], ["4", "16384", "2", "1.50", "1.00", "2.00"])
        # 4 lines over 94 slices at random: the busiest holds 1 to 4, most often 1.
        self.assertTrue(1.0 < float(shape[6]) < 1.2)


if __name__ == "__main__":
    unittest.main()
