#include "driver/benchmark_session.hpp"

#include <algorithm>
#include <cstdio>

#include "comm/communicator.hpp"
#include "common/end_deadline.hpp"
#include "common/errors.hpp"
#include "common/stop_signal.hpp"
#include "driver/session.hpp"
#include "measure/sanitizer_mode.hpp"

namespace p2pbench {

namespace {
constexpr double kExitS = 30.0;
}  // namespace

int run_benchmark_session(int argc, char** argv, const CliOptions& options, const Config& config) {
  // Before MPI starts: a signal from now on asks for an orderly stop.
  install_stop_signal_handlers();
  const std::vector<std::string> command_line(argv, argv + argc);
  CommTimeouts timeouts;
  timeouts.scale = effective_timeout_scale(sanitizer_mode_wanted(options.sanitize), options.timeout_scale_given,
                                           options.timeout_scale);
  Communicator comm(&argc, &argv, timeouts);
  // Again after MPI_Init: the MPI runtime may install handlers of its own (SIGUSR1 was not seen
  // by the ranks when installed only before it).
  install_stop_signal_handlers();
  if (comm.rank() == 0 && !comm.transport_note().empty())
    std::fprintf(stderr, "p2pbench: note: %s\n", comm.transport_note().c_str());
  int status = kExitFailure;
  {
    Session session(comm, options, config, command_line);
    status = session.run();
    // What is left (freeing what the session holds, MPI_Finalize where the session did not
    // reach it, CUDA's and MPI's exit handlers) runs after the file is final: bounded, and a
    // failure there is a failure of the run.
    arm_end_deadline(kExitS * comm.timeouts().scale, std::max(status, int(kExitFailure)), comm.rank(),
                     "the end of the process (freeing GPU resources, MPI_Finalize, exit handlers)");
  }
  comm.finalize();
  return status;
}

}  // namespace p2pbench
