// The communication layer: the only code that talks MPI (mpi.h is included in
// communicator.cpp alone). Everything crosses as plain bytes: the MPI here is not CUDA-aware.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace p2pbench {

class Communicator {
 public:
  // MPI_Init plus the node-local communicator (MPI_Comm_split_type shared). Once per process.
  Communicator(int* argc, char*** argv);
  ~Communicator();  // MPI_Finalize
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // rank among the processes on this host
  int local_size() const { return local_size_; }
  const std::string& host() const { return host_; }

  // Every failure throws RuntimeFailure naming `what` and the MPI error string.
  void barrier(const char* what) const;
  // Root's bytes end up on every rank (any length: the size travels first).
  void broadcast(std::string& bytes, int root, const char* what) const;
  // Every rank's blob, indexed by rank.
  std::vector<std::string> allgather(const std::string& mine, const char* what) const;
  // Logical AND / maximum over all ranks.
  bool all_true(bool mine, const char* what) const;
  double max(double mine, const char* what) const;

  // Ends every rank of the job now (after a failure that the peer cannot learn of otherwise).
  [[noreturn]] void abort(int exit_status) const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string host_;
  void* local_comm_ = nullptr;  // MPI_Comm, kept opaque so callers never see mpi.h
};

}  // namespace p2pbench
