#include "gbench/two_gpu_session.hpp"

#include "common/errors.hpp"

namespace p2pbench::gbench {

namespace {

std::string gpu_label(const GpuInfo& g) {
  return "GPU " + std::to_string(g.device_index) + " (" + g.name + ", " + g.pci_bus_id + ")";
}

// select_device names the driver's --devices flag in its errors; say --src or --dst instead.
int select_gpu(const std::string& flag, const std::string& spec) {
  try {
    return select_device(spec, 0);
  } catch (const InputError& e) {
    const std::string prefix = e.key() + " = " + spec + ": ";
    const std::string message = e.what();
    if (e.key().empty() || message.rfind(prefix, 0) != 0) throw;
    throw InputError(flag, spec, message.substr(prefix.size()));
  }
}

void enable_peer_access(const GpuInfo& a, const GpuInfo& b) {
  int ab = 0, ba = 0;
  cuda_check(cudaDeviceCanAccessPeer(&ab, a.device_index, b.device_index),
             "asking whether " + gpu_label(a) + " can access " + gpu_label(b));
  cuda_check(cudaDeviceCanAccessPeer(&ba, b.device_index, a.device_index),
             "asking whether " + gpu_label(b) + " can access " + gpu_label(a));
  if (!ab || !ba)
    throw RuntimeFailure("peer access between " + gpu_label(a) + " and " + gpu_label(b) +
                         " is not possible (cudaDeviceCanAccessPeer: " + std::to_string(ab) + " one way, " +
                         std::to_string(ba) + " the other; check `nvidia-smi topo -m`); nothing was measured");
  for (const auto& [from, to] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    cuda_check(cudaSetDevice(from->device_index), "selecting " + gpu_label(*from));
    const cudaError_t err = cudaDeviceEnablePeerAccess(to->device_index, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();  // not an error: clear it
      continue;
    }
    cuda_check(err, "enabling peer access from " + gpu_label(*from) + " to " + gpu_label(*to));
  }
}

}  // namespace

TwoGpuSession::~TwoGpuSession() {
  if (!open_) return;
  // Nothing may still run on the buffers and streams about to be freed.
  for (const Gpu& g : gpus_)
    if (cudaSetDevice(g.device) == cudaSuccess) report_teardown_error(cudaDeviceSynchronize(), "finishing the GPUs' work");
}

void TwoGpuSession::open() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw RuntimeFailure(std::string("no CUDA GPU is visible to this process (") +
                         (err != cudaSuccess ? std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err)
                                             : std::string("0 devices")) +
                         "): p2pbench-gbench needs two GPUs with peer access (--src, --dst); nothing was measured");
  }
  if (count == 1 && !settings_.allow_same_device)
    throw RuntimeFailure("only one CUDA GPU is visible to this process (" + gpu_label(describe_device(0)) +
                         "): p2pbench-gbench needs two GPUs with peer access (--src, --dst); nothing was measured. "
                         "--allow-same-device --dst 0 runs a functional test on one GPU (not a P2P figure)");
  const int src = select_gpu("--src", settings_.src_spec);
  const int dst = select_gpu("--dst", settings_.dst_spec);
  for (int slot = 0; slot < 2; ++slot) {
    gpus_[slot].device = slot == 0 ? src : dst;
    gpus_[slot].info = describe_device(gpus_[slot].device);
  }
  if (src == dst && !settings_.allow_same_device)
    throw InputError("--src/--dst", settings_.src_spec + "/" + settings_.dst_spec,
                     "both name " + gpu_label(gpus_[0].info) +
                         "; give two GPUs, or pass --allow-same-device for functional testing (not a P2P figure)");
  if (src != dst) enable_peer_access(gpus_[0].info, gpus_[1].info);
  use(0);
  // Portable and mapped: with unified addressing one device address serves both GPUs.
  gate_ = MappedHostBuffer(sizeof(uint32_t), "the start gate");
  __atomic_store_n(static_cast<uint32_t*>(gate_.host()), 0u, __ATOMIC_RELEASE);
  open_ = true;
}

void TwoGpuSession::use(int slot) const {
  cuda_check(cudaSetDevice(gpus_[slot].device), "selecting " + gpu_label(gpus_[slot].info));
}

void TwoGpuSession::ensure_buffers(uint64_t bytes) {
  if (bytes <= capacity_) return;
  capacity_ = 0;
  for (int slot = 0; slot < 2; ++slot) {
    use(slot);
    cuda_check(cudaDeviceSynchronize(), "finishing work on the old buffers of " + gpu_label(gpus_[slot].info));
    gpus_[slot].src = DeviceBuffer();  // free before allocating: the old and new need not fit together
    gpus_[slot].dst = DeviceBuffer();
  }
  for (int slot = 0; slot < 2; ++slot) {
    use(slot);
    gpus_[slot].src = DeviceBuffer(bytes, "the source buffer on " + gpu_label(gpus_[slot].info));
    gpus_[slot].dst = DeviceBuffer(bytes, "the destination buffer on " + gpu_label(gpus_[slot].info));
  }
  capacity_ = bytes;
}

Endpoints TwoGpuSession::endpoints(int slot, const Flow& flow, int, const std::optional<HostBufferRequest>&) {
  const Gpu& me = gpus_[slot];
  const Gpu& other = gpus_[flow.src_rank == slot ? flow.dst_rank : flow.src_rank];
  return {me.src.get(), me.dst.get(), other.src.get(), other.dst.get(), nullptr, flow, slot};
}

TransferTimer& TwoGpuSession::timer(int slot, size_t lane) {
  auto& timers = gpus_[slot].timers;
  if (timers.size() <= lane) use(slot);  // a timer's stream and events belong to its GPU
  while (timers.size() <= lane) timers.push_back(std::make_unique<TransferTimer>(settings_.run.timeout_scale));
  return *timers[lane];
}

std::vector<StepReport> TwoGpuSession::step(const char*, const std::function<void(int, StepReport&)>& local, double) {
  // Every local wait has its own deadline (the timer's); one process needs no exchange.
  std::vector<StepReport> reports(2);
  for (int slot = 0; slot < 2; ++slot)
    run_captured(gpu_label(gpus_[slot].info) + ": ", [&] {
      use(slot);
      local(slot, reports[size_t(slot)]);
    }, reports[size_t(slot)]);
  return reports;
}

void TwoGpuSession::release(uint32_t ticket) {
  __atomic_store_n(static_cast<uint32_t*>(gate_.host()), ticket, __ATOMIC_RELEASE);
}

void TwoGpuSession::record_failure(const std::string& benchmark, const std::string& why, bool fatal) {
  failures_.push_back(benchmark + ": " + why);
  if (fatal && !unusable_) unusable_ = "an earlier case left a GPU unusable (" + benchmark + ": " + why + ")";
}

}  // namespace p2pbench::gbench
