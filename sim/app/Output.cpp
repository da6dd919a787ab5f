#include "Output.hpp"

#include "ConfigError.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <fcntl.h>
#include <memory>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

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

/// What a path that exists is, when it is not a regular file.
const char* not_regular(const struct stat& st)
{
  if (S_ISLNK(st.st_mode))
    return "a symbolic link";
  if (S_ISDIR(st.st_mode))
    return "a directory";
  if (S_ISFIFO(st.st_mode))
    return "a FIFO";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    return "a device";
  if (S_ISSOCK(st.st_mode))
    return "a socket";
  return nullptr;
}

} // namespace

void check_file(const std::string& path, const std::string& flag)
{
  struct stat st {};
  if (path.empty())
    throw ConfigError(command_line(flag), "an empty path", "a file path");
  if (path.back() == '/' || (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)))
    throw ConfigError(command_line(flag), "'" + path + "' is a directory", "a file path");
  // only regular files are replaced: --trace /dev/null replaced /dev/null, a symbolic link
  // was replaced rather than followed
  if (::lstat(path.c_str(), &st) == 0)
    if (const char* what = not_regular(st))
      throw ConfigError(command_line(flag), "'" + path + "' is " + what + "; only regular files are replaced",
                        "a new path or a regular file");
  check_ancestor(parent_of(path), flag, path);
}

void check_directory(const std::string& dir, const std::string& flag)
{
  if (dir.empty())
    throw ConfigError(command_line(flag), "an empty path", "a directory path");
  check_ancestor(dir, flag, dir);
}

void OutputSet::add(std::string path, std::string contents, std::string flag)
{
  files_.push_back({std::move(path), std::move(contents), std::move(flag)});
}

namespace {

/// The directories that do not exist yet on the way to `dir`, outermost first.
std::vector<std::string> missing_directories(const std::string& dir)
{
  std::vector<std::string> out;
  struct stat st {};
  for (std::string p = dir; !p.empty() && ::stat(p.c_str(), &st) != 0; p = parent_of(p)) {
    out.insert(out.begin(), p);
    if (parent_of(p) == p)
      break;
  }
  return out;
}

/// An exclusive lock on a directory for as long as it lives: two runs into one --out publish one
/// after the other, not interleaved.
class DirectoryLock {
public:
  explicit DirectoryLock(const std::string& dir) : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC))
  {
    if (fd_ >= 0)
      ::flock(fd_, LOCK_EX);
  }
  ~DirectoryLock()
  {
    if (fd_ >= 0)
      ::close(fd_); // releases the lock
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

private:
  int fd_;
};

} // namespace

void OutputSet::check() const
{
  for (std::size_t i = 0; i < files_.size(); ++i) {
    const File& f = files_[i];
    for (std::size_t j = 0; j < i; ++j)
      if (files_[j].path == f.path)
        throw ConfigError(command_line(f.flag), "'" + f.path + "' is also written by " + files_[j].flag,
                          "a path of its own");
    check_file(f.path, f.flag);
  }
}

void OutputSet::commit() const
{
  check();
  // the directories this set makes are removed again if it fails, so nothing is left behind
  std::vector<std::string> made;
  std::vector<std::string> staged;
  auto abandon = [&](const File& f, const std::string& why) {
    for (const auto& t : staged)
      std::remove(t.c_str());
    for (auto d = made.rbegin(); d != made.rend(); ++d)
      ::rmdir(d->c_str());
    throw ConfigError(command_line(f.flag), "cannot write '" + f.path + "': " + why, "a writable path");
  };
  for (const auto& f : files_) {
    for (const auto& d : missing_directories(parent_of(f.path))) {
      if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST)
        abandon(f, "cannot create directory '" + d + "': " + std::strerror(errno));
      made.push_back(d);
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
        abandon(f, "write failed (disk full?)");
    }
  }
  // every file written, then published together under each directory's lock
  std::vector<std::unique_ptr<DirectoryLock>> locks;
  std::vector<std::string> locked;
  for (const auto& f : files_) {
    const std::string dir = parent_of(f.path);
    if (std::find(locked.begin(), locked.end(), dir) == locked.end()) {
      locked.push_back(dir);
      locks.push_back(std::make_unique<DirectoryLock>(dir));
    }
  }
  for (std::size_t i = 0; i < files_.size(); ++i)
    if (std::rename(staged[i].c_str(), files_[i].path.c_str()) != 0)
      abandon(files_[i], std::strerror(errno));
}

} // namespace clustersim
