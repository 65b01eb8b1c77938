// The bwsim Python module: run any registered kernel as `bwsim run` does and get its results as
// Python dicts and lists; the simulator's errors as Python exceptions of the same kind.
//
//   import bwsim
//   r = bwsim.run("gemm", m=2048, n=2048, k=2048, config="sim_configs/b200.yaml", set=["mma.latency_ss=80"])
//   r["summary"]["cycles"], r["stalls"]["per_warp"]
//   bwsim.perturb("gemm", seeds="1:8", m=256, n=256, k=256)  # [{"seed": 1, "ok": True, ...}, ...]
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bwsim/check/Perturbation.hpp"
#include "bwsim/cli/KernelRun.hpp"
#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Error.hpp"

namespace py = pybind11;

namespace {

// JSON -> Python through the json module: the same objects `--json` and `--stats` write.
py::object to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// A keyword argument as the command line would have it typed: True -> "1", 2048 -> "2048".
std::string as_flag_value(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "1" : "0";
  return py::str(v).cast<std::string>();
}

// The kernel named `kernel` and flags with its parameters from `params` (the rest at their defaults).
const bwsim::KernelInfo& kernel_flags(const std::string& kernel, std::string config, std::vector<std::string> overrides,
                                      const py::kwargs& params, bwsim::RunFlags& f) {
  const bwsim::KernelInfo* k = bwsim::find_kernel(kernel);
  if (!k) throw bwsim::InputError("unknown kernel '" + kernel + "'; bwsim.kernels() lists them");
  if (!config.empty()) f.config = std::move(config);
  f.overrides = std::move(overrides);
  auto& values = f.params[k->name];
  for (const bwsim::KernelParam& p : k->params) values[p.name] = p.default_value;
  for (const auto& [key, value] : params) {
    std::string name = py::str(key).cast<std::string>();
    for (char& c : name)
      if (c == '_') c = '-';  // Python's tile_n is the flag --tile-n
    if (!values.contains(name)) throw bwsim::InputError("kernel " + kernel + " has no parameter '" + name + "'");
    values[name] = as_flag_value(value);
  }
  return *k;
}

py::dict run(const std::string& kernel, std::string config, std::vector<std::string> overrides, bool functional,
             bool check, bool check_races, std::string trace, std::uint32_t trace_sms, std::string report,
             std::string stats, double sustained, const py::kwargs& params) {
  bwsim::RunFlags f;
  const bwsim::KernelInfo* k = &kernel_flags(kernel, std::move(config), std::move(overrides), params, f);
  f.functional = functional;
  f.check = check;
  f.no_check_races = !check_races;
  f.trace = std::move(trace);
  f.trace_sms = trace_sms;
  f.report = std::move(report);
  f.stats = std::move(stats);
  f.keep_stalls = true;  // returned as "stalls"
  f.sustained = sustained;
  bwsim::KernelRun r;
  {
    py::gil_scoped_release release;  // a long run does not hold up other Python threads
    const bwsim::HardwareConfig cfg = bwsim::load_config(f.config, f.overrides);
    r = bwsim::run_kernel(*k, cfg, f);
  }
  py::dict out;
  out["summary"] = to_python(r.summary);
  out["stalls"] = to_python(r.stalls);
  out["passed"] = r.report.checked ? py::object(py::bool_(r.report.check_passed)) : py::object(py::none());
  return out;
}

// bwsim run --perturb: the kernel under drawn schedules, one dict per run.
py::list perturb(const std::string& kernel, const std::string& seeds, double band, std::uint64_t skew,
                 std::string config, std::vector<std::string> overrides, bool functional, bool check,
                 const py::kwargs& params) {
  bwsim::RunFlags f;
  const bwsim::KernelInfo& k = kernel_flags(kernel, std::move(config), std::move(overrides), params, f);
  f.functional = functional;
  f.check = check;
  std::vector<bwsim::PerturbedRun> runs;
  {
    py::gil_scoped_release release;
    const bwsim::HardwareConfig cfg = bwsim::load_config(f.config, f.overrides);
    const bwsim::KernelRequest req = bwsim::make_request(k, cfg, f);
    runs = bwsim::run_perturbed(k, f.config, f.overrides, req, bwsim::parse_perturb_seeds(seeds),
                                bwsim::Perturbation{band, skew});
  }
  py::list out;
  for (const bwsim::PerturbedRun& r : runs)
    out.append(py::dict(py::arg("seed") = r.seed, py::arg("ok") = r.ok, py::arg("outcome") = r.outcome,
                        py::arg("detail") = r.detail, py::arg("cycles") = r.cycles,
                        py::arg("hbm_read_bytes") = r.hbm_read_bytes));
  return out;
}

py::list kernels() {
  py::list out;
  for (const bwsim::KernelInfo& k : bwsim::kernel_registry()) {
    py::list params;
    for (const bwsim::KernelParam& p : k.params)
      params.append(py::dict(py::arg("name") = p.name, py::arg("help") = p.help, py::arg("default") = p.default_value,
                             py::arg("flag") = p.flag));
    out.append(py::dict(py::arg("name") = k.name, py::arg("summary") = k.summary, py::arg("params") = params));
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(bwsim, m) {
  m.doc() = "bwsim: a cycle-approximate simulator of the NVIDIA Blackwell (SM100) SM";
  // The error kinds, as the command line's exit codes tell them apart.
  static py::exception<bwsim::InputError> input_error(m, "InputError", PyExc_ValueError);
  static py::exception<bwsim::ConfigError> config_error(m, "ConfigError", input_error.ptr());
  static py::exception<bwsim::SimError> sim_error(m, "SimError", PyExc_RuntimeError);
  static py::exception<bwsim::MisuseError> misuse_error(m, "MisuseError", sim_error.ptr());
  static py::exception<bwsim::DeadlockError> deadlock_error(m, "DeadlockError", sim_error.ptr());
  static py::exception<bwsim::WatchdogError> watchdog_error(m, "WatchdogError", sim_error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const bwsim::ConfigError& e) {
      config_error(e.what());
    } catch (const bwsim::InputError& e) {
      input_error(e.what());
    } catch (const bwsim::MisuseError& e) {
      // The rule's name (e.g. "race-stage-reuse") as the exception's `rule`.
      misuse_error(e.what());
      PyObject *type, *value, *trace;
      PyErr_Fetch(&type, &value, &trace);
      PyErr_NormalizeException(&type, &value, &trace);
      py::handle(value).attr("rule") = bwsim::rule_name(e.rule());
      PyErr_Restore(type, value, trace);
    } catch (const bwsim::DeadlockError& e) {
      deadlock_error(e.what());
    } catch (const bwsim::WatchdogError& e) {
      watchdog_error(e.what());
    } catch (const bwsim::SimError& e) {
      sim_error(e.what());
    }
  });
  m.def("run", &run, py::arg("kernel"), py::kw_only(), py::arg("config") = "", py::arg("set") = std::vector<std::string>{},
        py::arg("functional") = false, py::arg("check") = false, py::arg("check_races") = true,
        py::arg("trace") = "", py::arg("trace_sms") = 4, py::arg("report") = "", py::arg("stats") = "",
        py::arg("sustained") = 10.0,
        R"(Simulates a registered kernel as `bwsim run` does. Keyword arguments the kernel lists
(bwsim.kernels()) are its parameters (tile_n=128 is --tile-n 128; True is 1). config: a config
YAML (default: the B200 config); set: overrides "key.path=value". functional / check: move real
bytes / compare with the CPU reference. trace, report, stats: files to write. Returns a dict:
summary (as --json), stalls (as --stats: per role and per warp, per SM), passed (the check, or
None). Raises InputError / ConfigError (bad input), MisuseError (with .rule), DeadlockError,
WatchdogError (all SimError).)");
  m.def("perturb", &perturb, py::arg("kernel"), py::kw_only(), py::arg("seeds") = "1:8", py::arg("band") = 0.25,
        py::arg("skew") = 200, py::arg("config") = "", py::arg("set") = std::vector<std::string>{},
        py::arg("functional") = true, py::arg("check") = true,
        R"(Runs a kernel under perturbed schedules as `bwsim run --perturb SEEDS` does (SEEDS "SEED[:N]";
every config latency scaled within 1 +- band, events of one cycle in a drawn order, SM starts
skewed up to `skew` cycles). Returns one dict per run: seed, ok, outcome ("ok", "misuse <rule>",
"deadlock", "watchdog", "check failed"), detail, cycles.)");
  m.def("kernels", &kernels, "The registered kernels: name, summary and parameters (name, help, default, flag).");
  m.def("default_config", [](const std::string& name) { return bwsim::default_config(name.c_str()); },
        py::arg("name") = "b200.yaml", "The path of a config shipped with bwsim, e.g. 'h100.yaml'.");
}
