#include "sim/study/Goodput.hpp"
#include "sim/study/Random.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace clustersim {
namespace {

constexpr double kDay = 86400.0;

/// What the closed form and the Monte-Carlo share.
struct Rates {
  double lambda = 0;    ///< unexpected interruptions per second
  double lambda_hw = 0; ///< of those, the ones that take a node out for repair
  double planned = 0;   ///< per second
  double delta = 0;     ///< checkpoint write
  double read = 0;
  double restart = 0;   ///< restart + read
  double available = 1; ///< fraction of the time the job has its nodes (finite spares)
  double work = 0;
};

double units_of(const FailureSource& s, const GoodputInput& in)
{
  const double nodes = static_cast<double>(in.gpus) / in.gpus_per_node;
  if (s.per == "GPU")
    return static_cast<double>(in.gpus);
  if (s.per == "NIC")
    return nodes * in.nics_per_node;
  return nodes;
}

/// P(Poisson(m) >= k).
double poisson_at_least(double m, long long k)
{
  if (k <= 0)
    return 1;
  double term = std::exp(-m), below = 0;
  for (long long i = 0; i < k; ++i) {
    below += term;
    term *= m / static_cast<double>(i + 1);
  }
  return std::clamp(1 - below, 0.0, 1.0);
}

Rates rates_of(const ReliabilitySpec& spec, const GoodputInput& in, GoodputResult* out)
{
  Rates r;
  for (const auto& s : spec.sources) {
    const double units = units_of(s, in);
    const double per_s = units * s.fit * 1e-9 / 3600.0;
    r.lambda += per_s;
    if (s.hardware)
      r.lambda_hw += per_s;
    if (out)
      out->rates.push_back({s.name, s.per, units, per_s * kDay, s.hardware});
  }
  const double nodes = static_cast<double>(in.gpus) / in.gpus_per_node;
  r.planned = (spec.planned_per_day >= 0 ? spec.planned_per_day : kLlama3PlannedPerNodeDay * nodes) / kDay;
  const double bytes = spec.checkpoint_bytes > 0 ? spec.checkpoint_bytes : in.checkpoint_bytes;
  r.delta = bytes / spec.write_bandwidth;
  r.read = bytes / spec.read_bandwidth;
  r.restart = spec.restart_s + r.read;
  if (spec.spare_nodes >= 0) {
    // nodes in repair at a random instant: Poisson with mean lambda_hw x repair (failures arrive
    // whether or not the job runs; M/G/inf); the job runs while at most S are out
    const double in_repair = r.lambda_hw * spec.repair_s;
    r.available = 1 - poisson_at_least(in_repair, spec.spare_nodes + 1);
  }
  const double steps = std::ceil(in.budget_tokens / in.tokens_per_step);
  r.work = steps * in.step_s;
  if (out) {
    out->checkpoint_bytes = bytes;
    out->steps = steps;
  }
  return r;
}

double daly_interval(const Rates& r)
{
  if (r.lambda <= 0)
    return std::numeric_limits<double>::infinity();
  const double m = 1 / r.lambda;
  if (r.delta >= 2 * m)
    return m;
  return std::max(std::sqrt(2 * r.delta * m) - r.delta, r.delta > 0 ? r.delta * 1e-3 : 1e-3);
}

double closed_wall(const Rates& r, double tau)
{
  const double ckpt = std::isinf(tau) ? 0 : r.delta / tau;
  const double loss = r.lambda * (r.restart + (std::isinf(tau) ? 0 : (tau + r.delta) / 2)) +
                      r.planned * (r.delta + r.restart);
  if (std::isinf(tau) && r.lambda > 0)
    return std::numeric_limits<double>::infinity();
  if (loss >= 1)
    return std::numeric_limits<double>::infinity();
  if (r.available <= 0)
    return std::numeric_limits<double>::infinity();
  return r.work * (1 + ckpt) / (1 - loss) / r.available;
}

struct Trial {
  double wall = 0;
  long long interruptions = 0;
  bool finished = true; ///< false: given up past the events bound
};

/// One run, event by event.
class Replay {
public:
  Replay(const ReliabilitySpec& spec, const Rates& r, double tau, std::mt19937_64& g)
      : spec_(spec), r_(r), tau_(tau), g_(g)
  {
  }

  Trial run()
  {
    if (spec_.spare_nodes >= 0)
      steady_repairs();
    next_u_ = exponential(g_, r_.lambda);
    next_p_ = exponential(g_, r_.planned);
    double done = 0, since = 0;
    while (done < r_.work) {
      if (++events_ > max_events_)
        return {t_, count_, false};
      if (since == 0)
        skip_quiet_intervals(done);
      const double need = std::min(tau_ - since, r_.work - done);
      const double end = t_ + need;
      if (std::min(next_u_, next_p_) < end) {
        // a planned interruption that fell in a checkpoint waits for it to end
        const double ran = std::max(0.0, std::min(next_u_, next_p_) - t_);
        done += ran;
        since += ran;
        t_ += ran;
        if (next_u_ <= next_p_) {
          done -= since; // back to the last checkpoint
          since = 0;
          unexpected();
        } else {
          planned();
          since = 0;
        }
        continue;
      }
      t_ = end;
      done += need;
      since += need;
      if (done >= r_.work)
        break;
      if (next_u_ < t_ + r_.delta) { // the checkpoint does not complete
        t_ = next_u_;
        done -= since;
        since = 0;
        unexpected();
        continue;
      }
      t_ += r_.delta;
      since = 0;
    }
    return {t_, count_, true};
  }

  /// The most loop passes a trial may take before it is given up (a bound on the work per trial).
  void limit_events(double events) { max_events_ = events; }

private:
  /// Whole intervals (train tau, then write the checkpoint) that end before the next
  /// interruption and before the last interval run as one jump: the event-by-event replay costs
  /// per interruption, not per checkpoint (a 1 ms interval over days of training took hours).
  /// One interval short of the interruption is left to the loop, so rounding cannot pass it.
  void skip_quiet_intervals(double& done)
  {
    const double cycle = tau_ + r_.delta;
    if (!std::isfinite(cycle) || cycle <= 0)
      return;
    const double quiet = (std::min(next_u_, next_p_) - t_) / cycle;
    const double last = std::ceil((r_.work - done) / tau_) - 1; // the last interval writes no checkpoint
    const double k = std::floor(std::min(quiet, last)) - 1;
    if (!(k >= 1))
      return;
    t_ += k * cycle;
    done += k * tau_;
  }

  void unexpected()
  {
    ++count_;
    next_u_ = t_ + exponential(g_, r_.lambda);
    if (is_hardware())
      repairs_.push_back(t_ + spec_.repair_s);
    restart();
  }

  void planned()
  {
    ++count_;
    t_ += r_.delta;
    next_p_ = t_ + exponential(g_, r_.planned);
    restart();
  }

  /// Waits until at most S nodes are in repair, then restarts; an unexpected interruption
  /// meanwhile starts it again.
  void restart()
  {
    double end = ready_at() + r_.restart;
    while (next_u_ < end) {
      t_ = next_u_;
      ++count_;
      next_u_ = t_ + exponential(g_, r_.lambda);
      if (is_hardware())
        repairs_.push_back(t_ + spec_.repair_s);
      end = ready_at() + r_.restart;
    }
    t_ = end;
    if (next_p_ < t_)
      next_p_ = t_ + exponential(g_, r_.planned);
  }

  bool is_hardware() { return uniform(g_) * r_.lambda < r_.lambda_hw && spec_.spare_nodes >= 0; }

  /// The cluster has been running: the nodes in repair when the job starts are Poisson with mean
  /// lambda_hw x repair, each with a uniform residual repair time.
  void steady_repairs()
  {
    const double m = r_.lambda_hw * spec_.repair_s;
    double u = uniform(g_), term = std::exp(-m), cdf = term;
    long long k = 0;
    while (u > cdf && k < 1000000) {
      ++k;
      term *= m / static_cast<double>(k);
      cdf += term;
    }
    for (long long i = 0; i < k; ++i)
      repairs_.push_back(uniform(g_) * spec_.repair_s);
    if (ready_at() > 0)
      restart(); // the job waits for its nodes before it starts
  }

  /// When at most S nodes are out for repair (now, or the completion that brings it there).
  double ready_at()
  {
    repairs_.erase(std::remove_if(repairs_.begin(), repairs_.end(), [&](double done) { return done <= t_; }),
                   repairs_.end());
    const auto out = static_cast<long long>(repairs_.size());
    if (spec_.spare_nodes < 0 || out <= spec_.spare_nodes)
      return t_;
    std::vector<double> sorted = repairs_;
    std::sort(sorted.begin(), sorted.end());
    return sorted[static_cast<std::size_t>(out - spec_.spare_nodes - 1)];
  }

  const ReliabilitySpec& spec_;
  const Rates& r_;
  double tau_;
  std::mt19937_64& g_;
  double t_ = 0;
  double next_u_ = 0;
  double next_p_ = 0;
  long long count_ = 0;
  double events_ = 0;
  double max_events_ = std::numeric_limits<double>::infinity();
  std::vector<double> repairs_;
};

double quantile(std::vector<double> v, double q)
{
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(std::floor(q * static_cast<double>(v.size() - 1)))];
}

void monte_carlo(const ReliabilitySpec& spec, const Rates& r, double tau, double closed_wall_s, double bound,
                 GoodputResult& out)
{
  out.trials_asked = spec.trials;
  out.seed = spec.seed;
  // the work is bounded before it starts: a trial costs about one pass per interruption (and per
  // restart cut short), the closed form's count; past the budget fewer trials run, and past
  // kMonteCarloMinTrials none, each saying so
  const double per_trial = 2 + 2 * (r.lambda + r.planned) * closed_wall_s;
  const double fit = std::floor(bound / per_trial);
  const long long trials = static_cast<long long>(std::min(static_cast<double>(spec.trials), fit));
  if (trials < std::min<long long>(spec.trials, kMonteCarloMinTrials)) {
    out.mc_note = "not run: a trial takes about " + std::to_string(static_cast<long long>(per_trial)) +
                  " events, past the bound of " + std::to_string(static_cast<long long>(bound)) +
                  " for " + std::to_string(kMonteCarloMinTrials) + " trials; the closed form stands";
    return;
  }
  if (trials < spec.trials)
    out.mc_note = std::to_string(trials) + " of " + std::to_string(spec.trials) + " trials run: each takes about " +
                  std::to_string(static_cast<long long>(per_trial)) + " events, bounded at " +
                  std::to_string(static_cast<long long>(bound)) + " in all";
  std::mt19937_64 g(static_cast<std::uint64_t>(spec.seed));
  std::vector<double> walls, ettrs;
  double interruptions = 0;
  // a trial that runs 50 times the closed form's interruptions is not converging to it
  const double most = std::max(1e4, 50 * per_trial);
  for (long long i = 0; i < trials; ++i) {
    Replay replay(spec, r, tau, g);
    replay.limit_events(most);
    Trial t = replay.run();
    if (!t.finished) {
      out.mc_note = "not run: trial " + std::to_string(i + 1) + " passed " + std::to_string(static_cast<long long>(most)) +
                    " events, 50 times the closed form's; interruptions outpace the work";
      return;
    }
    walls.push_back(t.wall);
    ettrs.push_back(r.work / t.wall);
    interruptions += static_cast<double>(t.interruptions);
  }
  out.trials = trials;
  out.mc_wall_p05 = quantile(walls, 0.05);
  out.mc_wall_p50 = quantile(walls, 0.5);
  out.mc_wall_p95 = quantile(walls, 0.95);
  double sum = 0;
  for (double e : ettrs)
    sum += e;
  out.mc_ettr_mean = sum / static_cast<double>(ettrs.size());
  out.mc_ettr_p05 = quantile(ettrs, 0.05);
  out.mc_ettr_p95 = quantile(ettrs, 0.95);
  out.mc_interruptions_mean = interruptions / static_cast<double>(trials);
}

} // namespace

double goodput_wall_s(const ReliabilitySpec& spec, const GoodputInput& in, double interval_s)
{
  const Rates r = rates_of(spec, in, nullptr);
  const double tau = interval_s > 0 ? interval_s : spec.interval_s > 0 ? spec.interval_s : daly_interval(r);
  return closed_wall(r, tau);
}

double goodput_optimal_interval_s(const ReliabilitySpec& spec, const GoodputInput& in)
{
  return daly_interval(rates_of(spec, in, nullptr));
}

GoodputResult goodput(const ReliabilitySpec& spec, const GoodputInput& in)
{
  GoodputResult out;
  Rates r = rates_of(spec, in, &out);
  out.unexpected_per_day = r.lambda * kDay;
  out.planned_per_day = r.planned * kDay;
  out.planned_scaled = spec.planned_per_day < 0;
  out.mtbf_s = r.lambda > 0 ? 1 / r.lambda : std::numeric_limits<double>::infinity();
  out.write_s = r.delta;
  out.read_s = r.read;
  out.interval_optimal = spec.interval_s <= 0;
  const double tau = out.interval_optimal ? daly_interval(r) : spec.interval_s;
  out.interval_s = tau;
  out.restart_s = r.restart;
  out.p_no_spare = 1 - r.available;
  out.nodes = static_cast<double>(in.gpus) / in.gpus_per_node;
  out.spare_nodes = spec.spare_nodes;
  out.work_s = r.work;
  out.wall_s = closed_wall(r, tau);
  out.progresses = std::isfinite(out.wall_s);
  out.window_days = spec.window_days;
  out.window_unexpected = r.lambda * spec.window_days * kDay;
  out.window_planned = r.planned * spec.window_days * kDay;
  if (!out.progresses)
    return out;
  out.ettr = r.work / out.wall_s;
  out.unexpected = r.lambda * out.wall_s;
  out.planned = r.planned * out.wall_s;
  out.lost_s = std::isinf(tau) ? 0 : out.unexpected * (tau + r.delta) / 2;
  out.checkpoint_total_s = (std::isinf(tau) ? 0 : r.work * r.delta / tau) + out.planned * r.delta;
  out.restart_total_s = out.unexpected * out.restart_s + out.planned * r.restart;
  out.spare_wait_s = out.wall_s * (1 - r.available);
  const double spares = spec.spare_nodes > 0 ? static_cast<double>(spec.spare_nodes) * in.gpus_per_node : 0;
  out.gpu_hours = (static_cast<double>(in.gpus) + spares) * out.wall_s / 3600.0;
  out.cost_usd = out.gpu_hours * in.usd_per_gpu_hour;
  monte_carlo(spec, r, tau, out.wall_s, in.monte_carlo_events, out);
  return out;
}

} // namespace clustersim
