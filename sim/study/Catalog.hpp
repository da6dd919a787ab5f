#pragma once
/// Where the data files live (platforms/, strategies/models/) and the shared catalogs loaded
/// from them. The root is $CLUSTERSIM_DATA if set, else PREFIX/share/clustersim beside an
/// installed binary in PREFIX/bin (`cmake --install`), else the source tree the binary was
/// built from.

#include "sim/Protocols.hpp"
#include "strategies/Framework.hpp"
#include "topology/GpuSpec.hpp"
#include "topology/PlatformSpec.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clustersim {

struct PriceTable;

/// The data root as Catalog::open() finds it (see above).
std::string data_root();

class Catalog {
public:
  static Catalog open();

  const std::string& root() const { return root_; }
  std::string platforms_dir() const { return root_ + "/platforms"; }
  std::string models_dir() const { return root_ + "/strategies/models"; }

  const GpuCatalog& gpus() const { return *gpus_; }
  const ProtocolTable& protocols() const { return *protocols_; }
  /// The training frameworks' properties (platforms/frameworks.yaml), shared by every
  /// TrainingSpec built from this catalog.
  const std::shared_ptr<const FrameworkCatalog>& frameworks() const { return frameworks_; }

  /// A platform by catalog name, or by path (anything with a '/' or ending in .yaml; relative
  /// paths resolve from `relative_to`'s directory). Unknown names list the catalog.
  PlatformSpec platform(const std::string& name_or_path, const SourceLocation& where,
                        const std::string& relative_to = "") const;
  /// A platform written in place (an experiment's cluster.platform mapping): a whole platform,
  /// or `base:` (a catalog name or path) with the keys it overrides.
  PlatformSpec platform(const YamlNode& inline_platform) const;
  /// The price table (platforms/prices.yaml) every platform of the catalog is priced from.
  const PriceTable& prices() const { return *prices_; }
  std::vector<std::string> platform_names() const;

private:
  /// The file a catalog name or path names (ConfigError at `where` if there is none).
  std::string platform_path(const std::string& name_or_path, const SourceLocation& where,
                            const std::string& relative_to) const;
  /// Parses `doc`, over the platform its `base:` names if it has one.
  PlatformSpec parse_layered(const YamlNode& doc) const;
  /// `p` with the price table; a platform owned (cost.basis) must have a price for each part.
  PlatformSpec priced(PlatformSpec p) const;

  std::string root_;
  std::shared_ptr<GpuCatalog> gpus_;
  std::shared_ptr<ProtocolTable> protocols_;
  std::shared_ptr<const FrameworkCatalog> frameworks_;
  std::shared_ptr<const PriceTable> prices_; ///< platforms/prices.yaml, given to every platform
  /// Platform files read so far, by path: a sweep or a validation file names the same few
  /// platforms thousands of times (files do not change during a run).
  std::shared_ptr<std::map<std::string, PlatformSpec>> platforms_ = std::make_shared<std::map<std::string, PlatformSpec>>();
};

/// Directory part of a path ("." when none).
std::string directory_of(const std::string& path);
bool file_exists(const std::string& path);

} // namespace clustersim
