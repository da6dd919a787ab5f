#pragma once
/// Writes a ClusterGraph for other tools: Graphviz DOT (through Boost's write_graphviz) and a
/// SimGrid platform XML (version 4.1, one Dijkstra zone) for users who run SimGrid themselves.

#include "ClusterGraph.hpp"

#include <ostream>
#include <string>

namespace clustersim {

/// Vertex name used in both exports: kind + global index, e.g. "gpu12", "leaf3".
std::string vertex_name(const Graph& g, VertexId v);

void write_dot(std::ostream& out, const ClusterGraph& cg);

/// GPUs become hosts (speed = dense peak of `precision`), every other vertex a router, every
/// physical link a SPLITDUPLEX link with the per-direction bandwidth, and every link a
/// symmetrical route, so SimGrid's shortest-path routing follows the graph.
void write_simgrid_xml(std::ostream& out, const ClusterGraph& cg, Precision precision);

} // namespace clustersim
