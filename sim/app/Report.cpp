#include "sim/app/Report.hpp"
#include "sim/study/Metrics.hpp"

#include "topology/config/Units.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace clustersim {

namespace {
std::string format_figures(const RunMetrics& m);
std::string format_where(const RunMetrics& m);
} // namespace

std::string describe_strategy(const TrainingSpec& t)
{
  // a strategy that the ZeRO stage alone does not name is named beside it
  std::string strategy =
      t.data_parallel_name() == TrainingSpec::zero_strategy(t.zero) ? "" : " (" + t.data_parallel_name();
  if (t.dp_shard > 0)
    strategy += ", dp_shard " + std::to_string(t.dp_shard);
  if (!strategy.empty())
    strategy += ")";
  if (t.frozen_base())
    strategy += ", LoRA rank " + std::to_string(t.lora.rank) + " on " + join(t.lora.targets, "+");
  return strategy;
}

std::string format_report(const RunMetrics& m)
{
  const TrainingSpec& t = m.training;
  std::ostringstream o;
  char buf[256];
  const MemoryBreakdown& mem = m.memory;
  if (!mem.fits) // a step that cannot run leads with it: the figures below describe a step that would not run
    o << "OUT OF MEMORY: " << describe_oom(mem) << "; this step would not run\n";
  o << m.name << "\n";
  const std::string strategy = describe_strategy(t);
  std::snprintf(buf, sizeof buf, "  %s on %d x %s: tp %d, pp %d, dp %d, cp %d, vpp %d, zero %d%s, %s, recompute %s%s\n",
                m.model.c_str(), m.gpus, m.platform.c_str(), t.tp, t.pp, t.dp, t.cp, t.vpp, t.zero, strategy.c_str(),
                t.schedule.c_str(), to_string(t.recompute), t.sequence_parallel ? ", sequence parallel" : "");
  o << buf;
  if (t.pp > 1)
    o << "  layers per pipeline stage: " << m.pipeline << "\n";
  std::snprintf(buf, sizeof buf, "  micro-batch %d, global batch %d, %s, %s, attention %s\n", t.micro_batch,
                t.global_batch, to_string(t.precision), to_string(t.framework),
                t.flash_attention ? "flash" : "unfused");
  o << buf;
  if (!m.assumptions.empty()) {
    o << "  not in the file, assumed:\n";
    for (const auto& a : m.assumptions)
      o << "    " << a.key << ": " << a.value << " (" << a.origin << ")\n";
  }
  o << "\n";
  return o.str() + format_figures(m) + format_where(m);
}

namespace {

/// The step's figures: time, MFU, throughput, scaling and the token budget's cost.
std::string format_figures(const RunMetrics& m)
{
  std::ostringstream o;
  char buf[256];
  auto line = [&](const char* label, const std::string& value) {
    std::snprintf(buf, sizeof buf, "  %-28s ", label);
    o << buf << value << "\n"; // the value whole: a buffer would cut a long one and its newline
  };
  auto pct = [](double f) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f %%", 100 * f);
    return std::string(b);
  };
  auto num = [](double v, int digits) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return std::string(b);
  };
  line("step time", format_time(m.step_time_s));
  if (m.seeds.count > 0) {
    const Percentiles& p = m.seeds.metrics.front().second; // step_time_s
    line("step over ECMP seeds", "p10 " + format_time(p.p10) + ", p50 " + format_time(p.p50) + ", p90 " +
                                     format_time(p.p90) + " (min " + format_time(p.min) + ", max " +
                                     format_time(p.max) + "; " + std::to_string(m.seeds.count) + " seeds from " +
                                     std::to_string(m.seeds.first) + ", this report is seed " +
                                     std::to_string(m.seeds.reported) + ")");
  }
  if (!m.jobs.empty()) {
    const double slow = m.step_time_s / m.alone_step_s - 1;
    line("step alone on the cluster", format_time(m.alone_step_s) + " (beside the jobs below: " +
                                          (slow >= 0 ? "+" : "") + pct(slow) + ")");
    for (const SharedJob& j : m.jobs) {
      const std::string steps =
          j.measured > 0 ? "mean of the " + std::to_string(j.measured) + " of its " + std::to_string(j.steps) +
                               " steps that ended within this one's"
                         : "its first step, which ended after this one's, so it ran partly alone";
      line(("  job " + j.name).c_str(),
           std::to_string(j.gpus) + " GPUs from GPU " + std::to_string(j.first_gpu) + ": step " +
               format_time(j.step_s) + " beside this one, " + format_time(j.alone_s) + " alone (" +
               (j.step_s >= j.alone_s ? "+" : "") + pct(j.step_s / j.alone_s - 1) + "; " + steps + ")");
    }
  }
  line("MFU", pct(m.mfu));
  line("HFU", pct(m.hfu));
  line("TFLOP/s per GPU (model)", num(m.tflops_per_gpu_model, 1));
  line("TFLOP/s per GPU (hardware)", num(m.tflops_per_gpu_hardware, 1));
  line("tokens/s", num(m.tokens_per_s, 0));
  line("tokens/s per GPU", num(m.tokens_per_s_per_gpu, 1));
  std::snprintf(buf, sizeof buf, "%.1f %% (vs %d GPUs)", 100 * m.scaling_efficiency, m.baseline_gpus);
  line("scaling efficiency", buf);
  auto si = [](double v) { return format_si(v); }; // "2.07 M GPU-hours", "$3.70 M"
  std::snprintf(buf, sizeof buf, "%.1f days, %s GPU-hours, %s MWh, $%s", m.time_to_train_s / 86400,
                si(m.gpu_hours).c_str(), si(m.energy_mwh).c_str(), si(m.cost_usd).c_str());
  char budget[64];
  std::snprintf(budget, sizeof budget, "train %.3g tokens", m.budget_tokens);
  line(budget, buf);
  const double per_mtok = find_metric("usd_per_mtokens")->get(m);
  std::snprintf(buf, sizeof buf, "$%.2f per GPU-hour (%s), $%.3g per 1M tokens", m.usd_per_gpu_hour,
                m.cost_basis == "owned" ? "owned: capex amortised plus energy" : "rental", per_mtok);
  line("price", buf);
  if (std::isfinite(m.capex_usd)) {
    std::snprintf(buf, sizeof buf, "$%s, network %.1f %%; owned $%.2f per GPU-hour", si(m.capex_usd).c_str(),
                  100 * m.network_capex_share, m.owned_usd_per_gpu_hour);
    line("capex", buf);
  } else {
    line("capex", "not priced: " + m.unpriced);
  }
  // the step figures told above in other words, or not at all: by key, from the metric table
  bool first = true;
  for (const Metric& metric : report_metrics()) {
    if (metric.part != MetricPart::step || metric.narrated)
      continue;
    if (first)
      o << "  other figures\n";
    first = false;
    std::snprintf(buf, sizeof buf, "    %-26s %.4g %s", metric.key, metric.get(m), metric.unit);
    o << buf << "\n";
  }
  return o.str();
}

/// Where the step went: the breakdown, where the other ranks waited, the links, the memory.
std::string format_where(const RunMetrics& m)
{
  std::ostringstream o;
  char buf[256];
  const MemoryBreakdown& mem = m.memory;
  o << "\n  step breakdown (rank " << m.breakdown.rank << ", pipeline stage " << m.critical_stage << ")\n";
  const Breakdown& b = m.breakdown;
  auto share = [&](const char* label, double v) {
    std::snprintf(buf, sizeof buf, "    %-26s %12s  %5.1f %%\n", label, format_time(v).c_str(),
                  m.step_time_s > 0 ? 100 * v / m.step_time_s : 0.0);
    o << buf;
  };
  share("compute", b.compute);
  share("recompute", b.recompute);
  share("optimizer", b.optimizer);
  share("exposed TP comm", b.exposed_tp);
  share("exposed CP comm", b.exposed_cp);
  share("exposed PP comm", b.exposed_pp);
  share("exposed DP comm", b.exposed_dp);
  if (b.exposed_ep > 0)
    share("exposed EP comm", b.exposed_ep);
  share("pipeline bubble / wait", b.bubble);
  if (b.host > 0)
    share("host-bound (CPU issue)", b.host);
  if (b.other > 0)
    share("other", b.other);
  if (m.has_least_loaded) {
    const Breakdown& l = m.least_loaded;
    std::snprintf(buf, sizeof buf,
                  "  where the others wait (rank %u, the least compute: %s): exposed TP %s, CP %s, PP %s, DP %s, "
                  "EP %s, bubble %s, host-bound %s\n",
                  l.rank, format_time(l.compute).c_str(), format_time(l.exposed_tp).c_str(),
                  format_time(l.exposed_cp).c_str(), format_time(l.exposed_pp).c_str(),
                  format_time(l.exposed_dp).c_str(), format_time(l.exposed_ep).c_str(), format_time(l.bubble).c_str(),
                  format_time(l.host).c_str());
    o << buf;
  }
  if (m.comm_s > 0) {
    std::snprintf(buf, sizeof buf,
                  "  its collectives and transfers, summed (they overlap): %s, %s of it as each would run alone on "
                  "the fabric, %s slowed by links shared with other flows; waiting for them: %.1f %% of the step\n",
                  format_time(m.comm_s).c_str(), format_time(m.comm_idle_s).c_str(),
                  format_time(m.comm_slowed_s).c_str(),
                  m.step_time_s > 0 ? 100 * m.breakdown.exposed_comm() / m.step_time_s : 0.0);
    o << buf;
  }
  if (!m.network.empty()) {
    o << "\n  link load (bytes moved / what the link could move in the step)\n";
    for (const TierLoad& l : m.network) {
      std::snprintf(buf, sizeof buf, "    %-26s busiest %5.1f %% (%s), mean %5.1f %% over %zu of %zu links",
                    to_string(l.tier), 100 * l.busiest_load, l.used > 0 ? l.busiest_link.c_str() : "none",
                    100 * l.mean_load, l.used, l.links);
      o << buf;
      if (l.background > 0) {
        std::snprintf(buf, sizeof buf, ", a background holds %.1f %% of each", 100 * l.background);
        o << buf;
      }
      o << "\n";
    }
  }
  std::snprintf(buf, sizeof buf, "\n  memory per GPU (stage %d): %s of %s -> %s\n", mem.stage,
                format_bytes(mem.peak).c_str(), format_bytes(mem.capacity).c_str(),
                mem.fits ? "fits" : ("OUT OF MEMORY (dominated by " + mem.dominant + ")").c_str());
  o << buf;
  std::snprintf(
      buf, sizeof buf, "    weights %s, gradients %s, optimizer %s, activations %s, buffers %s, reserved %s\n",
      format_bytes(mem.weights).c_str(), format_bytes(mem.grads).c_str(), format_bytes(mem.optimizer).c_str(),
      format_bytes(mem.activations).c_str(), format_bytes(mem.buffers).c_str(), format_bytes(mem.reserved).c_str());
  o << buf;
  if (mem.cast_weights > 0) {
    std::snprintf(buf, sizeof buf, "    of the buffers, %s are the precision recipe's cached weight casts\n",
                  format_bytes(mem.cast_weights).c_str());
    o << buf;
  }
  o << "\n  simulation: " << m.mode << ", " << m.simulated_ranks << " of " << m.gpus << " ranks, " << m.engine
    << " engine (" << m.mode_reason << ")\n";
  return o.str();
}

} // namespace

std::string describe_oom(const MemoryBreakdown& mem)
{
  return "pipeline stage " + std::to_string(mem.stage) + " needs " + format_bytes(mem.peak) + " per GPU of " +
         format_bytes(mem.capacity) + " (dominated by " + mem.dominant + ")";
}

std::string format_kernels(const ExperimentSpec& e)
{
  CostModel c(e.model, e.training, e.platform.node.gpu);
  std::ostringstream o;
  char line[256];
  const TrainingSpec& t = e.training;
  const Fp8Recipe* fp8 = t.fp8();
  CostModel::AttentionRate a = c.attention_rate(e.model.head_dim(), true, e.model.seq_len);
  o << "\n  kernels of one layer, one micro-batch, one GPU (" << to_string(t.framework) << ", " << t.kernel_set().name
    << " kernels, attention " << (t.flash_attention ? a.backend : std::string("unfused"))
    << (fp8 ? ", " + std::string(to_string(fp8->format)) + " recipe " + fp8->name : std::string()) << ", power factor ";
  std::snprintf(line, sizeof line, "%.3f)\n", e.platform.node.gpu.power_factor());
  o << line;
  std::snprintf(line, sizeof line, "    %-28s %-11s %-5s %10s %10s %10s %10s %10s %9s %10s %10s\n", "op", "kind", "dtype",
                "GFLOP", "MB", "fwd us", "bwd us", "recomp us", "TFLOP/s", "host f us", "host b us");
  o << line;
  auto rows = [&](const char* block, const BlockCost& b) {
    double f = 0, bw = 0;
    for (const auto& op : b.ops) {
      const double rate = op.forward > 0 && op.flops > 0 ? op.flops / op.forward / 1e12 : 0;
      std::snprintf(line, sizeof line, "    %-28s %-11s %-5s %10.2f %10.2f %10.1f %10.1f %10s %9s %10.1f %10.1f\n",
                    (std::string(block) + "." + op.name).c_str(), op.kind.c_str(), op.precision.c_str(),
                    op.flops / 1e9, op.bytes / 1e6, op.forward * 1e6, op.backward * 1e6, "",
                    rate > 0 ? std::to_string(static_cast<int>(rate + 0.5)).c_str() : "",
                    c.host_issue(op, Pass::forward) * 1e6, c.host_issue(op, Pass::backward) * 1e6);
      o << line;
      f += op.forward;
      bw += op.backward;
    }
    std::snprintf(line, sizeof line, "    %-28s %-11s %-5s %10s %10s %10.1f %10.1f %10.1f %9s %10.1f %10.1f\n",
                  (std::string(block) + " total").c_str(), "", "", "", "", f * 1e6, bw * 1e6, b.recompute * 1e6, "",
                  c.host_issue(b, Pass::forward) * 1e6, c.host_issue(b, Pass::backward) * 1e6);
    o << line;
  };
  rows("attention", c.attention_block());
  if (c.model().has_window()) {
    const ModelSpec& m = c.model();
    const int n = m.full_attention_every;
    const char* th = n % 10 == 1 && n % 100 != 11 ? "st" : n % 10 == 2 && n % 100 != 12 ? "nd"
                     : n % 10 == 3 && n % 100 != 13 ? "rd" : "th";
    std::snprintf(line, sizeof line, "    a sliding-window layer of %d tokens (%s) instead:\n", m.sliding_window,
                  n > 0 ? ("every layer but each " + std::to_string(n) + th).c_str() : "every layer");
    o << line;
    rows("window", c.attention_block(true));
  }
  if (c.model().dense_layers > 0 || c.model().experts == 1)
    rows("mlp", c.mlp_block());
  if (c.model().experts > 1)
    rows("moe", c.moe_block());
  rows("logits", c.logits());
  const HostCpu& cpu = e.platform.node.gpu.host;
  std::snprintf(line, sizeof line,
                "    host: %s CPU, %.2f us per kernel launched eager, %.2f us per CUDA graph replay; graphs %s%s\n",
                cpu.name.c_str(), cpu.op * 1e6, cpu.launch * 1e6, t.cuda_graph_impl.c_str(),
                c.moe_host_sync() && c.model().experts > 1 ? "; the host waits for the GPU once per MoE layer forward"
                                                            : "");
  o << line;
  if (!c.attention_block().ring_forward.empty()) {
    std::snprintf(line, sizeof line, "    ring attention: %d steps, %.1f us forward / %.1f us backward each (mean)\n",
                  t.cp, c.attention_block().core_forward / t.cp * 1e6, c.attention_block().core_backward / t.cp * 1e6);
    o << line;
  }
  return o.str();
}

} // namespace clustersim
