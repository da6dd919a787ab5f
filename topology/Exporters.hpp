#pragma once
/// Writes a ClusterGraph for other tools: Graphviz DOT (through Boost's write_graphviz) and a
/// SimGrid platform XML (version 4.1, one Dijkstra zone) for users who run SimGrid themselves.

#include "topology/ClusterGraph.hpp"

#include <ostream>
#include <string>

namespace clustersim {

/// Vertex name used in both exports: kind + global index, e.g. "gpu12", "leaf3".
std::string vertex_name(const Graph& g, VertexId v);

void write_dot(std::ostream& out, const ClusterGraph& cg);

/// GPUs become hosts (speed = dense peak of `precision`), every graph resource a link with its
/// per-direction bandwidth and latency, and every ordered GPU pair a route listing exactly the
/// resources clustersim's own router uses (one "Full" zone), so a SimGrid run on the file sees
/// the same paths and sharing. (SimGrid 3.32's XML Floyd/Dijkstra zones do not route through
/// routers, which rules out a vertex-and-edge export.) The file grows as GPUs squared; it is
/// refused above `kMaxXmlGpus`.
constexpr int kMaxXmlGpus = 512;
void write_simgrid_xml(std::ostream& out, const ClusterGraph& cg, Precision precision);

/// An SVG of the fabric by tier, for people: a row per switch tier and one for the nodes, each
/// row showing at most five of its members (the first three, "...", the last) under a caption
/// that counts them ("128 nodes: 8 GPUs, 4 NVSwitches, 8 NICs each"), and between two rows the
/// links that join them, counted with their bandwidth per direction. Its size does not grow
/// with the cluster: 1,024 GPUs draw as legibly as 16.
void write_fabric_svg(std::ostream& out, const ClusterGraph& cg);

} // namespace clustersim
