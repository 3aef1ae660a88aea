// The results file of a run, kept current while the run goes on: after every case the whole
// document is rewritten atomically ("incomplete": true, with how many cases of how many), so
// a run killed at any moment loses at most the case in flight. The final write replaces it
// with the complete document. Thread-safe: the watchdog may write from its own thread.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace p2pbench {

class ResultsFile {
 public:
  // `writer`: whether this rank writes (the others keep the rows, to write if the writer is lost).
  ResultsFile(std::string path, size_t cases_total, bool writer);

  const std::string& path() const { return path_; }
  // The plan's size, once the plan is made (after the group is known).
  void set_cases_total(size_t total) { cases_total_ = total; }
  size_t cases_total() const { return cases_total_; }
  bool writer() const { return writer_; }
  void make_writer() { writer_ = true; }  // the writing rank was lost: this one takes over

  // The run's description as known at the start (completed by finish()).
  void set_meta(const nlohmann::json& meta);
  // Appends a row and, on the writing rank, rewrites the file (a checkpoint: rename, no fsync).
  void add_row(const nlohmann::json& row);
  size_t cases_done() const { return rows_.size(); }
  // The rows so far (a burn-in judges its windows from them).
  const std::vector<nlohmann::json>& rows() const { return rows_; }
  // Sets a top-level section beside the rows ("burn_in"), kept in every checkpoint and in the
  // final document, and, on the writing rank, rewrites the file with it.
  void set_section(const std::string& key, const nlohmann::json& value);

  // The final document: complete unless `incomplete_reason` is set; durable (fsync'ed).
  // `meta` replaces the start meta (the end-of-run fields added).
  // `findings`: top-level keys beside the summary (matrices, rounds_agreement, suspect_pairs).
  void finish(const nlohmann::json& meta, const nlohmann::json& summary, const nlohmann::json& comparison,
              const std::string& incomplete_reason, const nlohmann::json& findings = nlohmann::json());
  // From any thread, when the run cannot go on: the rows so far as a checkpoint with `reason`.
  // Once the complete file is written (by this rank, or found on disk from the writer that was
  // then lost), it is never turned back into a checkpoint: `note` is added to its "notes"
  // instead. Waits at most two seconds for the main thread's write in progress.
  enum class Written { kNothing, kCheckpoint, kNote };
  Written write_now(const std::string& reason, const std::string& note) noexcept;
  // Whether the file on disk already says that `rank` was lost (written by the rank that found
  // it gone): a rank resumed after being stopped must not overwrite that account with its own.
  bool says_rank_was_lost(int rank) const;

 private:
  std::string checkpoint_text(const std::string& reason) const;
  std::optional<nlohmann::json> finished_on_disk() const;
  void write(const std::string& text, bool durable) const;
  bool taken_over() const;

  std::string path_;
  size_t cases_total_;
  bool writer_;
  nlohmann::json meta_;
  mutable std::optional<std::pair<dev_t, ino_t>> last_written_;  // the file this process wrote last
  std::string meta_text_;                 // meta_ dumped once (checkpoints reuse it)
  std::optional<nlohmann::json> final_document_;  // set by finish(): later writes only add notes
  std::vector<nlohmann::json> rows_;
  std::vector<std::string> row_texts_;    // each row dumped once
  std::map<std::string, nlohmann::json> sections_;  // set_section's
  mutable std::timed_mutex mutex_;
};

// "the run ended before all cases finished (12 of 234 cases written)": what a checkpoint says
// about itself, true whoever reads it after the run died.
std::string checkpoint_reason(size_t done, size_t total);

}  // namespace p2pbench
