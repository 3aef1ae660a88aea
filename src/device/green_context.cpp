#include "device/green_context.hpp"

#include <cuda.h>  // types only: every driver function is fetched at run time

#include <cstdio>
#include <utility>

#include "common/cuda_check.hpp"
#include "common/device_connections.hpp"
#include "common/driver_entry_point.hpp"
#include "common/event_wait.hpp"

namespace p2pbench {

struct GreenPartition::Driver {
  using DeviceGet = CUresult(CUDAAPI*)(CUdevice*, int);
  using GetDevResource = CUresult(CUDAAPI*)(CUdevice, CUdevResource*, CUdevResourceType);
  using SplitByCount = CUresult(CUDAAPI*)(CUdevResource*, unsigned*, const CUdevResource*, CUdevResource*, unsigned, unsigned);
  using GenerateDesc = CUresult(CUDAAPI*)(CUdevResourceDesc*, CUdevResource*, unsigned);
  using GreenCtxCreate = CUresult(CUDAAPI*)(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned);
  using GreenCtxDestroy = CUresult(CUDAAPI*)(CUgreenCtx);
  using GreenCtxStreamCreate = CUresult(CUDAAPI*)(CUstream*, CUgreenCtx, unsigned, int);
  using StreamDestroy = CUresult(CUDAAPI*)(CUstream);
  using CtxFromGreenCtx = CUresult(CUDAAPI*)(CUcontext*, CUgreenCtx);
  using CtxPushCurrent = CUresult(CUDAAPI*)(CUcontext);
  using CtxPopCurrent = CUresult(CUDAAPI*)(CUcontext*);

  DeviceGet device_get = driver_entry_point<DeviceGet>("cuDeviceGet", 2000);
  GetDevResource get_dev_resource = driver_entry_point<GetDevResource>("cuDeviceGetDevResource", 12040);
  SplitByCount split_by_count = driver_entry_point<SplitByCount>("cuDevSmResourceSplitByCount", 12040);
  GenerateDesc generate_desc = driver_entry_point<GenerateDesc>("cuDevResourceGenerateDesc", 12040);
  GreenCtxCreate green_ctx_create = driver_entry_point<GreenCtxCreate>("cuGreenCtxCreate", 12040);
  GreenCtxDestroy green_ctx_destroy = driver_entry_point<GreenCtxDestroy>("cuGreenCtxDestroy", 12040);
  GreenCtxStreamCreate green_ctx_stream_create = driver_entry_point<GreenCtxStreamCreate>("cuGreenCtxStreamCreate", 12050);
  StreamDestroy stream_destroy = driver_entry_point<StreamDestroy>("cuStreamDestroy", 4000);
  CtxFromGreenCtx ctx_from_green_ctx = driver_entry_point<CtxFromGreenCtx>("cuCtxFromGreenCtx", 12040);
  CtxPushCurrent ctx_push_current = driver_entry_point<CtxPushCurrent>("cuCtxPushCurrent", 4000);
  CtxPopCurrent ctx_pop_current = driver_entry_point<CtxPopCurrent>("cuCtxPopCurrent", 4000);

  // An event of the green context `g` (made while it is current: an event is recorded only on
  // streams of its own context).
  cudaEvent_t event_in(CUgreenCtx g, const std::string& what) const {
    CUcontext ctx = nullptr;
    driver_check(ctx_from_green_ctx(&ctx, g), "finding the context of " + what);
    driver_check(ctx_push_current(ctx), "entering the context of " + what);
    cudaEvent_t event = nullptr;
    const cudaError_t made = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    CUcontext popped = nullptr;
    const CUresult left = ctx_pop_current(&popped);
    if (made != cudaSuccess) {
      cudaGetLastError();
      throw DriverFailure("making the event of " + what + ": " + cudaGetErrorName(made));
    }
    driver_check(left, "leaving the context of " + what);
    return event;
  }

  // A green context holding `sms` with a stream of its own.
  void make_group(CUdevice dev, CUdevResource& sms, void*& ctx, cudaStream_t& stream, const std::string& whose) const {
    CUdevResourceDesc desc = nullptr;  // descriptors have no destroy call
    driver_check(generate_desc(&desc, &sms, 1), "describing " + whose + " SM group");
    CUgreenCtx made = nullptr;
    driver_check(green_ctx_create(&made, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM),
                 "creating " + whose + " green context");
    ctx = made;
    stream = stream_in(made, whose);
  }

  cudaStream_t stream_in(CUgreenCtx g, const std::string& whose) const {
    CUstream s = nullptr;
    driver_check(green_ctx_stream_create(&s, g, CU_STREAM_NON_BLOCKING, 0), "creating " + whose + " stream");
    return reinterpret_cast<cudaStream_t>(s);
  }
};

GreenPartition::GreenPartition() = default;

std::unique_ptr<GreenPartition> GreenPartition::create(int device, int transfer_sms, std::string& why_not) {
  // Under MPS the driver makes the groups, and their kernels still run on any SM (docs/groups.md):
  // a partitioned figure would be an unpartitioned one.
  if (mps_daemon_reachable()) {
    why_not = "green contexts keep no SM partition under MPS: a partitioned case runs with a GPU per rank and no MPS daemon";
    return nullptr;
  }
  std::unique_ptr<GreenPartition> p(new GreenPartition());
  try {
    p->driver_ = std::make_unique<Driver>();
    const Driver& d = *p->driver_;
    CUdevice dev = 0;
    driver_check(d.device_get(&dev, device), "finding the device");
    CUdevResource whole{};
    driver_check(d.get_dev_resource(dev, &whole, CU_DEV_RESOURCE_TYPE_SM), "reading the device's SM resource");
    p->split_.requested = transfer_sms;
    p->split_.device_sms = int(whole.sm.smCount);
    p->split_.min_partition = int(whole.sm.minSmPartitionSize);
    p->split_.alignment = int(whole.sm.smCoscheduledAlignment);
    if (transfer_sms < 1 || transfer_sms >= int(whole.sm.smCount))
      throw DriverFailure("a group of " + std::to_string(transfer_sms) + " SMs leaves none of the device's " +
                          std::to_string(whole.sm.smCount) + " for the workload");
    CUdevResource group{}, rest{};
    unsigned groups = 1;
    driver_check(d.split_by_count(&group, &groups, &whole, &rest, 0, unsigned(transfer_sms)),
            "splitting " + std::to_string(transfer_sms) + " SMs off the device");
    if (groups != 1 || rest.sm.smCount == 0)
      throw DriverFailure("the driver made " + std::to_string(groups) + " groups of " + std::to_string(transfer_sms) +
                          "+ SMs and left " + std::to_string(rest.sm.smCount) + " SMs over");
    p->split_.transfer_sms = int(group.sm.smCount);
    p->split_.workload_sms = int(rest.sm.smCount);
    p->make_groups(dev, group, rest);
  } catch (const DriverFailure& e) {
    why_not = std::string("green contexts unavailable: ") + e.what();
    return nullptr;  // the destructor releases what was made
  }
  return p;
}

void GreenPartition::make_groups(int dev, CUdevResource& transfer, CUdevResource& workload) {
  const Driver& d = *driver_;
  d.make_group(dev, transfer, transfer_ctx_, transfer_stream_, "the transfer's");
  d.make_group(dev, workload, workload_ctx_, workload_stream_, "the workload's");
  second_transfer_stream_ = d.stream_in(static_cast<CUgreenCtx>(transfer_ctx_), "the transfer's second");
  transfer_done_ = d.event_in(static_cast<CUgreenCtx>(transfer_ctx_), "the transfer's group");
  workload_done_ = d.event_in(static_cast<CUgreenCtx>(workload_ctx_), "the workload's group");
  cuda_check(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "making the green groups' fork event");
}

void GreenPartition::fork_from(cudaStream_t stream) const {
  cuda_check(cudaEventRecord(fork_, stream), "forking work into the green groups");
  for (cudaStream_t s : {transfer_stream_, workload_stream_})
    cuda_check(cudaStreamWaitEvent(s, fork_, 0), "forking work into the green groups");
}

void GreenPartition::join_into(cudaStream_t stream) const {
  cuda_check(cudaEventRecord(transfer_done_, transfer_stream_), "joining the transfer's group");
  cuda_check(cudaEventRecord(workload_done_, workload_stream_), "joining the workload's group");
  for (cudaEvent_t e : {transfer_done_, workload_done_})
    cuda_check(cudaStreamWaitEvent(stream, e, 0), "joining the green groups' work");
}

GreenPartition::~GreenPartition() {
  if (!driver_) return;
  auto report = [&](CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) std::fprintf(stderr, "p2pbench: warning: %s failed: %s\n", what, driver_error_name(r).c_str());
  };
  // Work still queued (a case that ended early) finishes before its context goes. Work that is
  // still running at the deadline (a stopped GPU) keeps its contexts: the process is ending.
  for (cudaStream_t s : {transfer_stream_, second_transfer_stream_, workload_stream_}) {
    if (s && poll_stream(s, kLocalWorkWaitS) == cudaErrorNotReady) {
      std::fprintf(stderr, "p2pbench: warning: a green context's stream still ran after %.0f s; its contexts are left\n",
                   kLocalWorkWaitS);
      return;
    }
    cudaGetLastError();
  }
  for (cudaEvent_t e : {fork_, transfer_done_, workload_done_})
    if (e && cudaEventDestroy(e) != cudaSuccess) cudaGetLastError();
  const std::pair<cudaStream_t, const char*> streams[] = {{transfer_stream_, "destroying the transfer's stream"},
                                                          {second_transfer_stream_, "destroying the transfer's second stream"},
                                                          {workload_stream_, "destroying the workload's stream"}};
  for (const auto& [s, what] : streams)
    if (s) report(driver_->stream_destroy(reinterpret_cast<CUstream>(s)), what);
  if (transfer_ctx_) report(driver_->green_ctx_destroy(static_cast<CUgreenCtx>(transfer_ctx_)), "destroying a green context");
  if (workload_ctx_) report(driver_->green_ctx_destroy(static_cast<CUgreenCtx>(workload_ctx_)), "destroying a green context");
}

}  // namespace p2pbench
