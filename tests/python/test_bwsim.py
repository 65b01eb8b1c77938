"""The bwsim Python module: runs as the command line runs, results as dicts, errors as exceptions."""
import json
import os
import subprocess
import tempfile
import unittest

import bwsim

SOURCE = os.environ["BWSIM_SOURCE_DIR"]
UNIT = os.path.join(SOURCE, "sim_configs", "unit_test.yaml")
GEMM = dict(m=128, n=256, k=128)


class Run(unittest.TestCase):
    def test_the_summary_is_the_command_lines(self):
        r = bwsim.run("tma_copy", rows=256, cols=128, stages=2, config=UNIT)
        cli = subprocess.run([os.environ["BWSIM_BINARY"], "run", "tma_copy", "--rows", "256", "--cols", "128",
                              "--stages", "2", "--config", UNIT, "--json"], capture_output=True, text=True, check=True)
        expected = json.loads(cli.stdout)
        self.assertGreater(r["summary"]["cycles"], 0)
        self.assertEqual(r["summary"]["cycles"], expected["cycles"])
        self.assertEqual(r["summary"]["problem"], expected["problem"])
        self.assertIsNone(r["passed"])

    def test_functional_check_and_per_warp_stalls(self):
        r = bwsim.run("gemm", functional=True, check=True, **GEMM)
        self.assertTrue(r["passed"])
        self.assertEqual(r["summary"]["check"]["passed"], True)
        roles = {w["role"] for w in r["stalls"]["warps"]}
        self.assertIn("TMA producer", roles)
        producer = next(w for w in r["stalls"]["warps"] if w["role"] == "TMA producer")
        self.assertGreater(producer["activity"]["mbarrier"], 0)
        self.assertIn("mainloop.empty[0]", producer["barrier_wait"])

    def test_overrides_and_parameters_reach_the_run(self):
        base = bwsim.run("tma_copy", rows=256, cols=128, config=UNIT)["summary"]["cycles"]
        slower = bwsim.run("tma_copy", rows=256, cols=128, config=UNIT, set=["tma.load_latency=900"])["summary"]
        self.assertGreater(slower["cycles"], base)
        narrow = bwsim.run("gemm", tile_n=128, **GEMM)["summary"]
        self.assertIn("128", narrow["problem"])

    def test_flags_and_dtype_spellings(self):
        r = bwsim.run("fmha", batch=1, heads=1, seqlen=200, causal=True, dtype="bfloat16", functional=True, check=True)
        self.assertTrue(r["passed"])
        self.assertIn("causal", r["summary"]["problem"])

    def test_trace_report_and_stats_files(self):
        with tempfile.TemporaryDirectory() as d:
            trace, report, stats = (os.path.join(d, n) for n in ("t.json", "r.html", "s.json"))
            bwsim.run("gemm", trace=trace, report=report, stats=stats, **GEMM)
            with open(trace) as f:
                self.assertIn("traceEvents", json.load(f))
            with open(stats) as f:
                self.assertIn("warps", json.load(f))
            self.assertGreater(os.path.getsize(report), 1000)

    def test_perturbed_schedules(self):
        runs = bwsim.perturb("gemm", seeds="3:2", **GEMM)
        self.assertEqual([r["seed"] for r in runs], [3, 4])
        self.assertTrue(all(r["ok"] and r["outcome"] == "ok" for r in runs), runs)
        self.assertNotEqual(runs[0]["cycles"], runs[1]["cycles"])
        self.assertTrue(all(r["hbm_read_bytes"] > 0 for r in runs), runs)
        bad = bwsim.perturb("gemm", seeds="1:2", bug="no-phase-flip", m=256, n=256, k=256)  # the ring wraps
        self.assertTrue(all(not r["ok"] and r["outcome"].startswith("misuse") for r in bad), bad)

    def test_kernels_lists_parameters(self):
        gemm = next(k for k in bwsim.kernels() if k["name"] == "gemm")
        self.assertIn("tile-n", [p["name"] for p in gemm["params"]])
        causal = next(p for k in bwsim.kernels() if k["name"] == "fmha" for p in k["params"] if p["name"] == "causal")
        self.assertTrue(causal["flag"])
        self.assertTrue(bwsim.default_config("h100.yaml").endswith("sim_configs/h100.yaml"))


class Errors(unittest.TestCase):
    def test_bad_input(self):
        with self.assertRaisesRegex(bwsim.InputError, "--dtype f32"):
            bwsim.run("gemm", dtype="f32")
        with self.assertRaisesRegex(bwsim.InputError, "no parameter 'bogus'"):
            bwsim.run("gemm", bogus=1)
        with self.assertRaisesRegex(bwsim.InputError, "unknown kernel"):
            bwsim.run("no_such_kernel")
        with self.assertRaises(ValueError):  # InputError is a ValueError
            bwsim.run("gemm", m=0)

    def test_config_error_names_the_key(self):
        with self.assertRaisesRegex(bwsim.ConfigError, "tma.load_latency") as caught:
            bwsim.run("gemm", set=["tma.load_latency=-5"])
        self.assertIsInstance(caught.exception, bwsim.InputError)

    def test_misuse_carries_its_rule(self):
        # 4 k-tiles through 4 stages then a reuse of a stage the MMA released with a plain arrive.
        with self.assertRaises(bwsim.MisuseError) as caught:
            bwsim.run("gemm", m=128, n=256, k=512, bug="release-before-commit")
        self.assertEqual(caught.exception.rule, "race-stage-reuse")
        self.assertIsInstance(caught.exception, bwsim.SimError)
        self.assertIsInstance(caught.exception, RuntimeError)

    def test_deadlock_reports_the_waits(self):
        with self.assertRaisesRegex(bwsim.DeadlockError, r"mainloop\.empty\[0\]"):
            bwsim.run("gemm", bug="wrong-producer-phase", **GEMM)


if __name__ == "__main__":
    unittest.main()
