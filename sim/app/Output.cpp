#include "Output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <sys/stat.h>

namespace clustersim {

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

void OutputSet::commit() const
{
  for (const auto& [path, contents] : files_) {
    auto slash = path.find_last_of('/');
    if (slash != std::string::npos)
      make_directories(path.substr(0, slash));
    std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out)
        throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
      out << contents;
      if (!out)
        throw std::runtime_error("cannot write '" + path + "'");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  }
}

} // namespace clustersim
