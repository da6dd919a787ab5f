#pragma once
/// A sweep run as a Slurm job array (`clustersim run SWEEP --out DIR --slurm`).
///
/// Shard I of N runs `clustersim run SWEEP --shard I/N --out DIR/shards/I` as task I of an
/// array job; a job that depends on the whole array (afterok) merges the shards into DIR, and
/// one that runs only if a task failed (afternotok) writes DIR/slurm/failed.txt naming the
/// shards that have no results. DIR/slurm/ holds the scripts, the task logs and a manifest
/// (the experiment, its content hash, N, the job ids). Submitting again into the same DIR
/// resubmits only the shards without results: the other shards and the merge are reused.
/// `--dry-run` prints the scripts and the sbatch commands and writes nothing.

#include "sim/study/Sweep.hpp"
#include "topology/config/Yaml.hpp"

#include <string>
#include <vector>

namespace clustersim {

struct SlurmOptions {
  std::string experiment;   ///< the sweep's file, as given
  std::string out;          ///< DIR
  int array_size = 0;       ///< shards (when given; else the manifest's, else min(points, 100))
  bool array_size_given = false;
  std::string partition;    ///< empty: the cluster's default
  std::string account;      ///< --account: empty: the user's default
  std::string qos;          ///< --qos: empty: the partition's default
  std::vector<std::string> sbatch_args; ///< further #SBATCH lines as written ("--mem=8G", "--exclusive")
  std::string time;         ///< Slurm time limit per task; empty: the partition's
  int cpus_per_task = 1;    ///< also the sweep's --jobs inside a task
  bool dry_run = false;
  bool wait = false;        ///< block until the jobs end; exit 1 if a shard failed
  bool full = false;        ///< pass --full to every shard
};

/// The shard indices as Slurm's --array list: "0-3", "1,4-6".
std::string array_ranges(const std::vector<int>& indices);
/// Whether `t` is a Slurm time limit: M, M:S, H:M:S, D-H, D-H:M or D-H:M:S.
bool is_slurm_time(const std::string& t);

/// Writes and submits (or prints, with dry_run) the job array, the merge and the failure note
/// of a sweep; returns the process exit code.
int submit_slurm(const YamlNode& doc, const SweepSpec& sweep, const SlurmOptions& options);

} // namespace clustersim
