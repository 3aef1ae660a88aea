// An output path belongs to one run at a time, and a finished result is never lost to a rerun:
// a lock file beside the results ("PATH.lock", held with flock for the run's length and naming
// its holder), and an existing file replaced only when it is a checkpoint of an unfinished run
// (or empty), unless the user says --force.
#pragma once

#include <optional>
#include <string>

namespace p2pbench {

class OutputLock {
 public:
  // Takes the lock on `results_path` for this process, writing "pid P on host H since T" into
  // the lock file. Throws InputError naming --output and the holder when another process has it.
  static OutputLock acquire(const std::string& results_path, const std::string& host);
  // Who holds the lock now ("pid 12 on host node-a since ..."), or nullopt: for --dry-run,
  // which checks what the run would refuse without keeping anything.
  static std::optional<std::string> holder(const std::string& results_path);

  OutputLock(OutputLock&& other) noexcept;
  OutputLock& operator=(OutputLock&&) = delete;
  OutputLock(const OutputLock&) = delete;
  ~OutputLock();  // removes the lock file, then releases the lock

  static std::string lock_path(const std::string& results_path) { return results_path + ".lock"; }

 private:
  OutputLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// Refuses (InputError naming --output and the holder, as acquire() does) a path another run
// holds; takes nothing: for checks before the run (the dry run, every rank before MPI).
void check_output_not_in_use(const std::string& results_path);

// Refuses (InputError naming --output) to start a run whose final write would replace a file
// that is not a checkpoint of an unfinished p2pbench run: a complete results file (its case
// count and time named), another program's file, or anything unreadable. Empty files and
// checkpoints ("incomplete": true) may be replaced. `force`: replace anything.
void check_output_replaceable(const std::string& results_path, bool force);

}  // namespace p2pbench
