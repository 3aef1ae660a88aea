// The results' meta: who ran what, where and how. Built on every rank from the descriptions
// all ranks exchanged at set-up (so any rank can write the file if the writer is lost), and
// completed at the end with what only the end knows (clock drift, link health after).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "config/config.hpp"
#include "plan/group_layout.hpp"

namespace p2pbench {

struct RunFacts {
  std::vector<std::string> command_line;
  const Config* config = nullptr;
  std::vector<nlohmann::json> ranks;  // every rank's description, by rank (rank_description())
  nlohmann::json p2p;
  nlohmann::json peer_access;
  nlohmann::json peer_mapping;  // PeerBuffers::mapping_meta(): the allocator and its timings (null: none)
  bool same_device = false;
  bool sanitizer_mode = false;
  const GroupLayout* layout = nullptr;  // rank -> GPU, node
  int node_override = 0;                // --ranks-per-node (0: nodes are hosts)
  nlohmann::json nvlink_domains;        // nvlink_domains_meta() (null: not known, e.g. a dry run)
  nlohmann::json pairs;                 // every ordered pair (LinkHealth::pairs)
};

// This rank's description: host, pid, device, CPU binding, GPU, clock offset at start.
nlohmann::json rank_description(int rank, const std::string& host, int device, const nlohmann::json& cpu_binding,
                                const nlohmann::json& gpu, const nlohmann::json& clock_start);

// Every field the schema requires, from what is known at the start.
nlohmann::json start_meta(const RunFacts& facts);

// Adds the timer calibration (with the end offsets, when every rank measured them: `clock_end`
// by rank, each null if not measured, {"failed": why} if the calibration threw: a note in
// timer_calibration.notes) and the sweep's duration.
void add_timer_calibration(nlohmann::json& meta, const std::vector<nlohmann::json>& ranks,
                           const std::vector<nlohmann::json>& clock_end, double sweep_seconds);

}  // namespace p2pbench
