#include "topology/config/ConfigError.hpp"

#include "topology/config/Suggest.hpp"

namespace clustersim {

std::string SourceLocation::str() const
{
  if (line <= 0)
    return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

// One line whatever the input held: a bad value echoed in the message may carry newlines, NULs
// or bytes that are not UTF-8.
// A value echoed in a message is cut to its first kilobyte or so: a 10 MB value was echoed whole.
static std::string clipped(const std::string& s, std::size_t most)
{
  if (s.size() <= most)
    return s;
  std::size_t cut = most;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
    --cut; // not inside a UTF-8 character
  return s.substr(0, cut) + "... (" + std::to_string(s.size()) + " bytes in all)";
}

static std::string compose(const SourceLocation& where, const std::string& what_wrong, const std::string& valid)
{
  // every line names what would be valid; a caller whose list came out empty (a catalog that
  // defines none of the things named) still gets the part
  std::string msg = clipped(printable(where.str()), 1024) + ": " + clipped(printable(what_wrong), 1024);
  msg += "; valid: " +
         (valid.empty() ? std::string("none is defined (see clustersim schema)") : clipped(printable(valid), 4096));
  return msg;
}

ConfigError::ConfigError(SourceLocation where, const std::string& what_wrong, const std::string& valid, Kind kind)
    : std::runtime_error(compose(where, what_wrong, valid)), kind_(kind), where_(std::move(where)),
      problem_(printable(what_wrong)), valid_(printable(valid))
{
}

ConfigError::ConfigError(const std::string& composed)
    : std::runtime_error(printable(composed)), problem_(printable(composed))
{
}

SourceLocation command_line(const std::string& flag)
{
  return SourceLocation{"command line: " + flag, 0, 0};
}

std::string ConfigWarning::line() const
{
  return where.str() + ": warning: " + what + (valid.empty() ? "" : "; usual: " + valid);
}

} // namespace clustersim
