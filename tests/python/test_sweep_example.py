"""examples/sweep.py runs a small sweep through the Python module and writes its plot."""
import os
import subprocess
import sys
import tempfile
import unittest


class SweepExample(unittest.TestCase):
    def test_a_small_sweep_writes_a_png(self):
        script = os.path.join(os.environ["BWSIM_SOURCE_DIR"], "examples", "sweep.py")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "sweep.png")
            run = subprocess.run([sys.executable, script, "--kernel", "gemm", "--m", "256", "--n", "256", "--k", "256",
                                  "--stages", "2,4", "--tile-n", "128,256", "--out", out],
                                 capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(run.stdout.count("TFLOP/s"), 4, run.stdout)
            with open(out, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
