// Run under `mpirun -np 2`: the communication layer moves handle-sized blobs and a config
// larger than the eager limit, and the start gate's shared memory is private and cleaned up.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "comm/communicator.hpp"
#include "measure/shared_gate.hpp"

namespace {

int failures = 0;

void check(bool ok, const std::string& what, int rank) {
  std::printf("rank %d: %s: %s\n", rank, ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++failures;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace p2pbench;
  Communicator comm(&argc, &argv);
  const int me = comm.rank();
  check(comm.size() == 2, "two ranks", me);
  check(comm.local_size() == 2 && comm.local_rank() == me, "node-local rank from MPI_Comm_split_type", me);

  // A 64-byte blob per rank (the size of cudaIpcMemHandle_t), with every byte value.
  std::string blob(64, '\0');
  for (int i = 0; i < 64; ++i) blob[size_t(i)] = char((i * 7 + me * 13) & 0xff);
  const auto blobs = comm.allgather(blob, "exchanging handle-sized blobs");
  bool same = blobs.size() == 2;
  for (int r = 0; same && r < 2; ++r)
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
  check(comm.max(double(me) + 0.5, "max") == 1.5, "maximum over ranks", me);

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
  if (me == 1) gate.emplace(SharedGate::open(name));
  comm.barrier("both opened");
  if (me == 0) gate->unlink();
  comm.barrier("unlinked");
  check(access(("/dev/shm" + name).c_str(), F_OK) != 0, "gate name removed once both ranks hold it", me);
  if (me == 0) gate->release(7);
  comm.barrier("released");
  check(gate->current() == 7, "a store by rank 0 is seen by rank 1 through the shared page", me);

  const bool all_ok = comm.all_true(failures == 0, "collecting results");
  if (me == 0) std::printf("%s\n", all_ok ? "communicator tests: all passed" : "communicator tests: FAILED");
  return all_ok ? 0 : 1;
}
