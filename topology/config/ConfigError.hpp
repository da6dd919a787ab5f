#pragma once
/// Errors in user input (YAML files, HF config files, command-line values).
///
/// Every user error carries where it is (file, 1-based line and column) and what is valid,
/// and prints as one line: `FILE:LINE:COL: what is wrong; valid: ...`. Library code throws
/// it; only `main` catches it, prints `what()` and returns exit code 2.

#include <stdexcept>
#include <string>

namespace clustersim {

/// A position in an input file; line and column are 1-based. `line == 0` means "no position"
/// (for instance a command-line value), printed as `FILE: ...`.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  /// "file:line:col" or just "file" when there is no position.
  std::string str() const;
};

/// Input that is well formed and allowed but probably not what was meant (a NIC of 3.2 Tb/s):
/// one line on stderr, or an error under --strict.
struct ConfigWarning {
  SourceLocation where;
  std::string what;  ///< what looks wrong
  std::string valid; ///< what is usual
  /// "FILE:LINE:COL: warning: WHAT; usual: VALID"
  std::string line() const;
};

class ConfigError : public std::runtime_error {
public:
  /// `input`: the text is wrong (a typo, a type, a missing key): nothing can run. `rule`: the
  /// values are well formed but break a rule of the model (a layout that does not divide, a
  /// precision the GPU lacks): a sweep keeps such a point as invalid and runs the others.
  enum class Kind { input, rule };

  /// @param where      where the bad input is
  /// @param what_wrong what is wrong, e.g. "unknown key 'tpp' in training; did you mean 'tp'?"
  /// @param valid      what would have been accepted (empty when nothing useful can be listed)
  ConfigError(SourceLocation where, const std::string& what_wrong, const std::string& valid = "",
              Kind kind = Kind::input);

  /// An error whose one-line message is already composed (e.g. relayed from a child process).
  explicit ConfigError(const std::string& composed);

  const SourceLocation& where() const { return where_; }
  const std::string& problem() const { return problem_; }
  const std::string& valid() const { return valid_; }
  Kind kind() const { return kind_; }

private:
  Kind kind_ = Kind::input;
  SourceLocation where_;
  std::string problem_;
  std::string valid_;
};

/// A location that is the command line rather than a file: errors read `command line: --flag: ...`.
SourceLocation command_line(const std::string& flag);

} // namespace clustersim
