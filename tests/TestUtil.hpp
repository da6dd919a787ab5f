#pragma once
// Helpers shared by the tests: temporary files, running the clustersim binary, the catalog.

#include "sim/study/Catalog.hpp"

#include <string>

namespace clustersim::test {

/// A fresh directory under the build's temp area, removed at exit.
std::string temp_dir();
/// Writes `text` to `name` in a fresh temp dir and returns the path.
std::string write_temp(const std::string& name, const std::string& text);

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
/// Runs a shell command, capturing its exit status, stdout and stderr.
CommandResult run_shell(const std::string& command);
/// Runs `clustersim ARGS` (the built binary); ARGS is a shell fragment.
CommandResult run_cli(const std::string& args);
/// The same from the source tree, so that ARGS name files as the README does
/// (`experiments/quickstart.yaml`) and outputs carry no machine-specific path.
CommandResult run_cli_in_source(const std::string& args);

/// Compares `actual` with the golden file tests/golden/NAME, byte for byte. On a mismatch the
/// actual text is kept beside the build's temp files and the first differing line is reported.
/// With CLUSTERSIM_UPDATE_GOLDEN=1 in the environment the golden file is rewritten instead
/// (scripts/update-golden.sh); a deliberate change commits it with the reason.
void check_golden(const std::string& name, const std::string& actual);

const Catalog& catalog();
std::string source_path(const std::string& relative);
/// A file of the project's copy of the published runs (experiments/validation/).
std::string validation_path(const std::string& file);
/// The whole content of a file ("" if it cannot be read).
std::string read_file(const std::string& path);
/// Number of entries in a directory (0 if it does not exist).
int entries_in(const std::string& dir);

} // namespace clustersim::test
