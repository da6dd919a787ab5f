#include "TrainingSpec.hpp"

#include "ModelSpec.hpp"
#include "Suggest.hpp"

#include <algorithm>

namespace clustersim {

const std::vector<std::string>& recompute_names()
{
  static const std::vector<std::string> names{"none", "selective", "full"};
  return names;
}

const std::vector<std::string>& schedule_names()
{
  static const std::vector<std::string> names{"gpipe", "1f1b", "interleaved"};
  return names;
}

const char* to_string(Recompute r)
{
  return recompute_names()[static_cast<std::size_t>(r)].c_str();
}

const char* to_string(Schedule s)
{
  return schedule_names()[static_cast<std::size_t>(s)].c_str();
}

namespace {

std::size_t index_of(const std::vector<std::string>& v, const std::string& s)
{
  return static_cast<std::size_t>(std::find(v.begin(), v.end(), s) - v.begin());
}

} // namespace

TrainingSpec parse_training(const YamlNode& node, int gpus, const ModelSpec& model)
{
  TrainingSpec t;
  YamlMap m(node, "training");
  auto int_at = [&](const char* key, int fallback, int lo, int hi) {
    return static_cast<int>(m.get_int(key, fallback, lo, hi));
  };
  t.tp = int_at("tp", 1, 1, 1 << 16);
  t.pp = int_at("pp", 1, 1, 1 << 16);
  t.cp = int_at("cp", 1, 1, 1 << 16);
  t.ep = int_at("ep", 1, 1, 1 << 16);
  t.vpp = int_at("vpp", 1, 1, 1 << 10);
  bool has_dp = m.has("dp");
  t.dp = int_at("dp", 0, 1, 1 << 24);
  if (!has_dp) {
    if (gpus % t.model_parallel() != 0)
      node.fail("tp*pp*cp = " + std::to_string(t.model_parallel()) + " does not divide the " + std::to_string(gpus) +
                    " GPUs",
                "a layout whose tp*pp*cp divides cluster.gpus");
    t.dp = gpus / t.model_parallel();
  }
  if (auto s = m.find("pipeline_schedule"))
    t.schedule = static_cast<Schedule>(index_of(schedule_names(), s->as_choice(schedule_names(), "pipeline schedule")));
  else if (t.vpp > 1)
    t.schedule = Schedule::interleaved;
  t.sequence_parallel = m.get_bool("sequence_parallel", false);
  t.zero = int_at("zero", 0, 0, 3);
  t.recompute =
      static_cast<Recompute>(index_of(recompute_names(), m.get_choice("recompute", "none", recompute_names())));
  t.micro_batch = int_at("micro_batch", 1, 1, 1 << 20);
  t.global_batch = int_at("global_batch", t.micro_batch * t.dp, 1, 1 << 30);
  if (auto p = m.find("precision")) {
    static const std::vector<std::string> train_precisions{"fp32", "tf32", "fp16", "bf16", "fp8"};
    t.precision = parse_precision(p->as_choice(train_precisions, "precision"));
  }
  t.flash_attention = m.get_bool("flash_attention", false);
  if (auto o = m.find("overlap")) {
    YamlMap om(*o, "training.overlap");
    t.overlap.grad_reduce = om.get_bool("grad_reduce", t.overlap.grad_reduce);
    t.overlap.param_gather = om.get_bool("param_gather", t.overlap.param_gather);
    t.overlap.tp_comm = om.get_bool("tp_comm", t.overlap.tp_comm);
    om.finish();
  }
  t.bucket_bytes = m.get_quantity("bucket_size", t.bucket_bytes, Quantity::bytes);
  if (auto o = m.find("order")) {
    static const std::vector<std::string> dims{"tp", "cp", "dp", "pp"};
    std::vector<std::string> order;
    for (const auto& item : o->items()) {
      std::string d = item.as_choice(dims, "parallel dimension");
      if (std::find(order.begin(), order.end(), d) != order.end())
        item.fail("'" + d + "' appears twice in order", "each of tp, cp, dp, pp once");
      order.push_back(d);
    }
    if (order.size() != dims.size())
      o->fail("order must list tp, cp, dp and pp", "a permutation of [tp, cp, dp, pp], innermost first");
    t.order = order;
  }
  t.collective_algo = m.get_string("collective_algo", "auto");
  if (auto st = m.find("state_bytes")) {
    YamlMap sm(*st, "training.state_bytes");
    t.weight_bytes = sm.get_number("weights", t.weight_bytes, 0, 64);
    t.grad_bytes = sm.get_number("grads", t.grad_bytes, 0, 64);
    t.optimizer_bytes = sm.get_number("optimizer", t.optimizer_bytes, 0, 64);
    sm.finish();
  }
  m.finish();

  // Divisibility with the position of the field that breaks it.
  auto at = [&](const char* key) { return m.find(key) ? m.find(key)->where() : node.where(); };
  if (t.gpus() != gpus)
    throw ConfigError(at("dp"),
                      "tp*pp*cp*dp = " + std::to_string(t.tp) + "*" + std::to_string(t.pp) + "*" +
                          std::to_string(t.cp) + "*" + std::to_string(t.dp) + " = " + std::to_string(t.gpus()) +
                          " but cluster.gpus is " + std::to_string(gpus),
                      "a layout with tp*pp*cp*dp == " + std::to_string(gpus));
  if (model.heads % t.tp != 0)
    throw ConfigError(at("tp"),
                      "tp " + std::to_string(t.tp) + " does not divide the model's " + std::to_string(model.heads) +
                          " attention heads",
                      "a divisor of heads");
  if (model.kv_heads % t.tp != 0 && t.tp % model.kv_heads != 0)
    throw ConfigError(at("tp"),
                      "tp " + std::to_string(t.tp) + " and kv_heads " + std::to_string(model.kv_heads) +
                          " do not divide one another",
                      "tp dividing kv_heads, or kv_heads dividing tp (replicated KV heads)");
  if (t.global_batch % (t.micro_batch * t.dp) != 0)
    throw ConfigError(at("global_batch"),
                      "global_batch " + std::to_string(t.global_batch) + " is not a multiple of micro_batch*dp = " +
                          std::to_string(t.micro_batch) + "*" + std::to_string(t.dp),
                      "a multiple of " + std::to_string(t.micro_batch * t.dp));
  if (t.pp > model.layers)
    throw ConfigError(at("pp"),
                      "pp " + std::to_string(t.pp) + " exceeds the model's " + std::to_string(model.layers) + " layers",
                      "at most one pipeline stage per layer");
  if (t.vpp > 1 && t.pp == 1)
    throw ConfigError(at("vpp"), "vpp " + std::to_string(t.vpp) + " needs pipeline parallelism", "vpp: 1 when pp is 1");
  if (t.vpp > 1 && t.pp * t.vpp > model.layers)
    throw ConfigError(at("vpp"),
                      "pp*vpp = " + std::to_string(t.pp * t.vpp) + " chunks exceed the model's " +
                          std::to_string(model.layers) + " layers",
                      "pp*vpp <= layers");
  if (t.schedule == Schedule::interleaved && t.vpp < 2)
    throw ConfigError(at("pipeline_schedule"), "the interleaved schedule needs vpp >= 2", "vpp: 2 or more");
  if (t.schedule == Schedule::interleaved && t.micro_batches() % t.pp != 0)
    throw ConfigError(at("global_batch"),
                      "the interleaved schedule needs micro-batches per pipeline (" +
                          std::to_string(t.micro_batches()) + ") to be a multiple of pp (" + std::to_string(t.pp) + ")",
                      "global_batch / (micro_batch*dp) divisible by pp");
  if (model.seq_len % t.cp != 0 || (t.cp > 1 && (model.seq_len / t.cp) % 2 != 0))
    throw ConfigError(at("cp"),
                      "cp " + std::to_string(t.cp) + " does not split seq_len " + std::to_string(model.seq_len) +
                          " into even chunks",
                      "cp such that seq_len / cp is even (load-balanced ring attention uses 2 chunks per rank)");
  if (t.sequence_parallel && t.tp == 1)
    throw ConfigError(at("sequence_parallel"), "sequence_parallel needs tp > 1",
                      "sequence_parallel: false when tp is 1");
  if (model.experts > 1 && model.experts % t.ep != 0)
    throw ConfigError(
        at("ep"), "ep " + std::to_string(t.ep) + " does not divide the " + std::to_string(model.experts) + " experts",
        "a divisor of experts");
  if (t.ep > 1 && (t.dp * t.cp) % t.ep != 0)
    throw ConfigError(at("ep"),
                      "ep " + std::to_string(t.ep) + " does not divide dp*cp = " + std::to_string(t.dp * t.cp),
                      "a divisor of dp*cp (experts are sharded over data-parallel ranks)");
  if (t.ep > 1 && model.experts == 1)
    throw ConfigError(at("ep"), "ep " + std::to_string(t.ep) + " on a dense model", "ep: 1 unless experts > 1");
  return t;
}

void check_training(const TrainingSpec& t, int gpus, const ModelSpec& model, const SourceLocation& where)
{
  // Re-run the YAML checks on a synthetic document so that both paths share one rule set.
  std::string doc = "tp: " + std::to_string(t.tp) + "\npp: " + std::to_string(t.pp) + "\ncp: " + std::to_string(t.cp) +
                    "\ndp: " + std::to_string(t.dp) + "\nep: " + std::to_string(t.ep) +
                    "\nvpp: " + std::to_string(t.vpp) + "\npipeline_schedule: " + to_string(t.schedule) +
                    "\nsequence_parallel: " + (t.sequence_parallel ? "true" : "false") +
                    "\nmicro_batch: " + std::to_string(t.micro_batch) +
                    "\nglobal_batch: " + std::to_string(t.global_batch) + "\n";
  try {
    parse_training(YamlNode::load_string(doc, where.file), gpus, model);
  } catch (const ConfigError& e) {
    throw ConfigError(where, e.problem(), e.valid());
  }
}

} // namespace clustersim
