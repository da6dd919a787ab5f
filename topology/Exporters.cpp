#include "Exporters.hpp"

#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/graphviz.hpp>

#include <cstdio>

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

} // namespace clustersim
