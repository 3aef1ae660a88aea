// The last deadline of a process: after the results are on disk, what is left (NCCL's and
// CUDA's teardown, MPI_Finalize waiting for a peer that was stopped, the runtime's exit
// handlers) may block forever behind a stopped peer or a hung GPU. Armed once, it ends the
// process if it is still alive after `seconds` of running time (time this process spent
// stopped is not counted), saying what it was waiting for. Nothing is left to lose by then.
#pragma once

#include <string>

namespace p2pbench {

// Starts a detached thread that sleeps in short ticks and, on expiry, writes
// "p2pbench: rank R: <what> did not finish within N s; ending the process" to stderr and calls
// _exit(exit_status). It touches no other state, so it is safe during exit().
void arm_end_deadline(double seconds, int exit_status, int rank, const std::string& what);

}  // namespace p2pbench
