#include "gbench/session_reporter.hpp"

#include <utility>

namespace p2pbench::gbench {

// CreateDefaultDisplayReporter honours --benchmark_format (and color/tabular flags), so it must
// be called after benchmark::Initialize. Google Benchmark only uses it itself when it is given
// no display reporter, so this object is its one owner.
SessionReporter::SessionReporter(std::function<bool()> open)
    : open_(std::move(open)), display_(benchmark::CreateDefaultDisplayReporter()) {}

bool SessionReporter::ReportContext(const Context& context) {
  if (!open_()) return false;
  running_ = true;
  return display_->ReportContext(context);  // custom context added by open_ is printed here
}

void SessionReporter::ReportRuns(const std::vector<Run>& runs) { display_->ReportRuns(runs); }

void SessionReporter::Finalize() {
  if (running_) display_->Finalize();  // nothing to close when the run never started
}

}  // namespace p2pbench::gbench
