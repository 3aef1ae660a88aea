// `p2pbench --topology`: one process, no MPI; NVML is loaded at run time.
#include <iostream>

#include "driver/benchmark_session.hpp"
#include "topology/topology_report.hpp"

namespace p2pbench {

int run_topology_report() { return print_topology(std::cout, ""); }

}  // namespace p2pbench
