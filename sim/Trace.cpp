#include "sim/Trace.hpp"

#include "sim/Breakdown.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace clustersim {

namespace {

using Json = nlohmann::ordered_json;

/// A stream's row in the trace: its GPU's place in the node, then the stream.
int trace_tid(std::uint32_t rank, int per_node, Stream s)
{
  return static_cast<int>(rank % static_cast<std::uint32_t>(per_node)) * kStreamCount + static_cast<int>(s);
}

/// The tasks of one stream of one rank, and the compute stream's idle gaps named after what it
/// waited for.
void stream_events(Json& events, const Workload& w, const ExecutionResult& r, const TraceRequest& only,
                   std::uint32_t rank, int s, int node, int t)
{
  double cursor = 0;
  for (TaskId id : w.stream(rank, static_cast<Stream>(s))) {
    const Task& task = w.task(id);
    if (!only.traced_micro_batch(task.micro_batch)) {
      cursor = std::max(cursor, r.end[id]); // left out, and not an idle gap of the stream either
      continue;
    }
    double start = r.start[id];
    double end = r.end[id];
    if (s == 0 && start > cursor) {
      // an idle gap of the compute stream: name it after what the task waited for
      const TaskId blocker = latest_dependency(w, r, id);
      std::string why =
          blocker == kNoTask ? "idle" : std::string("wait ") + to_string(w.task(blocker).category);
      events.push_back({{"ph", "X"},
                        {"name", why},
                        {"cat", "idle"},
                        {"pid", node},
                        {"tid", t},
                        {"ts", cursor * 1e6},
                        {"dur", (start - cursor) * 1e6}});
    }
    Json args{{"rank", task.rank}, {"layer", task.layer}, {"micro_batch", task.micro_batch}}; // -1: none
    if (task.kind != TaskKind::compute)
      args["bytes"] = task.amount;
    if (const double ready = ready_time(w, r, id); ready < start)
      args["waited_for_peers_us"] = (start - ready) * 1e6;
    events.push_back({{"ph", "X"},
                      {"name", w.names()[task.name]},
                      {"cat", to_string(task.category)},
                      {"pid", node},
                      {"tid", t},
                      {"ts", start * 1e6},
                      {"dur", (end - start) * 1e6},
                      {"args", args}});
    cursor = std::max(cursor, end);
  }
  if (s == 0 && cursor < r.makespan)
    events.push_back({{"ph", "X"},
                      {"name", "idle until the step ends"},
                      {"cat", "idle"},
                      {"pid", node},
                      {"tid", t},
                      {"ts", cursor * 1e6},
                      {"dur", (r.makespan - cursor) * 1e6}});
}

/// Transfers between two traced streams: an arrow from the send's start to the receive's end.
void flow_events(Json& events, const Workload& w, const ExecutionResult& r, const ClusterGraph& cluster,
                 const TraceRequest& only)
{
  const int per_node = cluster.platform().node.gpus;
  for (TaskId send : w.sends()) {
    const Task& st = w.task(send);
    const Task& rt = w.task(st.target);
    if (!only.traced(st.rank) || !only.traced(rt.rank) || !only.traced(st.stream) || !only.traced(rt.stream) ||
        !only.traced_micro_batch(st.micro_batch))
      continue;
    events.push_back({{"ph", "s"},
                      {"name", w.names()[st.name]},
                      {"cat", to_string(st.category)},
                      {"id", send},
                      {"pid", cluster.node_of(static_cast<int>(st.rank))},
                      {"tid", trace_tid(st.rank, per_node, st.stream)},
                      {"ts", r.start[send] * 1e6}});
    events.push_back({{"ph", "f"},
                      {"bp", "e"},
                      {"name", w.names()[st.name]},
                      {"cat", to_string(st.category)},
                      {"id", send},
                      {"pid", cluster.node_of(static_cast<int>(rt.rank))},
                      {"tid", trace_tid(rt.rank, per_node, rt.stream)},
                      {"ts", r.end[st.target] * 1e6}});
  }
}

} // namespace

std::string chrome_trace(const Workload& w, const ExecutionResult& r, const ClusterGraph& cluster,
                         const std::string& title, const TraceRequest& only)
{
  Json events = Json::array();
  const int per_node = cluster.platform().node.gpus;
  std::vector<bool> named_node(static_cast<std::size_t>(cluster.nodes()), false);
  for (std::uint32_t rank = 0; rank < w.ranks(); ++rank) {
    if (!w.simulated(rank) || !only.traced(rank))
      continue;
    const int node = cluster.node_of(static_cast<int>(rank));
    if (!named_node[static_cast<std::size_t>(node)]) {
      named_node[static_cast<std::size_t>(node)] = true;
      events.push_back({{"ph", "M"},
                        {"name", "process_name"},
                        {"pid", node},
                        {"tid", 0},
                        {"args", {{"name", "node " + std::to_string(node)}}}});
      events.push_back(
          {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", node}, {"tid", 0}, {"args", {{"sort_index", node}}}});
    }
    for (int s = 0; s < kStreamCount; ++s) {
      if (w.stream(rank, static_cast<Stream>(s)).empty() || !only.traced(static_cast<Stream>(s)))
        continue;
      const int t = trace_tid(rank, per_node, static_cast<Stream>(s));
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", node},
                        {"tid", t},
                        {"args", {{"name", "gpu" + std::to_string(rank) + " " + to_string(static_cast<Stream>(s))}}}});
      events.push_back(
          {{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", node}, {"tid", t}, {"args", {{"sort_index", t}}}});
      stream_events(events, w, r, only, rank, s, node, t);
    }
  }
  flow_events(events, w, r, cluster, only);
  Json trace;
  trace["traceEvents"] = std::move(events);
  trace["displayTimeUnit"] = "ms";
  trace["metadata"] = {{"title", title},
                       {"step_time_s", r.makespan},
                       {"ranks", w.ranks()},
                       {"simulated_ranks", w.simulated_ranks()},
                       {"note", w.simulated_ranks() < w.ranks()
                                    ? "folded simulation: each simulated rank stands for its tensor-, context- and "
                                      "data-parallel replicas"
                                    : "every rank simulated"}};
  return trace.dump() + "\n";
}

} // namespace clustersim
