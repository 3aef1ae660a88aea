#include "driver/benchmark_session.hpp"

#include <cstdio>

#include "comm/communicator.hpp"
#include "common/stop_signal.hpp"
#include "driver/session.hpp"
#include "measure/sanitizer_mode.hpp"

namespace p2pbench {

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
  Session session(comm, options, config, command_line);
  return session.run();
}

}  // namespace p2pbench
