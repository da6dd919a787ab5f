#include "sim/study/Catalog.hpp"

#include "topology/Prices.hpp"

#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CLUSTERSIM_DATA_DIR
#define CLUSTERSIM_DATA_DIR "."
#endif

namespace clustersim {

std::string directory_of(const std::string& path)
{
  auto pos = path.find_last_of('/');
  return pos == std::string::npos ? std::string(".") : path.substr(0, pos);
}

bool file_exists(const std::string& path)
{
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string installed_data_root()
{
  // `cmake --install` puts the binary in PREFIX/bin and its data in PREFIX/share/clustersim
  std::string exe(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  if (n <= 0)
    return {};
  exe.resize(static_cast<std::size_t>(n));
  const std::string root = directory_of(directory_of(exe)) + "/share/clustersim";
  return file_exists(root + "/platforms/gpus.yaml") ? root : std::string();
}

std::string data_root()
{
  const char* env = std::getenv("CLUSTERSIM_DATA");
  if (env && *env)
    return env;
  std::string installed = installed_data_root();
  return installed.empty() ? std::string(CLUSTERSIM_DATA_DIR) : installed;
}

Catalog Catalog::open()
{
  Catalog c;
  c.root_ = data_root();
  c.gpus_ = std::make_shared<GpuCatalog>(GpuCatalog::load(c.platforms_dir() + "/gpus.yaml"));
  c.protocols_ = std::make_shared<ProtocolTable>(ProtocolTable::load(c.platforms_dir() + "/collectives.yaml"));
  c.frameworks_ = std::make_shared<const FrameworkCatalog>(FrameworkCatalog::load(c.platforms_dir() + "/frameworks.yaml"));
  c.prices_ = std::make_shared<const PriceTable>(PriceTable::load(c.platforms_dir() + "/prices.yaml"));
  return c;
}

std::vector<std::string> Catalog::platform_names() const
{
  std::vector<std::string> out;
  if (DIR* d = ::opendir(platforms_dir().c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".yaml") == 0 && n != "gpus.yaml" && n != "collectives.yaml" &&
          n != "frameworks.yaml" && n != "prices.yaml")
        out.push_back(n.substr(0, n.size() - 5));
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Catalog::platform_path(const std::string& name, const SourceLocation& where,
                                   const std::string& relative_to) const
{
  bool is_path =
      name.find('/') != std::string::npos || (name.size() > 5 && name.compare(name.size() - 5, 5, ".yaml") == 0);
  if (is_path) {
    std::string path = name[0] == '/' || relative_to.empty() ? name : directory_of(relative_to) + "/" + name;
    if (!file_exists(path))
      throw ConfigError(where, "cannot open platform file '" + name + "'",
                        "a catalog name or a path to a platform YAML");
    return path;
  }
  std::string path = platforms_dir() + "/" + name + ".yaml";
  if (!file_exists(path)) {
    auto names = platform_names();
    throw ConfigError(where, unknown_name("platform", name, names), join(names));
  }
  return path;
}

PlatformSpec Catalog::parse_layered(const YamlNode& doc) const
{
  std::optional<YamlNode> base;
  if (doc.is_map())
    for (const auto& [k, v] : doc.entries())
      if (k.as_string() == "base")
        base = v;
  if (!base)
    return priced(parse_platform(doc, *gpus_, protocols_->transports()));
  YamlNode root = YamlNode::load_file(platform_path(base->as_string(), base->where(), doc.file()));
  if (root.is_map())
    for (const auto& [k, v] : root.entries())
      if (k.as_string() == "base")
        base->fail("platform '" + base->as_string() + "' has a base of its own",
                   "a platform without base: (one level of overrides)");
  return priced(parse_platform(root, *gpus_, protocols_->transports(), &doc));
}

PlatformSpec Catalog::priced(PlatformSpec p) const
{
  p.cost.prices = prices_;
  if (p.cost.basis == CostBasis::owned)
    require_priced_if_owned(p, unpriced_parts(p));
  return p;
}

PlatformSpec Catalog::platform(const std::string& name, const SourceLocation& where,
                               const std::string& relative_to) const
{
  const std::string path = platform_path(name, where, relative_to);
  auto it = platforms_->find(path);
  if (it == platforms_->end())
    it = platforms_->emplace(path, parse_layered(YamlNode::load_file(path))).first;
  return it->second;
}

PlatformSpec Catalog::platform(const YamlNode& inline_platform) const
{
  if (!inline_platform.is_map())
    inline_platform.fail("cluster.platform must be a platform name, a path, or a mapping",
                         "dgx-h100, my.yaml, or {base: dgx-h100, node: {nics: {bandwidth: 800Gbps}}}");
  return parse_layered(inline_platform);
}

} // namespace clustersim
