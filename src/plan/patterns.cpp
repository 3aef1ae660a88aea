#include "plan/patterns.hpp"

#include <algorithm>
#include <set>

#include "common/errors.hpp"
#include "plan/rounds.hpp"
#include "plan/seeded_sample.hpp"

namespace p2pbench {

namespace {

std::string indexed(const std::string& key, size_t i) { return key + "[" + std::to_string(i) + "]"; }

std::string group_text(int ranks) {
  return "the group has " + std::to_string(ranks) + " ranks (0.." + std::to_string(ranks - 1) + ")";
}

FlowSet set_of(Pattern p, std::vector<Flow> flows) {
  FlowSet s;
  s.pattern = p;
  s.flows = std::move(flows);
  return s;
}

// Each flow, then its reverse where the set does not have it yet.
std::vector<Flow> both_ways(const std::vector<Flow>& flows) {
  std::vector<Flow> out;
  auto add = [&](const Flow& f) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  };
  for (const Flow& f : flows) {
    add(f);
    add({f.dst_rank, f.src_rank});
  }
  return out;
}

// The bidir form of patterns whose sets are the same in both modes (one_to_all, all_to_all,
// ring, flows, ...): both ways at once; a set that already goes both ways is the uni case again
// (dropped where uni is measured); a set equal to an earlier one of the pattern runs once.
std::vector<FlowSet> in_mode(std::vector<FlowSet> sets, Mode mode, bool uni_measured) {
  if (mode == Mode::kUni) return sets;
  std::vector<FlowSet> out;
  std::set<std::vector<std::pair<int, int>>> seen;
  for (FlowSet& s : sets) {
    std::vector<Flow> bidir = both_ways(s.flows);
    if (bidir.size() == s.flows.size() && uni_measured) continue;
    std::vector<std::pair<int, int>> key;
    for (const Flow& f : bidir) key.emplace_back(f.src_rank, f.dst_rank);
    std::sort(key.begin(), key.end());
    if (!seen.insert(key).second) continue;
    s.flows = bidir;
    out.push_back(s);
  }
  return out;
}

std::vector<FlowSet> matrix_sequential(Mode mode, int ranks) {
  std::vector<FlowSet> out;
  for (const Flow& f : ordered_pairs(ranks)) {
    if (mode == Mode::kBidir && f.src_rank > f.dst_rank) continue;  // the pair's set has both ways
    FlowSet s = set_of(Pattern::kMatrix, mode == Mode::kBidir ? both_ways({f}) : std::vector<Flow>{f});
    s.schedule = Schedule::kSequential;
    out.push_back(s);
  }
  return out;
}

// The pairs the rounds' alone check samples from: on two GPUs of one node where there are any
// (a pair on one GPU is no P2P figure; a pair across nodes has no IPC path), else every pair.
std::vector<Flow> alone_check_candidates(Mode mode, const GroupLayout& layout) {
  std::vector<Flow> all, preferred;
  for (const Flow& f : ordered_pairs(layout.size())) {
    if (mode == Mode::kBidir && f.src_rank > f.dst_rank) continue;
    all.push_back(f);
    if (!layout.same_device(f.src_rank, f.dst_rank) && layout.same_node(f.src_rank, f.dst_rank)) preferred.push_back(f);
  }
  return preferred.empty() ? all : preferred;
}

std::vector<FlowSet> matrix_in_rounds(const PatternSettings& p, Mode mode, const GroupLayout& layout) {
  std::vector<FlowSet> out;
  for (std::vector<Flow>& round : matrix_rounds(layout, mode)) {
    FlowSet s = set_of(Pattern::kMatrix, std::move(round));
    s.schedule = Schedule::kRounds;
    s.round = int(out.size());
    out.push_back(s);
  }
  const std::vector<Flow> candidates = alone_check_candidates(mode, layout);
  for (size_t i : seeded_sample(candidates.size(), size_t(p.check_alone_pairs), p.matrix_seed)) {
    const Flow& f = candidates[i];
    FlowSet s = set_of(Pattern::kMatrix, mode == Mode::kBidir ? both_ways({f}) : std::vector<Flow>{f});
    s.schedule = Schedule::kAloneCheck;
    out.push_back(s);
  }
  return out;
}

// Each rank's peers: sampled.peers of the other ranks (all of them at most), drawn from its own
// stream of sampled.seed so that one rank's draw does not depend on another's.
std::vector<FlowSet> sampled(const PatternSettings& p, Mode mode, int ranks) {
  const size_t peers = std::min<size_t>(size_t(p.sampled_peers), size_t(ranks - 1));
  std::vector<Flow> chosen;
  for (int r = 0; r < ranks; ++r) {
    std::vector<int> others;
    for (int o = 0; o < ranks; ++o)
      if (o != r) others.push_back(o);
    for (size_t i : seeded_sample(others.size(), peers, derived_seed(p.sampled_seed, uint64_t(r))))
      chosen.push_back({r, others[i]});
  }
  std::vector<FlowSet> out;
  if (mode == Mode::kUni) {
    for (const Flow& f : chosen) out.push_back(set_of(Pattern::kSampled, {f}));
    return out;
  }
  std::set<std::pair<int, int>> pairs;  // bidir: each pair once, both ways
  for (const Flow& f : chosen) pairs.insert({std::min(f.src_rank, f.dst_rank), std::max(f.src_rank, f.dst_rank)});
  for (const auto& [a, b] : pairs) out.push_back(set_of(Pattern::kSampled, {{a, b}, {b, a}}));
  return out;
}

std::vector<FlowSet> rooted(Pattern pattern, const std::vector<uint64_t>& roots, const std::string& key, int ranks) {
  std::vector<FlowSet> out;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (roots[i] >= uint64_t(ranks))
      throw InputError(indexed(key, i), std::to_string(roots[i]), "no such rank: " + group_text(ranks));
    const int root = int(roots[i]);
    std::vector<Flow> flows;
    for (int r = 0; r < ranks; ++r)
      if (r != root) flows.push_back(pattern == Pattern::kOneToAll ? Flow{root, r} : Flow{r, root});
    out.push_back(set_of(pattern, flows));
  }
  return out;
}

std::vector<FlowSet> ring(const std::vector<uint64_t>& shifts, int ranks) {
  std::vector<FlowSet> out;
  for (size_t i = 0; i < shifts.size(); ++i) {
    const uint64_t k = shifts[i] % uint64_t(ranks);
    if (k == 0)
      throw InputError(indexed("ring.shifts", i), std::to_string(shifts[i]),
                       "a multiple of the group's size sends every rank to itself (" + group_text(ranks) + ")");
    std::vector<Flow> flows;
    for (int r = 0; r < ranks; ++r) flows.push_back({r, int((uint64_t(r) + k) % uint64_t(ranks))});
    out.push_back(set_of(Pattern::kRing, flows));
  }
  return out;
}

std::vector<FlowSet> bisection(Mode mode, int ranks) {
  const int half = ranks / 2;
  std::vector<Flow> forward, backward;
  for (int i = 0; i < half; ++i) {
    forward.push_back({i, i + half});
    backward.push_back({i + half, i});
  }
  if (mode == Mode::kBidir) return {set_of(Pattern::kBisection, both_ways(forward))};
  return {set_of(Pattern::kBisection, forward), set_of(Pattern::kBisection, backward)};
}

std::vector<FlowSet> explicit_flows(const std::vector<std::vector<Flow>>& lists, int ranks) {
  std::vector<FlowSet> out;
  for (size_t i = 0; i < lists.size(); ++i) {
    for (size_t j = 0; j < lists[i].size(); ++j) {
      const Flow& f = lists[i][j];
      const int missing = f.src_rank >= ranks ? f.src_rank : f.dst_rank >= ranks ? f.dst_rank : -1;
      if (missing >= 0)
        throw InputError(indexed(indexed("flows", i), j), "[" + std::to_string(f.src_rank) + ", " + std::to_string(f.dst_rank) + "]",
                         "rank " + std::to_string(missing) + " does not exist: " + group_text(ranks));
    }
    out.push_back(set_of(Pattern::kFlows, lists[i]));
  }
  return out;
}

std::vector<FlowSet> sets_of(Pattern pattern, const Config& config, Mode mode, const GroupLayout& layout) {
  const PatternSettings& p = config.plan;
  const int n = layout.size();
  const bool uni_measured = std::find(config.modes.begin(), config.modes.end(), Mode::kUni) != config.modes.end();
  switch (pattern) {
    case Pattern::kMatrix:
      return p.matrix_schedule == Schedule::kRounds ? matrix_in_rounds(p, mode, layout) : matrix_sequential(mode, n);
    case Pattern::kSampled: return sampled(p, mode, n);
    case Pattern::kOneToAll: return in_mode(rooted(pattern, p.one_to_all_roots, "one_to_all.roots", n), mode, uni_measured);
    case Pattern::kAllToOne: return in_mode(rooted(pattern, p.all_to_one_roots, "all_to_one.roots", n), mode, uni_measured);
    case Pattern::kAllToAll: return in_mode({set_of(pattern, ordered_pairs(n))}, mode, uni_measured);
    case Pattern::kRing: return in_mode(ring(p.ring_shifts, n), mode, uni_measured);
    case Pattern::kBisection: return bisection(mode, n);
    case Pattern::kFlows: return in_mode(explicit_flows(p.flows, n), mode, uni_measured);
  }
  return {};
}

}  // namespace

std::vector<Flow> ordered_pairs(int ranks) {
  std::vector<Flow> out;
  for (int a = 0; a < ranks; ++a)
    for (int b = a + 1; b < ranks; ++b) {
      out.push_back({a, b});
      out.push_back({b, a});
    }
  return out;
}

std::vector<std::vector<FlowSet>> pattern_flow_sets(const Config& config, Mode mode, const GroupLayout& layout) {
  if (layout.size() < 2)
    throw InputError("ranks", std::to_string(layout.size()), "a plan needs at least 2 ranks");
  std::vector<std::vector<FlowSet>> out;
  for (Pattern p : config.plan.patterns) out.push_back(sets_of(p, config, mode, layout));
  return out;
}

}  // namespace p2pbench
