// Peer access between GPUs 0 and 1 for the GPU tests that need two GPUs in one process.
#pragma once

namespace p2pbench::testing_support {

// Enables peer access between GPUs 0 and 1, both ways, once per process: a second
// cudaDeviceEnablePeerAccess fails with "already enabled", an error compute-sanitizer reports
// (and counts against the run) even when the caller ignores it. False, with nothing enabled,
// where fewer than two GPUs are visible or they have no peer path. Leaves GPU 0 current.
bool peer_access_between_gpus_0_and_1();

}  // namespace p2pbench::testing_support
