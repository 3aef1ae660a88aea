// A PeerGroup of threads in one process: each thread is a rank, exchange() meets the other
// threads on a shared board. Lets the baselines' collective set-up run in a unit test, and their
// engines run for several ranks on the GPUs of one process, without MPI.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/peer_group.hpp"

namespace p2pbench::testing {

// Where the threads meet. One exchange at a time: every rank must arrive before any leaves.
class ThreadBoard {
 public:
  explicit ThreadBoard(int size) : size_(size), slots_(size_t(size)) {}

  std::vector<std::string> exchange(int rank, const std::string& mine, double timeout_s) {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    slots_.at(size_t(rank)) = mine;
    if (++arrived_ == size_) {
      result_ = slots_;
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
      return result_;
    }
    if (!changed_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return generation_ != generation; }))
      throw std::runtime_error("rank " + std::to_string(rank) + ": the other threads never arrived");
    return result_;  // not overwritten before this rank arrives at the next exchange
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int size_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::vector<std::string> slots_, result_;
};

class ThreadPeerGroup final : public PeerGroup {
 public:
  ThreadPeerGroup(ThreadBoard& board, int rank, std::vector<int> node_of_rank)
      : board_(board), rank_(rank), nodes_(std::move(node_of_rank)) {}
  int rank() const override { return rank_; }
  int size() const override { return int(nodes_.size()); }
  int node_of(int rank) const override { return nodes_.at(size_t(rank)); }
  std::vector<std::string> exchange(const std::string& mine, const char*, std::optional<double> timeout_s) const override {
    return board_.exchange(rank_, mine, timeout_s.value_or(30.0));
  }

 private:
  ThreadBoard& board_;
  int rank_;
  std::vector<int> nodes_;
};

// Runs body(peers) on one thread per rank of `node_of_rank`; rethrows the first failure.
inline void run_ranks(const std::vector<int>& node_of_rank, const std::function<void(const PeerGroup&)>& body) {
  ThreadBoard board(int(node_of_rank.size()));
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(node_of_rank.size());
  for (int r = 0; r < int(node_of_rank.size()); ++r)
    threads.emplace_back([&, r] {
      try {
        ThreadPeerGroup peers(board, r, node_of_rank);
        body(peers);
      } catch (...) {
        errors[size_t(r)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace p2pbench::testing
