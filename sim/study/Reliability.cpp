#include "sim/study/Reliability.hpp"

#include <cmath>

namespace clustersim {
namespace {

// Llama 3 405B pre-training (Llama Team 2024, Sec. 3.3.4, Table 5): a 54-day window on 16,384
// H100 GPUs in 2,048 nodes of 8, one 400 Gb/s RoCE NIC per GPU. Unexpected interruptions by
// root cause (419 in all), assigned here to the part whose count they scale with:
//   gpu      faulty GPU 148, GPU SRAM 19, GPU system processor 17, silent data corruption 6,
//            GPU thermal interface and sensor 6                                  = 196 per GPU
//   hbm      GPU HBM3 memory                                                     =  72 per GPU
//   network  network switch and cable (one cable and switch port per NIC)        =  35 per NIC
//   nic      NIC                                                                 =   7 per NIC
//   host     host maintenance 32, SSD 3, power supply 3, server chassis 2, IO expansion
//            board 2, CPU 2, system memory 2                                     =  46 per node
//   software software bug 54, NCCL watchdog timeouts 7, dependency 2             =  63 per node
// (Table 5 prints 30.1 % beside the faulty GPUs' 148, which is 35.3 % of 419; the counts add up
// to 419 and are what is used.) FIT of one unit = count / (units x 1,296 h) x 10^9. Planned
// interruptions (47, firmware and configuration changes) are per job-day.
constexpr double kWindowHours = 54.0 * 24.0;
constexpr double kGpus = 16384;
constexpr double kNics = 16384;
constexpr double kNodes = 2048;

double fit(double units, double count) { return count / (units * kWindowHours) * 1e9; }

struct Default {
  const char* name;
  const char* per;
  double fit;
  bool hardware;
  const char* doc;
};

const std::vector<Default>& defaults()
{
  static const std::vector<Default> d{
      {"gpu", "GPU", fit(kGpus, 196), true, "per GPU: faulty GPU, SRAM, system processor, SDC, thermal"},
      {"hbm", "GPU", fit(kGpus, 72), true, "per GPU: HBM failures"},
      {"network", "NIC", fit(kNics, 35), false, "per NIC: its switch port and cable (the job restarts on the "
                                                       "same nodes once the link is rerouted or replaced)"},
      {"nic", "NIC", fit(kNics, 7), true, "per NIC: the NIC itself"},
      {"host", "node", fit(kNodes, 46), true, "per node: host maintenance, SSD, PSU, chassis, CPU, memory"},
      {"software", "node", fit(kNodes, 63), false, "per node: software bugs, NCCL timeouts, dependencies"},
  };
  return d;
}

} // namespace

const Section& reliability_fit_section()
{
  using K = KeySpec;
  static const Section s = [] {
    Section t{"reliability.fit",
              "failures per 10^9 hours of one unit of each part, FIT (defaults: Llama 3's 54-day window, Table 5)",
              {}};
    for (const auto& d : defaults())
      t.keys.push_back(K::number(d.name, std::round(d.fit), 0, 1e12, d.doc).counts("FIT"));
    return t;
  }();
  return s;
}

const Section& reliability_checkpoint_section()
{
  using K = KeySpec;
  static const Section s{
      "reliability.checkpoint",
      "what saving and loading the training state costs",
      {
          K::quantity_of("size", Quantity::bytes, "", 1, 1e18, "bytes written per checkpoint")
              .computed("parameters x (weight + optimizer state bytes) of the framework"),
          // Llama 3 Sec. 3.3.1: Tectonic sustains 2 TB/s, peaks at 7 TB/s
          K::quantity_of("write_bandwidth", Quantity::bandwidth, "2TBps", 1e6, 1e15,
                         "aggregate write bandwidth to storage (Llama 3: Tectonic, 2 TB/s sustained)"),
          K::quantity_of("read_bandwidth", Quantity::bandwidth, "2TBps", 1e6, 1e15,
                         "aggregate read bandwidth when restarting"),
          K::quantity_of("interval", Quantity::time, "", 1e-3, 3.6e9, "training time between checkpoints")
              .computed("the Young/Daly optimum sqrt(2 x write time x MTBF) - write time"),
      }};
  return s;
}

const Section& reliability_section()
{
  using K = KeySpec;
  static const Section s{
      "reliability",
      "failures, checkpoints and restarts of a training run (clustersim goodput)",
      {
          K::section("fit", "reliability.fit", "failures per 10^9 unit-hours of each part"),
          K::number("planned_per_day", 0, 0, 1000,
                    "planned interruptions per day of the job, checkpointed first")
              .computed("Llama 3's rate per node (47 in 54 days on 2,048 nodes) x the job's nodes")
              .counts("interruptions"),
          K::section("checkpoint", "reliability.checkpoint", "checkpoint size, bandwidths and interval"),
          // not stated by Llama 3: an assumption (detection, rescheduling, process start, NCCL
          // initialisation), which the report names
          K::quantity_of("restart", Quantity::time, "10min", 0, 3.6e7,
                         "from an interruption to training again, before reading the checkpoint (assumed)"),
          K::integer("spare_nodes", -1, 0, 1 << 22, "healthy nodes held back to replace failed ones")
              .computed("unlimited: the scheduler always finds a healthy node")
              .counts("nodes"),
          K::quantity_of("repair", Quantity::time, "72h", 1, 3.6e9,
                         "a failed node's time out of the pool, with a finite spare_nodes (assumed)"),
          K::integer("seed", 1, 0, (1LL << 62), "Monte-Carlo seed"),
          K::integer("trials", 1000, 1, 1000000, "Monte-Carlo trials").counts("trials"),
          K::quantity_of("window", Quantity::time, "", 1, 3.6e9,
                         "also report the interruptions expected over this much wall time"),
      }};
  return s;
}

ReliabilitySpec default_reliability()
{
  ReliabilitySpec r;
  for (const auto& d : defaults())
    r.sources.push_back({d.name, d.per, d.fit, d.hardware});
  r.planned_per_day = -1; // Llama 3's per node, scaled to the job
  r.write_bandwidth = 2e12;
  r.read_bandwidth = 2e12;
  r.restart_s = 600;
  r.repair_s = 72 * 3600.0;
  return r;
}

ReliabilitySpec parse_reliability(const YamlNode& node)
{
  ReliabilitySpec r = default_reliability();
  r.given = true;
  SectionReader top(node, reliability_section());
  if (auto m = top.find("fit")) {
    SectionReader mr(*m, reliability_fit_section());
    for (auto& s : r.sources)
      s.fit = mr.number(s.name);
    mr.finish();
  }
  if (top.has("planned_per_day"))
    r.planned_per_day = top.number("planned_per_day");
  if (auto c = top.find("checkpoint")) {
    SectionReader cr(*c, reliability_checkpoint_section());
    if (cr.has("size"))
      r.checkpoint_bytes = cr.quantity("size");
    r.write_bandwidth = cr.quantity("write_bandwidth");
    r.read_bandwidth = cr.quantity("read_bandwidth");
    if (cr.has("interval"))
      r.interval_s = cr.quantity("interval");
    cr.finish();
  }
  r.restart_s = top.quantity("restart");
  if (top.has("spare_nodes"))
    r.spare_nodes = top.integer("spare_nodes");
  r.repair_s = top.quantity("repair");
  r.seed = top.integer("seed");
  r.trials = top.integer("trials");
  if (top.has("window"))
    r.window_days = top.quantity("window") / 86400.0;
  top.finish();
  return r;
}

} // namespace clustersim
