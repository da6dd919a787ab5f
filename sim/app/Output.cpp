#include "Output.hpp"

#include "ConfigError.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace clustersim {
namespace {

std::string parent_of(const std::string& path)
{
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// The nearest existing ancestor of `path` (or `path` itself) must be a writable directory.
void check_ancestor(const std::string& path, const std::string& flag, const std::string& shown)
{
  std::string p = path;
  struct stat st {};
  while (::stat(p.c_str(), &st) != 0) {
    if (errno != ENOENT)
      throw ConfigError(command_line(flag), "cannot write '" + shown + "': " + std::strerror(errno),
                        "a path in a writable directory");
    std::string up = parent_of(p);
    if (up == p)
      break;
    p = up;
  }
  if (!S_ISDIR(st.st_mode))
    throw ConfigError(command_line(flag), "cannot write '" + shown + "': '" + p + "' is not a directory",
                      "a path whose directories are directories");
  if (::access(p.c_str(), W_OK) != 0)
    throw ConfigError(command_line(flag), "cannot write '" + shown + "': '" + p + "' is not writable",
                      "a path in a writable directory");
}

} // namespace

void check_file(const std::string& path, const std::string& flag)
{
  struct stat st {};
  if (path.empty())
    throw ConfigError(command_line(flag), "an empty path", "a file path");
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw ConfigError(command_line(flag), "'" + path + "' is a directory", "a file path");
  check_ancestor(parent_of(path), flag, path);
}

void check_directory(const std::string& dir, const std::string& flag)
{
  if (dir.empty())
    throw ConfigError(command_line(flag), "an empty path", "a directory path");
  check_ancestor(dir, flag, dir);
}

void make_directories(const std::string& dir)
{
  if (dir.empty())
    return;
  std::string partial;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty())
      continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error("cannot create directory '" + partial + "': " + std::strerror(errno));
  }
}

void OutputSet::add(std::string path, std::string contents, std::string flag)
{
  files_.push_back({std::move(path), std::move(contents), std::move(flag)});
}

void OutputSet::commit() const
{
  std::vector<std::string> staged;
  auto abandon = [&](const File& f, const std::string& why) {
    for (const auto& t : staged)
      std::remove(t.c_str());
    throw ConfigError(command_line(f.flag), "cannot write '" + f.path + "': " + why, "a writable path");
  };
  for (const auto& f : files_) {
    try {
      make_directories(parent_of(f.path));
    } catch (const std::exception& e) {
      abandon(f, e.what());
    }
    const std::string tmp = f.path + ".tmp." + std::to_string(::getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out)
        abandon(f, std::strerror(errno));
      staged.push_back(tmp);
      out << f.contents;
      out.flush();
      if (!out)
        abandon(f, "write failed");
    }
  }
  for (std::size_t i = 0; i < files_.size(); ++i)
    if (std::rename(staged[i].c_str(), files_[i].path.c_str()) != 0)
      abandon(files_[i], std::strerror(errno));
}

} // namespace clustersim
