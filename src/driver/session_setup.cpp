// Session set-up: the GPU of each rank, the pair, device memory, the start gate and the peer's
// buffers. Each step runs on every rank; any rank's failure ends the session on all ranks
// with one message per failing rank (printed by rank 0) and a common exit status.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "common/stop_signal.hpp"
#include "common/typed_exchange.hpp"
#include "config/axis.hpp"
#include "driver/run_header.hpp"
#include "driver/run_meta.hpp"
#include "driver/session.hpp"
#include "device/cpu_binding.hpp"
#include "measure/sanitizer_mode.hpp"
#include "plan/nvlink_domains.hpp"
#include "plan/sweep.hpp"
#include "topology/fabric_info.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

// One rank's outcome of a set-up step.
struct SetupReport {
  std::string error;  // empty: the step succeeded here
  bool bad_input = false;
  int stop = 0;  // a stop signal this rank received (0: none)
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SetupReport, error, bad_input, stop)

// Returns the exit status to leave with, or 0 to go on. A stop signal ends set-up with 128+signal.
int setup_step(const Communicator& comm, const char* what, const std::function<void()>& local) {
  SetupReport mine;
  try {
    local();
  } catch (const InputError& e) {
    mine = {e.what(), true, 0};
  } catch (const std::exception& e) {
    mine = {std::string(what) + ": " + e.what(), false, 0};
  }
  mine.stop = stop_signal_received();
  int status = kExitOk;
  std::set<std::string> printed;
  const auto all = gather_values(comm, mine, what, LockStep::kDefaultLocalWorkS + LockStep::kSlackS);
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].stop) status = std::max(status, 128 + all[r].stop);
    if (all[r].error.empty()) continue;
    status = std::max(status, all[r].bad_input ? int(kExitBadInput) : int(kExitFailure));
    if (comm.rank() == 0 && printed.insert(all[r].error).second)
      std::fprintf(stderr, "p2pbench: error (rank %zu): %s\n", r, all[r].error.c_str());
  }
  return status;
}

// P2P attributes of the pair, from a process that sees both GPUs, else marked unknown.
json p2p_attributes(int device, const std::string& peer_bus_id, bool same_device) {
  if (same_device) return {{"known", false}, {"reason", "both ranks use one GPU (--allow-same-device)"}};
  int peer = -1;
  if (cudaDeviceGetByPCIBusId(&peer, peer_bus_id.c_str()) != cudaSuccess || peer == device) {
    cudaGetLastError();
    return {{"known", false}, {"reason", "this process cannot see the peer GPU (e.g. CUDA_VISIBLE_DEVICES per rank)"}};
  }
  auto attr = [&](cudaDeviceP2PAttr a, const char* name) {
    int v = 0;
    cuda_check(cudaDeviceGetP2PAttribute(&v, a, device, peer), std::string("reading the P2P attribute ") + name);
    return v;
  };
  return {{"known", true},
          {"access_supported", attr(cudaDevP2PAttrAccessSupported, "access supported") != 0},
          {"native_atomics_supported", attr(cudaDevP2PAttrNativeAtomicSupported, "native atomics") != 0},
          {"performance_rank", attr(cudaDevP2PAttrPerformanceRank, "performance rank")},
          {"source", "cudaDeviceGetP2PAttribute in rank 0"}};
}

}  // namespace

// One rank (no mpirun needed) runs the methods of its own GPU; the others are refused before
// anything touches a GPU or the output.
int Session::setup() {
  if (int rc = setup_step(comm_, "checking the methods against the ranks", [&] { check_rank_count(config_, comm_.size()); }))
    return rc;
  for (auto step : {&Session::lock_output, &Session::select_gpu, &Session::check_group, &Session::plan_cases, &Session::check_memory,
                    &Session::open_gate, &Session::map_buffers})
    if (int rc = (this->*step)()) return rc;
  describe_run();
  return kExitOk;
}

// The writing rank holds the output path for the whole run; a second job on the same path is
// refused here, before either touches the file. Checked again under the lock: a job that held
// it until a moment ago may have just finished its file.
int Session::lock_output() {
  return setup_step(comm_, "locking the output path", [&] {
    if (me_ != 0) return;
    output_lock_.emplace(OutputLock::acquire(options_.output_path, comm_.host()));
    check_output_replaceable(options_.output_path, options_.force);
  });
}

int Session::select_gpu() {
  return setup_step(comm_, "selecting the GPU", [&] {
    const auto specs = split_list(options_.devices);
    device_ = select_device(specs[size_t(me_) % specs.size()], comm_.local_rank());
    cuda_check(cudaSetDevice(device_), "selecting GPU " + std::to_string(device_));
    gpu_ = describe_device(device_);
    cpu_binding_ = bind_near_gpu(gpu_.pci_bus_id, !options_.no_cpu_binding);
  });
}

int Session::check_group() {
  // Identities travel as bytes, so "same GPU" holds when each rank sees only its own GPU.
  gpus_ = gather_values(comm_, gpu_.to_json(me_), "exchanging GPU identities");
  std::vector<std::string> uuids, hosts;
  for (const auto& g : gpus_) uuids.push_back(g["uuid"].get<std::string>());
  for (const auto& g : gpus_) facts_.l2_bytes.push_back(g["l2_bytes"].get<uint64_t>());
  // A node is what CUDA IPC can span: one host, and one PID namespace on it.
  for (const auto& h : comm_.allgather(comm_.ipc_domain(), "exchanging host names")) hosts.push_back(h);
  facts_.layout = GroupLayout::from_identities(uuids, hosts, options_.ranks_per_node);
  assign_domains();
  facts_.layout.all_mps_clients =
      std::all_of(gpus_.begin(), gpus_.end(), [](const json& g) { return g.value("mps", false); });
  same_device_ = facts_.layout.gpus().size() < uuids.size();
  comm_.set_nodes(facts_.layout.node_of_rank);
  if (int rc = setup_step(comm_, "checking the GPU pair", [&] {
        if (same_device_ && !options_.allow_same_device)
          throw InputError("--devices", gpus_[0]["uuid"].get<std::string>(),
                           "several ranks are on the same GPU, and P2P figures need two GPUs: give each rank its own "
                           "GPU (--devices, CUDA_VISIBLE_DEVICES). With one GPU, each rank's host link is still a real "
                           "figure: mpirun -np 2 p2pbench --config configs/host-link.json --allow-same-device; "
                           "--allow-same-device runs any config for functional testing (its P2P rows are copies "
                           "within one GPU, marked same-device, never P2P figures)");
        if (me_ == 0 && comm_.size() > 1)
          p2p_ = p2p_attributes(device_, gpus_[1]["pci_bus_id"], facts_.layout.same_device(0, 1));
        else if (me_ == 0)
          p2p_ = {{"known", false}, {"reason", "one rank: no peer GPU"}};
      }))
    return rc;
  p2p_ = broadcast_value(comm_, p2p_, 0, "sharing the P2P attributes");

  // Without peer access the P2P and latency methods are skipped while the host link and the
  // baselines still run; a sweep of nothing but P2P methods is refused.
  if (comm_.size() == 1) no_peer_ = "one rank: no peer GPU to map";
  else if (options_.no_p2p) no_peer_ = "peer access turned off (--no-p2p)";
  else if (p2p_["known"] == true && p2p_["access_supported"] == false)
    no_peer_ = "peer access between these GPUs is not possible (cudaDevP2PAttrAccessSupported = 0)";
  if (no_peer_ && me_ == 0 && comm_.size() > 1) std::fprintf(stderr, "p2pbench: warning: %s: P2P and latency methods are skipped\n", no_peer_->c_str());
  // NCCL would still use P2P where the hardware has it: tell it not to, unless the user chose.
  if (options_.no_p2p) setenv("NCCL_P2P_DISABLE", "1", 0);
  return kExitOk;
}

// Each rank reads its GPU's fabric registration (NVML); from all of them every rank groups the
// ranks into the same NVLink domains: a fabric clique across hosts, else the node.
void Session::assign_domains() {
  const GpuFabric mine = read_gpu_fabric(GpuIdentity{gpu_.pci_bus_id, gpu_.uuid});
  const std::vector<GpuFabric> fabric = gather_values(comm_, mine, "exchanging the GPUs' fabric registrations");
  const std::vector<DomainDecision> decisions = assign_nvlink_domains(facts_.layout, fabric);
  facts_.layout.fabric_memory = config_.allocator == Allocator::kFabric;
  nvlink_domains_ = nvlink_domains_meta(facts_.layout, decisions, fabric);
}

// The plan needs the group (GPUs, nodes): every rank makes the same one from the same layout.
int Session::plan_cases() {
  if (int rc = setup_step(comm_, "planning the cases", [&] {
    check_case_count(config_, facts_.layout);  // refused before it is expanded, on the group it runs on
    cases_ = expand_cases(config_, facts_.layout);
    results_->set_cases_total(cases_.size());
    check_slow_flow_injection();
  })) return rc;
  if (int rc = setup_step(comm_, "checking what can run without peer access", [&] {
        if (!no_peer_ || !std::all_of(cases_.begin(), cases_.end(), [](const CaseSpec& c) { return needs_peer_mapping(c.method); }))
          return;
        throw InputError("methods", config_.to_json()["methods"].dump(),
                         *no_peer_ + ", and every method of this sweep needs it; the baselines (staged, nccl) and the "
                                     "host link (h2d, d2h) run without it");
      }))
    return rc;
  return kExitOk;
}

// The burn-in's test knob must name a flow the plan runs, or it would prove nothing.
void Session::check_slow_flow_injection() const {
  const auto& slow = config_.burn_in.inject_slow;
  if (!slow) return;
  const Flow f{slow->src_rank, slow->dst_rank};
  for (const CaseSpec& c : cases_)
    if (std::find(c.flows.begin(), c.flows.end(), f) != c.flows.end()) return;
  throw InputError("burn_in.inject_slow", std::to_string(f.src_rank) + "->" + std::to_string(f.dst_rank),
                   "no case of the plan runs this flow (src_rank -> dst_rank)");
}

int Session::check_memory() {
  // Each rank holds a source buffer and destination slots of the largest footprint (the formula
  // --dry-run reports, docs/groups.md); ranks on one GPU hold all their buffers there.
  const DeviceMemoryNeed need = device_memory_need(config_, cases_, facts_.layout);
  capacity_ = need.buffer_bytes;
  destination_slots_ = destination_slots(cases_);
  return setup_step(comm_, "checking device memory", [&] {
    size_t free_bytes = 0, total = 0;
    cuda_check(cudaMemGetInfo(&free_bytes, &total), "reading free device memory");
    const uint64_t needed = need.per_gpu_bytes;
    if (needed > free_bytes)
      throw InputError("sizes", format_size(*std::max_element(config_.sizes.begin(), config_.sizes.end())),
                       "needs " + format_size(needed) + " of device memory per GPU (source + destination" +
                           std::string(config_.buffer_pool_bytes ? " pools" : "") + "), but only " +
                           format_size(free_bytes) + " is free");
  });
}

int Session::open_gate() {
  // Each node's lowest rank creates its gate (one word of the host's shared memory), the node's
  // other ranks open it, then the name is removed at once. Each leader opens its own gate.
  const int leader = facts_.layout.nodes().at(size_t(facts_.layout.node_of_rank.at(size_t(me_)))).front();
  std::string name;
  if (int rc = setup_step(comm_, "creating the start gate", [&] {
        if (me_ == leader) gate_.emplace(SharedGate::create());
        if (me_ == leader) name = gate_->name();
      }))
    return rc;
  const auto names = comm_.allgather(name, "sharing the start gates' names");
  if (int rc = setup_step(comm_, "opening the start gate", [&] {
        if (me_ != leader) gate_.emplace(SharedGate::open(names.at(size_t(leader))));
      }))
    return rc;
  return setup_step(comm_, "registering the start gate", [&] {
    if (me_ == leader) gate_->unlink();
    gate_->register_with_device();
  });
}

int Session::map_buffers() {
  sweep_start_ns_ = host_clock_ns();
  return setup_step(comm_, "mapping the peer's buffers", [&] {
    Watchdog::Scope guard(&watchdog_, 120.0 * comm_.timeouts().scale, "mapping the peer's buffers");
    buffers_.emplace(comm_, facts_.layout, capacity_, destination_slots_, int(signal_regions(cases_)), no_peer_,
                     config_.allocator);
    facts_.allocator = to_string(config_.allocator);  // every row says how its buffers were mapped
    // Both probes spin on the GPU for a set time: under compute-sanitizer they measure nothing.
    if (sanitizer_mode_) return;
    clock_start_ = calibrate_gpu_clock();
    gpu_.observed_sm_clock_mhz = measure_sm_clock_mhz();
  });
}

// Every rank learns every rank's description and the link's peak (NVML, on rank 0), so every
// rank builds the same rows and meta and could write the file.
void Session::describe_run() {
  const json mine = rank_description(me_, comm_.host(), device_, cpu_binding_, gpu_.to_json(me_), clock_start_.to_json());
  ranks_ = gather_values(comm_, mine, "gathering rank descriptions");
  if (me_ == 0) link_.emplace(gpus_, facts_.layout);
  pairs_ = broadcast_value(comm_, link_ ? link_->pairs() : json(), 0, "sharing the pairs' topology and peaks");
  facts_.peak_gbps = peaks_of_pairs(pairs_, comm_.size());
  RunFacts facts;
  facts.command_line = command_line_;
  facts.config = &config_;
  facts.ranks = ranks_;
  facts.p2p = p2p_;
  facts.peer_access = buffers_->no_peer_reason() ? json{{"available", false}, {"reason", *buffers_->no_peer_reason()}}
                                                 : json{{"available", true}};
  facts.peer_mapping = buffers_->mapping_meta();
  facts.same_device = same_device_;
  facts.layout = &facts_.layout;
  facts.node_override = options_.ranks_per_node;
  facts.nvlink_domains = nvlink_domains_;
  facts.pairs = pairs_;
  facts.sanitizer_mode = sanitizer_mode_;
  meta_ = start_meta(facts);
  results_->set_meta(meta_);
  if (me_ == 0) {  // the header: a pasted log says what ran where
    json header = meta_;
    if (link_) header.update(link_->start_meta());
    print_run_header(stdout, header);
  }
}

}  // namespace p2pbench
