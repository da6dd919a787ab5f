#pragma once
/// Output files of a command, all or nothing: their locations are checked before any work
/// starts (check_file / check_directory), their contents are staged in memory, then every file
/// is written to a temporary name and, once all are written, published:
/// * into a directory that does not exist yet, by one rename of a staged copy of it (atomic);
/// * into one that exists, by a rename per file, under the directory's lock and after a journal
///   (kPublishJournal) names them all, so that a crash between two renames is finished by the
///   next command that writes or reads the directory (recover_outputs).
/// A failure removes the temporaries and is a ConfigError on the flag that named the file.

#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace clustersim {

class OutputSet {
public:
  /// `flag` names the option the path came from ("--out"), for the error message.
  void add(std::string path, std::string contents, std::string flag);
  /// Throws ConfigError unless every file can be written: not two on one path, each a new
  /// path or a regular file (not a directory, device, FIFO or symbolic link) in a writable
  /// directory. Callers check the set they will write before they run anything.
  void check() const;
  /// Checks, writes every file to its temporary, then publishes them under a lock on each
  /// directory (so two runs into one directory publish one after the other); on a failure the
  /// files and directories it made are removed. `stop_after` (tests only) stops after that many
  /// renames, as a crash would, leaving the journal.
  void commit(std::size_t stop_after = std::numeric_limits<std::size_t>::max()) const;

private:
  struct File {
    std::string path;
    std::string contents;
    std::string flag;
  };
  std::vector<File> files_;
};

/// The journal of a publish in progress, in the directory it publishes into: pairs of paths
/// (temporary, target), each NUL-terminated.
inline constexpr const char* kPublishJournal = ".clustersim-publish";

/// Finishes a publish into `dir` that a crash cut short (its journal is there); does nothing
/// otherwise. Readers of a directory that `run --out` writes call it first.
void recover_outputs(const std::string& dir);

/// Throws ConfigError (on `flag`) unless `path` can be written as a file: a new path or a
/// regular file (not a directory, device, FIFO or symbolic link), its nearest existing ancestor
/// a writable directory.
void check_file(const std::string& path, const std::string& flag);
/// The same for a directory that will hold output files.
void check_directory(const std::string& dir, const std::string& flag);

/// A sweep's result files in `out`: results.csv, results.json (the rows under their experiment's
/// name and point count) and results.jsonl (a row per line); returns the CSV, which figures read.
std::string add_result_files(OutputSet& files, const std::string& out, const std::string& name,
                             const std::vector<nlohmann::ordered_json>& rows, std::size_t points);

} // namespace clustersim
