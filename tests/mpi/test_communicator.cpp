// Run under `mpirun -np N` (N >= 2; CTest runs 2 and 4): the communication layer moves
// handle-sized blobs and a config larger than the eager limit; the start gate's shared memory is
// private and cleaned up; the group steps (typed step reports, nodes, a gate per node) hold for
// any number of ranks.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "comm/communicator.hpp"
#include "measure/lock_step.hpp"
#include "device/shared_gate.hpp"
#include "plan/group_layout.hpp"

namespace {

int failures = 0;

// A step's own data, as the latency and interference runners declare theirs.
struct ProbeData {
  std::string name;
  double value = 0;
  std::vector<unsigned> list;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProbeData, name, value, list)

void check(bool ok, const std::string& what, int rank) {
  std::printf("rank %d: %s: %s\n", rank, ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++failures;
}

// The group steps: every rank's typed report reaches every rank (one rank's error included),
// the node override splits one host into nodes, and each node's gate opens only by its leader.
void group_steps(p2pbench::Communicator& comm) {
  using namespace p2pbench;
  const int me = comm.rank(), n = comm.size();
  LockStep steps(comm);
  const auto reports = steps.run_reports("a typed step", [&](StepReport& r) {
    r.iterations = uint64_t(100 + me);
    r.lanes.push_back({{{me, (me + 1) % n}}, 1.5 * me, 2e6, false, false, 10.0 * me, 20.0 * me, {}});
    if (me == n - 1) throw std::runtime_error("an error on the last rank");
  });
  bool typed = reports.size() == size_t(n);
  for (int r = 0; typed && r < n; ++r) {
    const StepReport& x = reports[size_t(r)];
    typed = x.iterations == uint64_t(100 + r) && x.lanes.size() == 1 && x.lanes[0].flows[0].dst_rank == (r + 1) % n &&
            x.lanes[0].end_ns == 20.0 * r && (r == n - 1) == !x.error.empty();
  }
  check(typed, "typed step reports (flows, timings, one rank's error) reach every rank", me);

  // A step with data of its own: a rank that failed reports the default value, the others theirs.
  const auto with_data = steps.run<ProbeData>("a step with data", [&](StepReport& r, ProbeData& d) {
    d = {"rank " + std::to_string(me), 0.25 * me, std::vector<unsigned>(size_t(me), 7u)};
    if (me == 0) r.verify_error = "verification failed: rank 0 saw bad data";
    if (me == n - 1) throw std::runtime_error("an error on the last rank");
  });
  bool carried = with_data.size() == size_t(n);
  for (int r = 0; carried && r < n; ++r) {
    const ProbeData& d = with_data[size_t(r)].data;
    const bool failed = r == n - 1;
    carried = failed ? (d.name.empty() && d.value == 0 && d.list.empty() && !with_data[size_t(r)].report.error.empty())
                     : (d.name == "rank " + std::to_string(r) && d.value == 0.25 * r && d.list == std::vector<unsigned>(size_t(r), 7u));
  }
  CaseOutcome out;
  const auto data_reports = reports_of(with_data);
  const bool verify_seen = any_verify_failed(data_reports, out) && out.error == "verification failed: rank 0 saw bad data";
  check(carried && verify_seen, "a step's typed data reaches every rank (a failed rank's: the default)", me);

  // Every two ranks of the host as a node (--ranks-per-node 2): one gate per node.
  std::vector<std::string> gpus, hosts;
  for (int r = 0; r < n; ++r) {
    gpus.push_back("gpu" + std::to_string(r % 2));
    hosts.push_back(comm.host());
  }
  const GroupLayout layout = GroupLayout::from_identities(gpus, hosts, 2);
  comm.set_nodes(layout.node_of_rank);
  check(layout.nodes().size() == size_t((n + 1) / 2) && comm.node_of(me) == me / 2, "the node override: nodes of 2 ranks", me);
  const int leader = layout.nodes()[size_t(layout.node_of_rank[size_t(me)])].front();
  std::optional<SharedGate> gate;
  std::string name;
  if (me == leader) {
    gate.emplace(SharedGate::create());
    name = gate->name();
  }
  const auto names = comm.allgather(name, "sharing the nodes' gate names");
  if (me != leader) gate.emplace(SharedGate::open(names[size_t(leader)]));
  comm.barrier("every gate opened");
  if (me == leader) gate->unlink();
  gate->release(me == 0 ? 5u : 0u);  // only rank 0, node 0's leader, opens anything
  comm.barrier("node 0 released");
  check(gate->current() == (layout.node_of_rank[size_t(me)] == 0 ? 5u : 0u), "a node's gate opens by its own leader only", me);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace p2pbench;
  Communicator comm(&argc, &argv);
  const int me = comm.rank();
  const int n = comm.size();
  check(n >= 2, "at least two ranks", me);
  check(comm.local_size() == n && comm.local_rank() == me, "node-local rank from MPI_Comm_split_type", me);

  // A 64-byte blob per rank (the size of cudaIpcMemHandle_t), with every byte value.
  std::string blob(64, '\0');
  for (int i = 0; i < 64; ++i) blob[size_t(i)] = char((i * 7 + me * 13) & 0xff);
  const auto blobs = comm.allgather(blob, "exchanging handle-sized blobs");
  bool same = blobs.size() == size_t(n);
  for (int r = 0; same && r < n; ++r)
    for (int i = 0; i < 64; ++i) same = same && blobs[size_t(r)][size_t(i)] == char((i * 7 + r * 13) & 0xff);
  check(same, "handle-sized blobs arrive byte-exact", me);

  // 4 MiB: far beyond any eager limit, so the rendezvous path is used.
  std::string config;
  if (me == 0) {
    config = "{\"label\": \"";
    config.append(4u << 20, 'x');
    config += "\"}";
  }
  comm.broadcast(config, 0, "broadcasting a large config");
  check(config.size() == (4u << 20) + 13 && config[100] == 'x' && config.back() == '}', "4 MiB config broadcast", me);

  check(comm.all_true(true, "and") && !comm.all_true(me == 0, "and"), "logical AND over ranks", me);
  check(comm.max(double(me) + 0.5, "max") == n - 0.5, "maximum over ranks", me);

  // The start gate: created private (0600) by rank 0, opened by rank 1, then unlinked.
  std::string name;
  std::optional<SharedGate> gate;
  if (me == 0) {
    gate.emplace(SharedGate::create());
    name = gate->name();
    struct stat st{};
    check(stat(("/dev/shm" + name).c_str(), &st) == 0 && (st.st_mode & 0777) == 0600, "gate object has mode 0600", me);
  }
  comm.broadcast(name, 0, "sharing the gate name");
  if (me != 0) gate.emplace(SharedGate::open(name));
  comm.barrier("both opened");
  if (me == 0) gate->unlink();
  comm.barrier("unlinked");
  check(access(("/dev/shm" + name).c_str(), F_OK) != 0, "gate name removed once both ranks hold it", me);
  if (me == 0) gate->release(7);
  comm.barrier("released");
  check(gate->current() == 7, "a store by rank 0 is seen by rank 1 through the shared page", me);

  group_steps(comm);

  const bool all_ok = comm.all_true(failures == 0, "collecting results");
  if (me == 0) std::printf("%s\n", all_ok ? "communicator tests: all passed" : "communicator tests: FAILED");
  return all_ok ? 0 : 1;
}
