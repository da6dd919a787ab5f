#pragma once
/// The seam between strategies and the simulator: per-rank programs of tasks.
///
/// A rank runs several in-order *streams* (like CUDA streams): compute, and one per kind of
/// communication. A task starts when the previous task of its stream has finished and all of
/// its dependencies (any task of the same rank) have finished. Point-to-point tasks come in
/// matched send/recv pairs; a collective is one task per member rank referring to a shared
/// collective call, and starts when every member's task is ready (NCCL semantics: a
/// collective makes progress only once all ranks have launched it).
///
/// A rank's host thread issues its compute-stream tasks in stream order (as a framework's
/// Python thread launches kernels): issuing a task takes its `host` seconds of CPU after the
/// previous one was issued, and the task starts no earlier than its issue. The host runs ahead
/// of the GPU except where it synchronises: a compute task that depends on a `host_sync` task
/// (any stream) is issued only once that task has finished (the host blocked on it:
/// torch.cuda.synchronize, .item(), .tolist()).
///
/// Strategies never see SimGrid; the simulator never sees a transformer. Ranks are GPU ids.
///
/// A workload may be *folded*: only some ranks are simulated (they have programs), the others
/// mirror one of them exactly (symmetric replicas). Groups still list every member, so
/// collectives involving mirrors keep their real flows and paths; mirrors just have no tasks.

#include "strategies/workload/InlineVector.hpp"
#include "strategies/workload/PodVector.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

namespace clustersim {

/// pp_* streams: activations travel on the *_fwd pair, gradients on the *_bwd pair; each
/// stream holds one direction only, so matched sends and receives stay in order.
enum class Stream : std::uint8_t {
  compute,
  tp,
  cp,
  pp_send_fwd,
  pp_recv_fwd,
  pp_send_bwd,
  pp_recv_bwd,
  dp,        ///< gradient reductions
  dp_gather, ///< parameter gathers (ZeRO)
  ep,
  embed ///< embedding-gradient reduction between first and last stage
};
constexpr int kStreamCount = 11;
const char* to_string(Stream s);

enum class TaskKind : std::uint8_t { compute, send, recv, collective };

/// What a task is, for the report's breakdown and the trace.
enum class Category : std::uint8_t {
  forward,
  backward,
  recompute,
  optimizer,
  tp_comm,
  cp_comm,
  pp_comm,
  dp_comm,
  ep_comm,
  other
};
constexpr int kCategoryCount = 10;
const char* to_string(Category c);
bool is_communication(Category c);

/// sendrecv: every member sends `bytes` to the next member of the group and receives from the
/// previous one (nccl-tests sendrecv_perf; a ring-attention step).
enum class CollOp : std::uint8_t { all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, sendrecv };
const std::vector<std::string>& coll_op_names();
const char* to_string(CollOp op);

using TaskId = std::uint32_t;
/// "No task": a position without a task (a rank outside a group, a mirror), or no dependency.
constexpr TaskId kNoTask = static_cast<TaskId>(-1);

/// A task's dependencies while a step is built: almost always one or two ids, so up to four
/// are held inline (a step at 16k GPUs makes tens of millions of these lists; as std::vectors
/// their allocations were a fifth of the build).
using TaskIds = InlineVector<TaskId, 4>;

/// One task: 32 bytes, two to a cache line (a step at 16k GPUs holds about 40 M of them, and
/// every byte of a task is a page the kernel zeroes and the engine reads). Its dependencies are
/// deps_[deps_begin, next task's deps_begin): a task's list is appended when it is made.
struct Task {
  double amount = 0;        ///< compute: seconds; send/recv: bytes; collective: see CollectiveCall
  std::uint32_t target = 0; ///< send/recv: the matching task; collective: the call index
  std::uint32_t deps_begin = 0;
  std::uint32_t rank = 0;
  union {
    std::uint32_t member; ///< collective: index of this rank in the call's group
    float host;           ///< compute on Stream::compute: seconds of CPU issuing it (see above)
  };
  std::int32_t micro_batch : 24; ///< -1: none (Workload::set_label refuses what does not fit)
  std::uint8_t name;             ///< index into Workload::names
  std::int32_t layer : 19;       ///< -1: none
  bool host_sync : 1;            ///< the compute tasks that depend on it are issued after it ends
  TaskKind kind : 2;
  Stream stream : 4;
  Category category : 4;

  Task()
      : member(0), micro_batch(-1), name(0), layer(-1), host_sync(false), kind(TaskKind::compute),
        stream(Stream::compute), category(Category::other)
  {
  }

  /// Seconds the host spends issuing this task (compute tasks of the compute stream), else 0.
  double host_seconds() const
  {
    return kind == TaskKind::compute && stream == Stream::compute ? static_cast<double>(host) : 0.0;
  }
};
static_assert(sizeof(Task) == 32, "a task is 32 bytes: two to a cache line");
/// The largest micro-batch and layer index a task can carry.
inline constexpr int kMaxTaskMicroBatch = (1 << 23) - 1;
inline constexpr int kMaxTaskLayer = (1 << 18) - 1;

/// A group of ranks a collective runs over (a TP group, a DP group, ...).
struct RankGroup {
  std::vector<std::uint32_t> ranks;
};

struct CollectiveCall {
  CollOp op = CollOp::all_reduce;
  std::uint32_t group = 0;
  /// nccl-tests convention: all_reduce / broadcast / reduce: the buffer size; all_gather: the
  /// gathered (output) size; reduce_scatter: the input size; all_to_all: bytes each rank sends
  /// in total; sendrecv: bytes each rank sends to the next.
  double bytes = 0;
  std::uint16_t algo = 0; ///< 0 = automatic, else an index into Workload::algo_names
  Category category = Category::other;
  Stream stream = Stream::compute;
  std::uint32_t present = 0; ///< its simulated members (the tasks it has)
};

class Workload {
public:
  explicit Workload(std::uint32_t ranks = 0);

  std::uint32_t ranks() const { return ranks_; }
  /// Whether a rank has tasks (false for the mirrors of a folded workload).
  bool simulated(std::uint32_t rank) const { return simulated_.empty() || simulated_[rank]; }
  /// Restricts task creation to these ranks (call before adding tasks).
  void simulate_only(const std::vector<std::uint32_t>& ranks);
  std::uint32_t simulated_ranks() const;
  const PodVector<Task>& tasks() const { return tasks_; }
  const Task& task(TaskId id) const { return tasks_[id]; }
  const std::vector<RankGroup>& groups() const { return groups_; }
  const std::vector<CollectiveCall>& collectives() const { return collectives_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<std::string>& algo_names() const { return algo_names_; }
  /// Task ids of one stream of one rank, in order, as an array: made on first use and kept (a
  /// step's engine walks streams by next() and never needs them; see stream()). Not for two
  /// threads at once: a workload is read by the one that built it (runs in parallel are processes).
  const std::vector<TaskId>& program(std::uint32_t rank, Stream s) const;
  /// The tasks of one stream of one rank, in order, walked by next() (nothing is allocated).
  class StreamTasks {
  public:
    class iterator {
    public:
      using value_type = TaskId;
      using difference_type = std::ptrdiff_t;
      using reference = TaskId;
      using pointer = void;
      using iterator_category = std::forward_iterator_tag;
      iterator(const Workload* w, TaskId id) : w_(w), id_(id) {}
      TaskId operator*() const { return id_; }
      iterator& operator++()
      {
        id_ = w_->next(id_);
        return *this;
      }
      bool operator==(const iterator& o) const { return id_ == o.id_; }
      bool operator!=(const iterator& o) const { return id_ != o.id_; }

    private:
      const Workload* w_;
      TaskId id_;
    };
    StreamTasks(const Workload* w, TaskId first) : w_(w), first_(first) {}
    iterator begin() const { return {w_, first_}; }
    iterator end() const { return {w_, kNoTask}; }
    bool empty() const { return first_ == kNoTask; }

  private:
    const Workload* w_;
    TaskId first_;
  };
  StreamTasks stream(std::uint32_t rank, Stream s) const { return {this, first(rank, s)}; }
  /// The first and the last task of one stream of one rank, or kNoTask.
  TaskId first(std::uint32_t rank, Stream s) const { return heads_[rank * kStreamCount + static_cast<std::size_t>(s)]; }
  TaskId last(std::uint32_t rank, Stream s) const { return tails_[rank * kStreamCount + static_cast<std::size_t>(s)]; }
  /// The task before `id` on its stream, or kNoTask (a stream's ids increase: tasks are
  /// appended to their stream as they are made).
  TaskId previous(TaskId id) const;
  /// Every send task, in the order they were made.
  const PodVector<TaskId>& sends() const { return sends_; }
  /// The task after `id` on its stream, or kNoTask.
  TaskId next(TaskId id) const { return next_[id]; }
  /// Whether every rank computes on one stream only (so a GPU never runs two kernels at once).
  bool one_compute_stream() const { return one_compute_stream_; }
  /// Dependencies of a task.
  const TaskId* deps_begin(TaskId id) const { return deps_.data() + tasks_[id].deps_begin; }
  const TaskId* deps_end(TaskId id) const
  {
    return deps_.data() + (id + 1 < tasks_.size() ? tasks_[id + 1].deps_begin : deps_.size());
  }

  // ---- building ----
  std::uint32_t add_group(std::vector<std::uint32_t> ranks);
  std::uint16_t algo_index(const std::string& algo); ///< "auto" → 0
  std::uint8_t name_index(const std::string& name);

  /// Labels a task gets: its category, name, layer and micro-batch.
  struct Label {
    Category category = Category::other;
    std::string name;
    int layer = -1;
    int micro_batch = -1;
  };

  /// `host`: seconds of CPU to issue it (compute stream only; see the file comment).
  TaskId add_compute(std::uint32_t rank, double seconds, const Label& label, const TaskIds& deps,
                     Stream stream = Stream::compute, double host = 0);
  /// The host waits for task `id` to finish before it issues the compute tasks depending on it.
  void set_host_sync(TaskId id)
  {
    tasks_[id].host_sync = true;
    has_host_ = true;
  }
  /// Whether any task has a host cost or a host synchronisation (the engines skip the host
  /// timeline otherwise).
  bool has_host() const { return has_host_; }
  /// A matched pair; returns {send, recv}.
  std::pair<TaskId, TaskId> add_p2p(std::uint32_t from, std::uint32_t to, double bytes, Stream send_stream,
                                    Stream recv_stream, const Label& label, const TaskIds& send_deps,
                                    const TaskIds& recv_deps);
  /// A collective call; `deps[i]` are the dependencies of member i's task. Returns the member
  /// tasks in group order (-1 for members that are not simulated).
  std::vector<TaskId> add_collective(CollOp op, std::uint32_t group, double bytes, Stream stream, const Label& label,
                                     const std::vector<TaskIds>& deps, std::uint16_t algo = 0);

  /// Appends every task of `other`, its rank r placed on rank `gpu_of[r]` of this workload:
  /// another job placed on its GPUs of the cluster, or, appended again on the same GPUs, the
  /// job's next step. Each stream's new tasks follow its old ones in order, as a job's next step
  /// follows its last on a CUDA stream. Both workloads simulate every rank (none is folded).
  /// Returns the id of the first appended task.
  TaskId append(const Workload& other, const std::vector<std::uint32_t>& gpu_of);

  std::size_t memory_bytes() const;

  /// What-ifs on a built step (stragglers, jitter): a compute task's duration.
  void set_compute_seconds(TaskId id, double seconds) { tasks_[id].amount = seconds; }

  /// FLOPs of compute tasks, kept apart from the tasks and only where asked for (an export to
  /// a trace format that carries them; the engines never read them).
  void keep_flops() { keep_flops_ = true; }
  bool keeps_flops() const { return keep_flops_; }
  void set_flops(TaskId id, double flops);
  /// A compute task's FLOPs; 0 where none were given.
  double flops(TaskId id) const { return id < flops_.size() ? flops_[id] : 0.0; }

private:
  TaskId push(Task t, const TaskIds& deps);
  /// Grows the per-stream arrays to `streams` rank-streams.
  void add_streams(std::size_t streams);
  /// Sets a task's category, name, layer and micro-batch (refusing what its fields cannot hold).
  void set_label(Task& t, const Label& label);

  std::uint32_t ranks_;
  std::vector<std::uint8_t> simulated_; ///< empty: every rank
  PodVector<Task> tasks_;
  PodVector<TaskId> deps_;
  PodVector<TaskId> sends_;
  PodVector<TaskId> next_; ///< per task: the next task of its stream (an engine walks streams by it)
  PodVector<TaskId> heads_; ///< per rank and stream: its first task, or kNoTask
  PodVector<TaskId> tails_; ///< per rank and stream: its last task, or kNoTask
  /// per rank and stream: its tasks as an array, once program() has been asked for it
  mutable std::vector<std::vector<TaskId>> programs_;
  std::vector<std::uint8_t> compute_stream_; ///< per rank: the stream its compute tasks are on
  bool one_compute_stream_ = true;
  std::vector<RankGroup> groups_;
  std::vector<CollectiveCall> collectives_;
  std::vector<std::string> names_;
  std::uint8_t last_name_ = 0; ///< name_index's last answer
  bool has_host_ = false;
  bool keep_flops_ = false;
  PodVector<double> flops_; ///< per task up to the last one given FLOPs
  std::vector<std::string> algo_names_{"auto"};
};

} // namespace clustersim
