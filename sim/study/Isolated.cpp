#include "sim/study/Isolated.hpp"

#include "topology/config/ConfigError.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <csignal>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

namespace clustersim {

namespace {

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string data;
};

Child spawn(const std::function<std::string()>& fn)
{
  int fds[2];
  if (::pipe(fds) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // a worker dies with the process that forked it: a sweep killed with -9 left its workers
    // simulating (and the parent may have gone before the request took)
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(1);
    ::close(fds[0]);
    std::string out;
    char tag = 'O';
    try {
      out = fn();
    } catch (const ConfigError& e) {
      tag = 'C';
      out = e.what();
    } catch (const std::exception& e) {
      tag = 'E';
      out = e.what();
    }
    std::string msg = tag + out;
    const char* p = msg.data();
    std::size_t left = msg.size();
    while (left > 0) {
      ssize_t n = ::write(fds[1], p, left);
      if (n <= 0)
        break;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(fds[1]);
  return Child{pid, fds[0], {}};
}

/// Reads until EOF, reaps the child, returns tag + payload (tag 'S' for a signal death).
std::string finish(Child& c)
{
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(c.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    c.data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(c.fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (c.data.empty()) {
    if (WIFSIGNALED(status))
      return "Esimulation process died with signal " + std::to_string(WTERMSIG(status));
    return "Esimulation process exited without a result (status " + std::to_string(status) + ")";
  }
  return c.data;
}

} // namespace

std::vector<std::string> run_isolated_all(const std::vector<std::function<std::string()>>& fns, int jobs,
                                          const std::function<void(std::size_t)>& on_done)
{
  std::vector<std::string> out(fns.size());
  std::size_t next = 0;
  std::vector<std::pair<std::size_t, Child>> running;
  jobs = std::max(1, jobs);
  while (next < fns.size() || !running.empty()) {
    while (next < fns.size() && static_cast<int>(running.size()) < jobs) {
      running.emplace_back(next, spawn(fns[next]));
      ++next;
    }
    // wait for the oldest: outputs are small, and completion order does not change results
    auto [index, child] = std::move(running.front());
    running.erase(running.begin());
    std::string data = finish(child);
    out[index] = data[0] == 'O' ? data.substr(1) : "ERROR: " + data.substr(1);
    if (on_done)
      on_done(index);
  }
  return out;
}

int available_cores()
{
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

std::string run_isolated(const std::function<std::string()>& fn)
{
  Child c = spawn(fn);
  std::string data = finish(c);
  char tag = data[0];
  data.erase(0, 1);
  if (tag == 'C')
    throw ConfigError(data); // "FILE:LINE:COL: ..." intact
  if (tag == 'E')
    throw std::runtime_error(data);
  return data;
}

} // namespace clustersim
