#include "device/green_context.hpp"

#include <cuda.h>  // types only: every driver function is fetched at run time

#include <cstdio>

#include "common/cuda_check.hpp"
#include "common/driver_entry_point.hpp"

namespace p2pbench {

struct GreenPartition::Driver {
  using GetErrorName = CUresult(CUDAAPI*)(CUresult, const char**);
  using DeviceGet = CUresult(CUDAAPI*)(CUdevice*, int);
  using GetDevResource = CUresult(CUDAAPI*)(CUdevice, CUdevResource*, CUdevResourceType);
  using SplitByCount = CUresult(CUDAAPI*)(CUdevResource*, unsigned*, const CUdevResource*, CUdevResource*, unsigned, unsigned);
  using GenerateDesc = CUresult(CUDAAPI*)(CUdevResourceDesc*, CUdevResource*, unsigned);
  using GreenCtxCreate = CUresult(CUDAAPI*)(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned);
  using GreenCtxDestroy = CUresult(CUDAAPI*)(CUgreenCtx);
  using GreenCtxStreamCreate = CUresult(CUDAAPI*)(CUstream*, CUgreenCtx, unsigned, int);
  using StreamDestroy = CUresult(CUDAAPI*)(CUstream);

  GetErrorName get_error_name = driver_entry_point<GetErrorName>("cuGetErrorName", 6000);
  DeviceGet device_get = driver_entry_point<DeviceGet>("cuDeviceGet", 2000);
  GetDevResource get_dev_resource = driver_entry_point<GetDevResource>("cuDeviceGetDevResource", 12040);
  SplitByCount split_by_count = driver_entry_point<SplitByCount>("cuDevSmResourceSplitByCount", 12040);
  GenerateDesc generate_desc = driver_entry_point<GenerateDesc>("cuDevResourceGenerateDesc", 12040);
  GreenCtxCreate green_ctx_create = driver_entry_point<GreenCtxCreate>("cuGreenCtxCreate", 12040);
  GreenCtxDestroy green_ctx_destroy = driver_entry_point<GreenCtxDestroy>("cuGreenCtxDestroy", 12040);
  GreenCtxStreamCreate green_ctx_stream_create = driver_entry_point<GreenCtxStreamCreate>("cuGreenCtxStreamCreate", 12050);
  StreamDestroy stream_destroy = driver_entry_point<StreamDestroy>("cuStreamDestroy", 4000);

  void check(CUresult r, const std::string& what) const {
    if (r == CUDA_SUCCESS) return;
    const char* name = nullptr;
    get_error_name(r, &name);
    throw DriverFailure(what + ": " + (name ? name : "CUresult " + std::to_string(int(r))));
  }
};

GreenPartition::GreenPartition() = default;

std::unique_ptr<GreenPartition> GreenPartition::create(int device, int transfer_sms, std::string& why_not) {
  std::unique_ptr<GreenPartition> p(new GreenPartition());
  try {
    p->driver_ = std::make_unique<Driver>();
    const Driver& d = *p->driver_;
    CUdevice dev = 0;
    d.check(d.device_get(&dev, device), "finding the device");
    CUdevResource whole{};
    d.check(d.get_dev_resource(dev, &whole, CU_DEV_RESOURCE_TYPE_SM), "reading the device's SM resource");
    p->split_.requested = transfer_sms;
    p->split_.device_sms = int(whole.sm.smCount);
    p->split_.min_partition = int(whole.sm.minSmPartitionSize);
    p->split_.alignment = int(whole.sm.smCoscheduledAlignment);
    if (transfer_sms < 1 || transfer_sms >= int(whole.sm.smCount))
      throw DriverFailure("a group of " + std::to_string(transfer_sms) + " SMs leaves none of the device's " +
                          std::to_string(whole.sm.smCount) + " for the workload");
    CUdevResource group{}, rest{};
    unsigned groups = 1;
    d.check(d.split_by_count(&group, &groups, &whole, &rest, 0, unsigned(transfer_sms)),
            "splitting " + std::to_string(transfer_sms) + " SMs off the device");
    if (groups != 1 || rest.sm.smCount == 0)
      throw DriverFailure("the driver made " + std::to_string(groups) + " groups of " + std::to_string(transfer_sms) +
                          "+ SMs and left " + std::to_string(rest.sm.smCount) + " SMs over");
    p->split_.transfer_sms = int(group.sm.smCount);
    p->split_.workload_sms = int(rest.sm.smCount);
    CUdevResourceDesc transfer_desc = nullptr, workload_desc = nullptr;  // descriptors have no destroy call
    d.check(d.generate_desc(&transfer_desc, &group, 1), "describing the transfer's SM group");
    d.check(d.generate_desc(&workload_desc, &rest, 1), "describing the workload's SM group");
    CUgreenCtx ctx = nullptr;
    d.check(d.green_ctx_create(&ctx, transfer_desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "creating the transfer's green context");
    p->transfer_ctx_ = ctx;
    d.check(d.green_ctx_create(&ctx, workload_desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "creating the workload's green context");
    p->workload_ctx_ = ctx;
    CUstream s = nullptr;
    d.check(d.green_ctx_stream_create(&s, static_cast<CUgreenCtx>(p->transfer_ctx_), CU_STREAM_NON_BLOCKING, 0),
            "creating the transfer's stream");
    p->transfer_stream_ = reinterpret_cast<cudaStream_t>(s);
    d.check(d.green_ctx_stream_create(&s, static_cast<CUgreenCtx>(p->workload_ctx_), CU_STREAM_NON_BLOCKING, 0),
            "creating the workload's stream");
    p->workload_stream_ = reinterpret_cast<cudaStream_t>(s);
  } catch (const DriverFailure& e) {
    why_not = std::string("green contexts unavailable: ") + e.what();
    return nullptr;  // the destructor releases what was made
  }
  return p;
}

GreenPartition::~GreenPartition() {
  if (!driver_) return;
  auto report = [&](CUresult r, const char* what) {
    if (r == CUDA_SUCCESS) return;
    const char* name = nullptr;
    driver_->get_error_name(r, &name);
    std::fprintf(stderr, "p2pbench: warning: %s failed: %s\n", what, name ? name : "unknown error");
  };
  // Work still queued (a case that ended early) finishes before its context goes.
  for (cudaStream_t s : {transfer_stream_, workload_stream_})
    if (s && cudaStreamSynchronize(s) != cudaSuccess) cudaGetLastError();
  if (transfer_stream_) report(driver_->stream_destroy(reinterpret_cast<CUstream>(transfer_stream_)), "destroying the transfer's stream");
  if (workload_stream_) report(driver_->stream_destroy(reinterpret_cast<CUstream>(workload_stream_)), "destroying the workload's stream");
  if (transfer_ctx_) report(driver_->green_ctx_destroy(static_cast<CUgreenCtx>(transfer_ctx_)), "destroying a green context");
  if (workload_ctx_) report(driver_->green_ctx_destroy(static_cast<CUgreenCtx>(workload_ctx_)), "destroying a green context");
}

}  // namespace p2pbench
