#include "sim/simgrid/HostToHostRate.hpp"

// The CommImpl header is not installed by Debian's libsimgrid-dev; its set_rate(double) is an
// exported symbol of libsimgrid.so.3.32 (nm -D). Only that member is declared here, in a file
// of its own, so no other code sees this partial declaration.
namespace simgrid::kernel::activity {
class CommImpl {
public:
  CommImpl& set_rate(double rate);
};
} // namespace simgrid::kernel::activity

namespace clustersim {

void set_host_to_host_rate(simgrid::s4u::Comm& comm, double rate)
{
  // CommImpl derives from ActivityImpl alone (through ActivityImpl_T): the same address
  reinterpret_cast<simgrid::kernel::activity::CommImpl*>(comm.get_impl())->set_rate(rate);
}

} // namespace clustersim
