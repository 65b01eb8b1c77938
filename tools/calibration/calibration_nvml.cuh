// calibration_nvml.cuh: the board's power, energy and SM clock through NVML, for the programs
// that measure power (h100_power.cu, gemm_sm90_twin.cu --sustain-ms). Host only. NVML is the
// driver's libnvidia-ml.so.1, opened with dlopen (the toolkit on the build machines ships no
// nvml.h): the handful of entry points below are declared here with their C signatures from the
// NVML API reference (return 0 = NVML_SUCCESS; enum values NVML_CLOCK_SM = 1,
// NVML_TEMPERATURE_GPU = 0). Link with -ldl.
//
// - energy_mj(): nvmlDeviceGetTotalEnergyConsumption, the board's energy counter in mJ since the
//   driver loaded. The mean power over an interval is its difference / the interval: exact, not
//   a sample (the programs use it for every power figure they report).
// - power_w(): nvmlDeviceGetPowerUsage (on Hopper a 1 s running average); for the traces only.
// - sm_mhz(): nvmlDeviceGetClockInfo(NVML_CLOCK_SM), the current SM clock.
// - clock_event_reasons(): nvmlDeviceGetCurrentClocksEventReasons, why the clock is not at maximum.
// - Sampler: a thread that records (host time, SM MHz, W, temperature C, reasons) every `period_ms`, for
//   the clock traces of the power-limit controller.
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

class Nvml {
 public:
  Nvml() {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib_) fail("dlopen libnvidia-ml.so.1", -1);
    load(init_, "nvmlInit_v2");
    load(shutdown_, "nvmlShutdown");
    load(handle_, "nvmlDeviceGetHandleByIndex_v2");
    load(energy_, "nvmlDeviceGetTotalEnergyConsumption");
    load(power_, "nvmlDeviceGetPowerUsage");
    load(clock_, "nvmlDeviceGetClockInfo");
    load(temp_, "nvmlDeviceGetTemperature");
    load(limit_, "nvmlDeviceGetEnforcedPowerLimit");
    load(reasons_, "nvmlDeviceGetCurrentClocksEventReasons");
    check(init_(), "nvmlInit_v2");
    check(handle_(0, &dev_), "nvmlDeviceGetHandleByIndex_v2");
  }
  ~Nvml() { shutdown_(); }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  unsigned long long energy_mj() const {
    return query<unsigned long long>(energy_, "nvmlDeviceGetTotalEnergyConsumption");
  }
  double power_w() const { return query<unsigned>(power_, "nvmlDeviceGetPowerUsage") / 1000.0; }  // mW
  unsigned sm_mhz() const { return query<unsigned>(clock_, "nvmlDeviceGetClockInfo", 1 /* NVML_CLOCK_SM */); }
  unsigned temperature_c() const {
    return query<unsigned>(temp_, "nvmlDeviceGetTemperature", 0 /* NVML_TEMPERATURE_GPU */);
  }
  // Why the clock is below its maximum, as NVML's bit mask: 0x1 idle, 0x4 SW power cap (the
  // board's power limit), 0x8 HW slowdown, 0x20 SW thermal, 0x40 HW thermal, 0x80 HW power brake.
  unsigned long long clock_event_reasons() const {
    return query<unsigned long long>(reasons_, "nvmlDeviceGetCurrentClocksEventReasons");
  }
  double power_limit_w() const { return query<unsigned>(limit_, "nvmlDeviceGetEnforcedPowerLimit") / 1000.0; }

 private:
  using Device = void*;
  template <class Fn>
  void load(Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(dlsym(lib_, name));
    if (!fn) fail(name, -1);
  }
  static void fail(const char* what, int rc) {
    std::fprintf(stderr, "NVML: %s failed (%d)\n", what, rc);
    std::exit(1);
  }
  static void check(int rc, const char* what) {
    if (rc != 0) fail(what, rc);
  }
  // One NVML getter: fn(device, args..., &value), checked.
  template <class T, class Fn, class... Args>
  T query(Fn fn, const char* what, Args... args) const {
    T value{};
    check(fn(dev_, args..., &value), what);
    return value;
  }
  void* lib_ = nullptr;
  Device dev_ = nullptr;
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  int (*handle_)(unsigned, Device*) = nullptr;
  int (*energy_)(Device, unsigned long long*) = nullptr;
  int (*power_)(Device, unsigned*) = nullptr;
  int (*clock_)(Device, int, unsigned*) = nullptr;
  int (*temp_)(Device, int, unsigned*) = nullptr;
  int (*limit_)(Device, unsigned*) = nullptr;
  int (*reasons_)(Device, unsigned long long*) = nullptr;
};

// Seconds on the host's steady clock (the programs bracket phases with it).
inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class Sampler {
 public:
  struct Sample {
    double t_s;  // now_s() at the sample
    unsigned sm_mhz;
    double power_w;
    unsigned temp_c;
    unsigned long long reasons;  // clock_event_reasons()
  };
  Sampler(const Nvml& nvml, int period_ms) : nvml_(nvml), period_ms_(period_ms), thread_([this] { loop(); }) {}
  ~Sampler() {
    stop_ = true;
    thread_.join();
  }
  // The samples taken in [t0, t1] (now_s() times).
  std::vector<Sample> between(double t0, double t1) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Sample> out;
    for (const Sample& s : samples_)
      if (s.t_s >= t0 && s.t_s <= t1) out.push_back(s);
    return out;
  }

 private:
  void loop() {
    while (!stop_) {
      const Sample s{now_s(), nvml_.sm_mhz(), nvml_.power_w(), nvml_.temperature_c(), nvml_.clock_event_reasons()};
      {
        std::lock_guard<std::mutex> lock(mutex_);
        samples_.push_back(s);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms_));
    }
  }
  const Nvml& nvml_;
  int period_ms_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<Sample> samples_;
  std::thread thread_;  // last: starts after the fields it uses
};
