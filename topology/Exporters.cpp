#include "topology/Exporters.hpp"
#include "topology/config/Units.hpp"

#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/graphviz.hpp>

#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <sstream>
#include <vector>

namespace clustersim {

std::string vertex_name(const Graph& g, VertexId v)
{
  return std::string(to_string(g[v].kind)) + std::to_string(g[v].global);
}

namespace {

std::string num(double v)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

struct ForwardArcs {
  const Graph* g = nullptr;
  bool operator()(ArcId e) const { return (*g)[e].id < (*g)[e].reverse; }
};

const char* shape(VertexKind k)
{
  switch (k) {
  case VertexKind::gpu:
    return "box";
  case VertexKind::nic:
    return "ellipse";
  case VertexKind::cpu:
    return "octagon";
  default:
    return "diamond";
  }
}

} // namespace

void write_dot(std::ostream& out, const ClusterGraph& cg)
{
  const Graph& g = cg.graph();
  boost::filtered_graph<Graph, ForwardArcs> fg(g, ForwardArcs{&g});
  auto vw = [&g](std::ostream& os, VertexId v) {
    os << "[label=\"" << vertex_name(g, v) << "\",shape=" << shape(g[v].kind) << ",kind=\"" << to_string(g[v].kind)
       << "\"]";
  };
  auto ew = [&g](std::ostream& os, ArcId e) {
    const ArcInfo& a = g[e];
    os << "[dir=both,kind=\"" << to_string(a.kind) << "\",label=\"" << num(a.bandwidth / 1e9)
       << " GB/s\",lanes=" << a.lanes << "]";
  };
  boost::write_graphviz(out, fg, vw, ew);
}

void write_simgrid_xml(std::ostream& out, const ClusterGraph& cg, Precision precision)
{
  if (cg.paths() > 1)
    throw ConfigError(command_line("--xml"),
                      "a SimGrid XML export lists one route per GPU pair, and ecmp-qp splits each over " +
                          std::to_string(cg.paths()) + " queue pairs",
                      "fabric.qps_per_connection: 1, or routing ecmp");
  if (cg.gpus() > kMaxXmlGpus)
    throw ConfigError(command_line("--xml"),
                      "a SimGrid XML export lists a route per GPU pair; " + std::to_string(cg.gpus()) +
                          " GPUs is too many",
                      "--gpus up to " + std::to_string(kMaxXmlGpus));
  const double speed = cg.platform().node.gpu.peak(precision);
  out << "<?xml version='1.0'?>\n"
         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<!-- clustersim: platform '"
      << cg.platform().name << "' with " << cg.gpus() << " GPUs; hosts are GPUs at the dense " << to_string(precision)
      << " peak; link bandwidths are per direction; routes are clustersim's. -->\n"
         "<platform version=\"4.1\">\n"
         "  <config>\n"
         "    <prop id=\"network/model\" value=\"CM02\"/>\n"
         "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n"
         "    <prop id=\"network/TCP-gamma\" value=\"0\"/>\n"
         "  </config>\n"
         "  <zone id=\"cluster\" routing=\"Full\">\n";
  for (int g = 0; g < cg.gpus(); ++g)
    out << "    <host id=\"gpu" << g << "\" speed=\"" << num(speed) << "f\"/>\n";
  const auto& res = cg.resources();
  for (std::size_t i = 0; i < res.size(); ++i)
    out << "    <link id=\"" << res[i].name << "\" bandwidth=\"" << num(res[i].bandwidth) << "Bps\" latency=\""
        << num(res[i].latency) << "s\"/>\n";
  std::vector<int> route;
  for (int a = 0; a < cg.gpus(); ++a)
    for (int b = 0; b < cg.gpus(); ++b) {
      if (a == b)
        continue;
      route.clear();
      cg.route(a, b, route);
      out << "    <route src=\"gpu" << a << "\" dst=\"gpu" << b << "\" symmetrical=\"NO\">";
      for (int r : route)
        out << "<link_ctn id=\"" << res[static_cast<std::size_t>(r)].name << "\"/>";
      out << "</route>\n";
    }
  out << "  </zone>\n</platform>\n";
}

namespace {

std::string xml_text(const std::string& s)
{
  std::string o;
  for (char c : s)
    o += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" : std::string(1, c);
  return o;
}

std::string plural(long long n, const std::string& one, const std::string& many)
{
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

/// One row of the fabric figure: a switch tier, or the nodes.
struct FabricRow {
  VertexKind kind;
  std::string caption;
  std::string box;
  int members;
};

struct FabricBundle {
  long long links = 0;
  double bandwidth = 0; ///< per link, per direction (the largest seen)
};

/// What the fabric figure shows: its rows top to bottom, the links from each row to the one
/// above (by the lower row's index) and which members they join.
struct FabricRows {
  std::vector<FabricRow> rows;
  std::map<int, FabricBundle> up;
  std::set<std::tuple<int, int, int>> joined; ///< (lower row, lower member, upper member) with a link
};

FabricRows fabric_rows(const ClusterGraph& cg)
{
  const Graph& g = cg.graph();
  const PlatformSpec& p = cg.platform();
  // rows, top to bottom: the switch tiers the graph has, then the nodes
  const std::vector<std::pair<VertexKind, std::string>> tiers{
      {VertexKind::core, "core switch"}, {VertexKind::spine, "spine switch"}, {VertexKind::leaf, "leaf switch"}};
  std::map<VertexKind, int> count;
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    ++count[g[v].kind];
  FabricRows f;
  std::vector<FabricRow>& rows = f.rows;
  for (const auto& [kind, name] : tiers)
    if (count[kind] > 0)
      rows.push_back({kind, plural(count[kind], name, name + "es"), name, count[kind]});
  const int per_node = p.node.gpus;
  std::string inside = plural(per_node, "GPU", "GPUs");
  inside += std::string(", ") + to_string(p.node.scale_up) + " scale-up" +
            (p.gpus_per_domain() > per_node ? " (" + std::to_string(p.gpus_per_domain()) + "-GPU domains)" : "");
  if (count[VertexKind::nic] > 0)
    inside += ", " + plural(count[VertexKind::nic] / std::max(1, cg.nodes()), "NIC", "NICs");
  rows.push_back({VertexKind::gpu, plural(cg.nodes(), "node", "nodes") + ": " + inside + " each", "node",
                  cg.nodes()});
  // links between rows: a network arc upwards, counted once, from the row it leaves
  auto row_of = [&](VertexKind k) {
    if (k == VertexKind::gpu || k == VertexKind::nic || k == VertexKind::nvswitch || k == VertexKind::pcie_switch ||
        k == VertexKind::cpu)
      return static_cast<int>(rows.size()) - 1;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].kind == k)
        return static_cast<int>(i);
    return -1;
  };
  // a member's index in its row: its node for what is inside a node, else its index in its tier
  auto member = [&](VertexId v) { return row_of(g[v].kind) == static_cast<int>(rows.size()) - 1 ? g[v].node : g[v].global; };
  for (auto a : boost::make_iterator_range(boost::edges(g))) {
    const VertexId sv = boost::source(a, g), tv = boost::target(a, g);
    const int from = row_of(g[sv].kind), to = row_of(g[tv].kind);
    if (from < 0 || to < 0 || to != from - 1 || g[a].kind != LinkKind::network)
      continue;
    f.joined.insert({from, member(sv), member(tv)});
    FabricBundle& b = f.up[from];
    b.links += g[a].lanes;
    b.bandwidth = std::max(b.bandwidth, g[a].bandwidth / std::max(1, g[a].lanes));
  }
  return f;
}

} // namespace

void write_fabric_svg(std::ostream& out, const ClusterGraph& cg)
{
  const PlatformSpec& p = cg.platform();
  const FabricRows f = fabric_rows(cg);
  const std::vector<FabricRow>& rows = f.rows;
  // layout: at most five boxes a row (the first three, "...", the last)
  const int width = 960, row_h = 120, top = 70, box_h = 44;
  const int height = top + static_cast<int>(rows.size()) * row_h + 10;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"13\">\n";
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  std::ostringstream title;
  title << p.name << ": " << cg.gpus() << " GPUs, " << to_string(p.fabric.kind);
  if (p.fabric.oversubscription > 1)
    title << ", " << p.fabric.oversubscription << ":1 oversubscribed";
  out << "<text x=\"" << width / 2 << "\" y=\"28\" text-anchor=\"middle\" font-size=\"17\">" << xml_text(title.str())
      << "</text>\n";
  auto shown = [](int members) {
    std::vector<std::string> labels;
    if (members <= 5) {
      for (int i = 0; i < members; ++i)
        labels.push_back(std::to_string(i));
    } else {
      labels = {"0", "1", "2", "...", std::to_string(members - 1)};
    }
    return labels;
  };
  auto centre_x = [&](std::size_t i, std::size_t n) { return width * (2 * static_cast<int>(i) + 1) / (2 * static_cast<int>(n)); };
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const int y = top + static_cast<int>(r) * row_h;
    const auto labels = shown(rows[r].members);
    // the links up to the row above, drawn first so that the boxes cover their ends
    if (r > 0 && f.up.count(static_cast<int>(r))) {
      const auto above = shown(rows[r - 1].members);
      for (std::size_t i = 0; i < labels.size(); ++i)
        for (std::size_t j = 0; j < above.size(); ++j)
          if (labels[i] != "..." && above[j] != "..." &&
              f.joined.count({static_cast<int>(r), std::stoi(labels[i]), std::stoi(above[j])}))
            out << "<line x1=\"" << centre_x(i, labels.size()) << "\" y1=\"" << y + 18 << "\" x2=\""
                << centre_x(j, above.size()) << "\" y2=\"" << y - row_h + 18 + box_h
                << "\" stroke=\"#9aa5b1\" stroke-width=\"1\"/>\n";
      const FabricBundle& b = f.up.at(static_cast<int>(r));
      std::ostringstream bundle;
      bundle << b.links << " links of " << format_bandwidth(b.bandwidth) << " each way";
      out << "<text x=\"" << width - 12 << "\" y=\"" << y - 8 << "\" text-anchor=\"end\" fill=\"#3b4a5a\">"
          << xml_text(bundle.str()) << "</text>\n";
    }
    out << "<text x=\"12\" y=\"" << y + 12 << "\" font-weight=\"bold\">" << xml_text(rows[r].caption) << "</text>\n";
    for (std::size_t i = 0; i < labels.size(); ++i) {
      const int cx = centre_x(i, labels.size()), bw = std::min(150, width / static_cast<int>(labels.size()) - 20);
      if (labels[i] == "...") {
        out << "<text x=\"" << cx << "\" y=\"" << y + 18 + box_h / 2 + 5 << "\" text-anchor=\"middle\">"
            << xml_text(std::to_string(rows[r].members - 4) + " more") << "</text>\n";
        continue;
      }
      out << "<rect x=\"" << cx - bw / 2 << "\" y=\"" << y + 18 << "\" width=\"" << bw << "\" height=\"" << box_h
          << "\" rx=\"6\" fill=\"" << (rows[r].kind == VertexKind::gpu ? "#e8f1e4" : "#e4ebf5")
          << "\" stroke=\"#3b4a5a\"/>\n";
      out << "<text x=\"" << cx << "\" y=\"" << y + 18 + box_h / 2 + 5 << "\" text-anchor=\"middle\">"
          << xml_text(rows[r].box + " " + labels[i]) << "</text>\n";
    }
  }
  out << "</svg>\n";
}

} // namespace clustersim
