// A finished case as it was measured: the plan's spec and the outcome. The end-of-run analyses
// read these; the case's row in the results file is rendered from one once (result_row) and
// never read back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "measure/case_outcome.hpp"
#include "plan/case_spec.hpp"
#include "plan/group_layout.hpp"
#include "vocab/collectives.hpp"

namespace p2pbench {

struct CaseResult {
  CaseSpec spec;
  CaseOutcome outcome;
};

// The samples of the figure the case's row leads with: a latency method's one-way times
// (latency_us), every other method's GB/s (bandwidth_gbps; an interference case's beside the
// workload). Null where the case did not measure it (failed, skipped, no samples).
const std::vector<double>* figure_samples(const CaseResult& r);

// A figure a method's rows carry beside their GB/s in a unit of their own (gemm: TFLOP/s): the
// median of one of its row fields of statistics, as the row writes it.
struct OwnFigure {
  std::string name;  // the row field's ("tflops")
  std::string unit;  // "TFLOP/s"
  double median = 0;
};
// The case's own figures, in the order its method declares them; empty where the method has
// none or the case did not measure.
std::vector<OwnFigure> own_figures(const CaseResult& r);

// The median of the aggregate's GB/s: the row's bandwidth_gbps.median. None where the case did
// not measure, or measures no bandwidth of its own (latency, interference).
std::optional<double> median_gbps(const CaseResult& r);

// Whether the figure belongs to one pair measured by itself: a matrix case outside the rounds
// (one pair at a time, or an alone check) or a sampled pair; a round's or a pattern's figure
// adds several pairs.
bool is_single_pair(const CaseSpec& c);

// A collective case's figures as nccl-tests gives them: per sample, the operation's size over
// its time (time_us: the union of every rank's window, per operation), and that scaled by the
// bus factor (vocab/collectives.hpp). Empty figures where the case did not measure.
struct CollectiveFigures {
  Collective op = Collective::kNone;
  CollectiveElement element = CollectiveElement::kF32;  // the method's: the size counts these
  int ranks = 0;
  std::optional<CollectiveSize> size;
  std::vector<double> algbw_gbps;
  std::vector<double> busbw_gbps;
};
CollectiveFigures collective_figures(const CaseSpec& c, const CaseOutcome& o);

// Whether the flow joins two ranks on one GPU: a copy inside the GPU, never a P2P figure (a
// host-link flow, src == dst, is not one).
bool is_same_device_flow(const Flow& f, const GroupLayout& layout);

// Whether any flow of the case joins two ranks on one GPU.
bool involves_same_device(const CaseSpec& c, const GroupLayout& layout);

}  // namespace p2pbench
