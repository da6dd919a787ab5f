#pragma once
/// Output files of a command, all or nothing: their locations are checked before any work
/// starts (check_file / check_directory), their contents are staged in memory, then every file
/// is written to a temporary name beside it and, once all are written, renamed into place. A
/// failure removes the temporaries and is a ConfigError on the flag that named the file.

#include <string>
#include <utility>
#include <vector>

namespace clustersim {

class OutputSet {
public:
  /// `flag` names the option the path came from ("--out"), for the error message.
  void add(std::string path, std::string contents, std::string flag);
  /// Throws ConfigError unless every file can be written: not two on one path, each a new
  /// path or a regular file (not a directory, device, FIFO or symbolic link) in a writable
  /// directory. Callers check the set they will write before they run anything.
  void check() const;
  /// Checks, creates missing directories, writes every file beside its target, then renames
  /// them into place under a lock on each directory (so two runs into one directory publish
  /// one after the other); on a failure the files and directories it made are removed.
  void commit() const;

private:
  struct File {
    std::string path;
    std::string contents;
    std::string flag;
  };
  std::vector<File> files_;
};

/// Throws ConfigError (on `flag`) unless `path` can be written as a file: a new path or a
/// regular file (not a directory, device, FIFO or symbolic link), its nearest existing ancestor
/// a writable directory.
void check_file(const std::string& path, const std::string& flag);
/// The same for a directory that will hold output files.
void check_directory(const std::string& dir, const std::string& flag);

} // namespace clustersim
