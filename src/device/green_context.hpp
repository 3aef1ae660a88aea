// SM partitions with CUDA green contexts: K SMs for the transfer, the rest for the
// workload, each with a stream of its own. The driver's entry points are fetched at run time
// (cudaGetDriverEntryPointByVersion), so binaries still start where there is no libcuda; where
// a driver or GPU lacks green contexts, create() says why and the caller skips its cases.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

struct CUdevResource_st;  // cuda.h's, declared here so that only the .cpp includes the driver API

namespace p2pbench {

// How the device's SMs were split. On Hopper a group holds at least 8 SMs, in multiples of 8:
// the transfer group may hold more SMs than requested (e.g. 4 -> 8, 66 -> 72).
struct SmSplit {
  int requested = 0;     // SMs asked for the transfer
  int transfer_sms = 0;  // SMs the transfer's group holds
  int workload_sms = 0;  // SMs the workload's group (the remainder) holds
  int device_sms = 0;
  int min_partition = 0;  // the driver's minimum group size and alignment on this device
  int alignment = 0;
};

class GreenPartition {
 public:
  // The split of `device` (current) giving `transfer_sms` to the transfer; nullptr with
  // `why_not` set where green contexts are unavailable, keep no partition (an MPS daemon is
  // reachable) or the split is impossible.
  static std::unique_ptr<GreenPartition> create(int device, int transfer_sms, std::string& why_not);
  ~GreenPartition();
  GreenPartition(const GreenPartition&) = delete;
  GreenPartition& operator=(const GreenPartition&) = delete;

  cudaStream_t transfer_stream() const { return transfer_stream_; }
  // Another stream of the transfer's group, for a second end of the transfer on this GPU (put
  // with signal both ways: the receiver must run beside the sender, not behind it).
  cudaStream_t second_transfer_stream() const { return second_transfer_stream_; }
  cudaStream_t workload_stream() const { return workload_stream_; }
  const SmSplit& split() const { return split_; }

  // Orders the groups' streams with `stream` (of the calling thread's context), also while it
  // is captured into a graph: fork_from() makes both groups' streams wait for the work so far on
  // it; join_into() makes it wait for both groups' work so far. An event is recorded only on a
  // stream of its own context, so each group keeps its own join event.
  void fork_from(cudaStream_t stream) const;
  void join_into(cudaStream_t stream) const;

 private:
  struct Driver;  // the driver entry points, fetched once per partition
  GreenPartition();
  // The groups' contexts, streams and events; `dev` a CUdevice, the groups CUdevResources.
  void make_groups(int dev, CUdevResource_st& transfer, CUdevResource_st& workload);
  std::unique_ptr<Driver> driver_;
  SmSplit split_;
  void* transfer_ctx_ = nullptr;  // CUgreenCtx
  void* workload_ctx_ = nullptr;
  cudaStream_t transfer_stream_ = nullptr;
  cudaStream_t second_transfer_stream_ = nullptr;
  cudaStream_t workload_stream_ = nullptr;
  cudaEvent_t fork_ = nullptr;           // in the creating thread's context
  cudaEvent_t transfer_done_ = nullptr;  // in the transfer's green context
  cudaEvent_t workload_done_ = nullptr;  // in the workload's green context
};

}  // namespace p2pbench
