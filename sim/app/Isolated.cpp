#include "Isolated.hpp"

#include "ConfigError.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace clustersim {

std::string run_isolated(const std::function<std::string()>& fn)
{
  int fds[2];
  if (::pipe(fds) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
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
  std::string data;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (data.empty()) {
    if (WIFSIGNALED(status))
      throw std::runtime_error("simulation process died with signal " + std::to_string(WTERMSIG(status)));
    throw std::runtime_error("simulation process exited without a result (status " + std::to_string(status) + ")");
  }
  char tag = data[0];
  data.erase(0, 1);
  if (tag == 'C')
    throw ConfigError(data); // "FILE:LINE:COL: ..." intact
  if (tag == 'E')
    throw std::runtime_error(data);
  return data;
}

} // namespace clustersim
