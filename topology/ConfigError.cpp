#include "ConfigError.hpp"

namespace clustersim {

std::string SourceLocation::str() const
{
  if (line <= 0)
    return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

static std::string compose(const SourceLocation& where, const std::string& what_wrong, const std::string& valid)
{
  std::string msg = where.str() + ": " + what_wrong;
  if (!valid.empty())
    msg += "; valid: " + valid;
  return msg;
}

ConfigError::ConfigError(SourceLocation where, const std::string& what_wrong, const std::string& valid)
    : std::runtime_error(compose(where, what_wrong, valid)), where_(std::move(where)), problem_(what_wrong),
      valid_(valid)
{
}

ConfigError::ConfigError(const std::string& composed) : std::runtime_error(composed), problem_(composed) {}

SourceLocation command_line(const std::string& flag)
{
  return SourceLocation{"command line: " + flag, 0, 0};
}

} // namespace clustersim
