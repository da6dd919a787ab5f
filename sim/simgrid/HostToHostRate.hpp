#pragma once
/// Paces a host-to-host comm (Comm::sendto_init) before it starts. SimGrid 3.32 keeps
/// s4u::Comm::set_rate() for mailbox comms only: Comm::start() starts a host-to-host CommImpl
/// without passing the rate on (simgrid v3.32 src/s4u/s4u_Comm.cpp:296-307), so such a flow ran
/// unpaced. This sets the rate on the CommImpl itself.

#include <simgrid/s4u/Comm.hpp>

namespace clustersim {

/// `comm` comes from sendto_init() and has not started (no source and destination set yet).
void set_host_to_host_rate(simgrid::s4u::Comm& comm, double rate);

} // namespace clustersim
