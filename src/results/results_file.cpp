#include "results/results_file.hpp"

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "common/errors.hpp"
#include "common/safe_file.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {

namespace {
using json = nlohmann::json;
// Text from the command line or the environment may hold any bytes: never let the dump throw.
std::string dump(const json& j, int indent = -1) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }
}  // namespace

std::string checkpoint_reason(size_t done, size_t total) {
  return "the run ended before all cases finished (" + std::to_string(done) + " of " + std::to_string(total) +
         " cases written)";
}

ResultsFile::ResultsFile(std::string path, size_t cases_total, bool writer)
    : path_(std::move(path)), cases_total_(cases_total), writer_(writer) {}

void ResultsFile::set_meta(const json& meta) {
  std::lock_guard<std::timed_mutex> lock(mutex_);
  meta_ = meta;
  meta_text_ = dump(meta);
}

void ResultsFile::add_row(const json& row) {
  std::lock_guard<std::timed_mutex> lock(mutex_);
  rows_.push_back(row);
  row_texts_.push_back(dump(row));
  if (writer_ && taken_over()) writer_ = false;  // another rank wrote its account: leave it
  if (writer_) write(checkpoint_text(checkpoint_reason(rows_.size(), cases_total_)), false);
}

void ResultsFile::set_section(const std::string& key, const json& value) {
  std::lock_guard<std::timed_mutex> lock(mutex_);
  sections_[key] = value;
  if (writer_ && taken_over()) writer_ = false;
  if (writer_) write(checkpoint_text(checkpoint_reason(rows_.size(), cases_total_)), false);
}

// Every write renames a new file into place, so the path names the file this process wrote
// last unless another rank has written since: one that found this rank stopped and declared it
// lost. A rank resumed afterwards (mpirun sends SIGCONT before it ends the job) must not replace
// that account with its own checkpoints.
bool ResultsFile::taken_over() const {
  if (!last_written_) return false;
  struct stat now {};
  if (stat(path_.c_str(), &now) != 0) return false;
  return now.st_ino != last_written_->second || now.st_dev != last_written_->first;
}

std::string ResultsFile::checkpoint_text(const std::string& reason) const {
  std::string text = "{\"schema_version\":" + std::to_string(kSchemaVersion) + ",\"incomplete\":true,\"incomplete_reason\":" +
                     dump(json(reason)) + ",\"progress\":{\"cases_done\":" + std::to_string(rows_.size()) +
                     ",\"cases_total\":" + std::to_string(cases_total_) + "},\"meta\":" + meta_text_ + ",\"results\":[";
  for (size_t i = 0; i < row_texts_.size(); ++i) text += (i ? "," : "") + row_texts_[i];
  text += "]";
  for (const auto& [key, value] : sections_) text += "," + dump(json(key)) + ":" + dump(value);
  return text + "}\n";
}

void ResultsFile::finish(const json& meta, const json& summary, const json& comparison, const std::string& incomplete_reason,
                         const json& findings) {
  std::lock_guard<std::timed_mutex> lock(mutex_);
  meta_ = meta;
  meta_text_ = dump(meta);
  json doc = result_document(meta, rows_, summary, !incomplete_reason.empty(), incomplete_reason, comparison);
  if (findings.is_object()) doc.update(findings);
  for (const auto& [key, value] : sections_) doc[key] = value;
  doc["progress"] = {{"cases_done", rows_.size()}, {"cases_total", cases_total_}};
  write(dump(doc, 2) + "\n", true);
  final_document_ = std::move(doc);
}

ResultsFile::Written ResultsFile::write_now(const std::string& reason, const std::string& note) noexcept {
  try {
    std::unique_lock<std::timed_mutex> lock(mutex_, std::chrono::seconds(2));
    if (!lock.owns_lock() || meta_text_.empty()) return Written::kNothing;
    // The finished file stays finished: what went wrong after it was written is a note in it.
    // The copy on disk is the newest (another rank may have added a note, or be the one that
    // wrote it before it was lost).
    if (auto on_disk = finished_on_disk()) final_document_ = std::move(on_disk);
    if (final_document_) {
      (*final_document_)["notes"].push_back(note);
      write(dump(*final_document_, 2) + "\n", true);
      return Written::kNote;
    }
    write(checkpoint_text(reason), true);
    return Written::kCheckpoint;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "p2pbench: error: could not write the results: %s\n", e.what());
    return Written::kNothing;
  }
}

// The complete document of this run, when the writer finished it before it was lost: complete,
// and holding exactly this run's rows (an earlier run's file is replaced by the first checkpoint).
std::optional<json> ResultsFile::finished_on_disk() const {
  std::ifstream in(path_);
  if (!in) return std::nullopt;
  json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("incomplete") || doc["incomplete"] != false ||
      !doc.contains("results") || !doc["results"].is_array() || doc["results"].size() != rows_.size() || rows_.empty())
    return std::nullopt;
  return doc;
}

bool ResultsFile::says_rank_was_lost(int rank) const {
  std::ifstream in(path_);
  if (!in) return false;
  const json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return false;
  const std::string reason = doc.value("incomplete_reason", std::string());
  return reason.rfind("rank " + std::to_string(rank) + " was lost", 0) == 0;
}

void ResultsFile::write(const std::string& text, bool durable) const {
  write_file_atomically(path_, text, durable);
  struct stat written {};
  if (stat(path_.c_str(), &written) == 0) last_written_ = std::make_pair(written.st_dev, written.st_ino);
}

}  // namespace p2pbench
