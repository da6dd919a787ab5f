#include "sim/app/Output.hpp"
#include "sim/study/Sweep.hpp"

#include "topology/config/ConfigError.hpp"

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

/// The outermost directory on the way to `dir` that does not exist, or "" when `dir` exists.
std::string first_missing(const std::string& dir)
{
  std::string missing;
  struct stat st {};
  for (std::string p = dir; !p.empty() && ::stat(p.c_str(), &st) != 0; p = parent_of(p)) {
    missing = p;
    if (parent_of(p) == p)
      break;
  }
  return missing;
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

std::string journal_of(const std::string& dir) { return dir + "/" + kPublishJournal; }

/// Writes `text` to `path` through a temporary beside it and a rename; false on a failure.
bool write_whole(const std::string& path, const std::string& text)
{
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return false;
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

/// Renames the journal's pairs whose source is still there, then removes the journal. The
/// caller holds the directory's lock.
void roll_forward(const std::string& dir)
{
  std::ifstream in(journal_of(dir), std::ios::binary);
  if (!in)
    return;
  std::string from, to;
  while (std::getline(in, from, '\0') && std::getline(in, to, '\0')) {
    struct stat st {};
    if (::lstat(from.c_str(), &st) == 0)
      std::rename(from.c_str(), to.c_str());
  }
  in.close();
  std::remove(journal_of(dir).c_str());
}

/// One rename that publishes: a file written beside its target, or a directory staged beside
/// one that did not exist (every file of the set under it).
struct Move {
  std::string from, to;
  std::string dir; ///< the existing directory that holds both (locked while publishing)
};

/// Where each file is staged: beside its target when its directory exists; otherwise in a copy
/// of the outermost missing directory, made beside it, that one rename publishes whole. Fills
/// `moves` and `staged` (one per path); returns the directories that hold the moves, sorted.
std::vector<std::string> plan_publish(const std::vector<std::string>& paths, const std::string& suffix,
                                      std::vector<Move>& moves, std::vector<std::string>& staged)
{
  moves.clear();
  staged.assign(paths.size(), {});
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string dir = parent_of(paths[i]);
    const std::string missing = first_missing(dir);
    if (missing.empty()) {
      staged[i] = paths[i] + suffix;
      moves.push_back({staged[i], paths[i], dir});
      continue;
    }
    staged[i] = missing + suffix + paths[i].substr(missing.size());
    if (std::none_of(moves.begin(), moves.end(), [&](const Move& m) { return m.to == missing; }))
      moves.push_back({missing + suffix, missing, parent_of(missing)});
  }
  std::vector<std::string> dirs;
  for (const auto& m : moves)
    dirs.push_back(m.dir);
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  return dirs;
}

} // namespace

void recover_outputs(const std::string& dir)
{
  struct stat st {};
  if (::stat(journal_of(dir).c_str(), &st) != 0)
    return;
  DirectoryLock lock(dir);
  roll_forward(dir);
}

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

void OutputSet::commit(std::size_t stop_after) const
{
  check();
  const std::string suffix = ".tmp." + std::to_string(::getpid());
  std::vector<std::string> paths;
  for (const auto& f : files_)
    paths.push_back(f.path);
  std::vector<Move> moves;
  std::vector<std::string> staged;
  std::vector<std::string> dirs;
  auto plan = [&] { return plan_publish(paths, suffix, moves, staged); };
  // the locks are taken in one order, so two runs that share directories cannot wait on each
  // other; a directory another run made while this one waited changes the plan, which is made
  // again under the new locks
  std::vector<std::unique_ptr<DirectoryLock>> locks;
  for (dirs = plan();;) {
    locks.clear();
    for (const auto& d : dirs)
      locks.push_back(std::make_unique<DirectoryLock>(d));
    std::vector<std::string> now = plan();
    if (now == dirs)
      break;
    dirs = now;
  }
  for (const auto& d : dirs)
    roll_forward(d); // a publish that a crash cut short is finished first
  std::vector<std::string> made; // staging directories, removed again on a failure
  auto abandon = [&](const File& f, const std::string& why) {
    for (const auto& t : staged)
      std::remove(t.c_str());
    for (auto d = made.rbegin(); d != made.rend(); ++d)
      ::rmdir(d->c_str());
    throw ConfigError(command_line(f.flag), "cannot write '" + f.path + "': " + why, "a writable path");
  };
  for (std::size_t i = 0; i < files_.size(); ++i) {
    const File& f = files_[i];
    std::vector<std::string> up;
    struct stat st {};
    for (std::string d = parent_of(staged[i]); ::stat(d.c_str(), &st) != 0; d = parent_of(d))
      up.insert(up.begin(), d);
    for (const auto& d : up) {
      if (::mkdir(d.c_str(), 0755) != 0)
        abandon(f, "cannot create directory '" + d + "': " + std::strerror(errno));
      made.push_back(d);
    }
    std::ofstream out(staged[i], std::ios::binary | std::ios::trunc);
    if (!out)
      abandon(f, std::strerror(errno));
    out << f.contents;
    out.flush();
    if (!out)
      abandon(f, "write failed (disk full?)");
  }
  // Every file is written. The journal of each directory with more than one rename names them
  // before the first: a publish cut short between two renames is finished by the next command
  // that writes or reads the directory (recover_outputs), so a reader never keeps a new
  // results.csv beside an old results.json.
  for (const auto& d : dirs) {
    std::string journal;
    for (const auto& m : moves)
      if (m.dir == d)
        journal += m.from + '\0' + m.to + '\0';
    if (std::count(journal.begin(), journal.end(), '\0') > 2 && !write_whole(journal_of(d), journal))
      abandon(files_.front(), "cannot write the publish journal in '" + d + "': " + std::strerror(errno));
  }
  for (std::size_t k = 0; k < moves.size() && k < stop_after; ++k)
    if (std::rename(moves[k].from.c_str(), moves[k].to.c_str()) != 0) {
      const int err = errno;
      for (const auto& d : dirs)
        std::remove(journal_of(d).c_str());
      const auto f = std::find_if(files_.begin(), files_.end(), [&](const File& x) {
        return x.path == moves[k].to || x.path.rfind(moves[k].to + "/", 0) == 0;
      });
      abandon(f != files_.end() ? *f : files_.front(), std::strerror(err));
    }
  if (stop_after < moves.size())
    return; // a test's crash: the journals stay
  for (const auto& d : dirs)
    std::remove(journal_of(d).c_str());
}

std::string add_result_files(OutputSet& files, const std::string& out, const std::string& name,
                             const std::vector<nlohmann::ordered_json>& rows, std::size_t points)
{
  std::string csv = rows_to_csv(rows);
  files.add(out + "/results.csv", csv, "--out");
  files.add(out + "/results.json", rows_to_json(name, rows, points), "--out");
  files.add(out + "/results.jsonl", rows_to_jsonl(rows), "--out");
  return csv;
}

} // namespace clustersim
