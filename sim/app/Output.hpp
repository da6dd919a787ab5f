#pragma once
/// Output files are written only once everything succeeded: contents are staged in memory,
/// then each file is written to a temporary name and renamed into place.

#include <string>
#include <utility>
#include <vector>

namespace clustersim {

class OutputSet {
public:
  void add(std::string path, std::string contents) { files_.emplace_back(std::move(path), std::move(contents)); }
  /// Creates missing directories, writes every file atomically; throws std::runtime_error.
  void commit() const;

private:
  std::vector<std::pair<std::string, std::string>> files_;
};

void make_directories(const std::string& dir);

} // namespace clustersim
