#include "plan/rounds.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace p2pbench {

namespace {

bool all_gpus_distinct(const GroupLayout& layout) { return int(layout.gpus().size()) == layout.size(); }

RankPair ordered(int a, int b) { return a < b ? RankPair{a, b} : RankPair{b, a}; }

// The circle method: fix one seat, rotate the others; in round r the fixed seat meets seat r and
// seats r + k and r - k meet. An odd group gets an empty seat (its partner has the bye).
std::vector<std::vector<RankPair>> circle_rounds(int ranks) {
  const int seats = ranks % 2 == 0 ? ranks : ranks + 1;
  const int turning = seats - 1;
  std::vector<std::vector<RankPair>> rounds;
  for (int r = 0; r < turning; ++r) {
    std::vector<RankPair> round;
    auto meet = [&](int a, int b) {
      if (a < ranks && b < ranks) round.push_back(ordered(a, b));
    };
    meet(turning, r);
    for (int k = 1; k < seats / 2; ++k) meet((r + k) % turning, (r - k + turning) % turning);
    std::sort(round.begin(), round.end());
    rounds.push_back(round);
  }
  return rounds;
}

// The GPUs a pair occupies (one when both ranks share it), as indices into layout.gpus().
std::vector<int> gpus_of(const RankPair& p, const GroupLayout& layout, const std::map<std::string, int>& index) {
  const int a = index.at(layout.gpu_of_rank[size_t(p.first)]);
  const int b = index.at(layout.gpu_of_rank[size_t(p.second)]);
  return a == b ? std::vector<int>{a} : std::vector<int>{a, b};
}

// Greedy packing of `pairs`: each round takes, first-fit, the pairs whose GPUs have the most
// pairs left (the busiest GPU bounds the number of rounds), skipping any whose GPU the round
// already uses.
std::vector<std::vector<RankPair>> greedy_rounds(const GroupLayout& layout, std::vector<RankPair> left) {
  std::map<std::string, int> index;
  for (const std::string& g : layout.gpus()) index.emplace(g, int(index.size()));
  std::vector<std::vector<RankPair>> rounds;
  while (!left.empty()) {
    std::vector<int> load(index.size(), 0);
    for (const RankPair& p : left)
      for (int g : gpus_of(p, layout, index)) ++load[size_t(g)];
    auto weight = [&](const RankPair& p) {
      int w = 0;
      for (int g : gpus_of(p, layout, index)) w = std::max(w, load[size_t(g)]);
      return w;
    };
    std::vector<RankPair> order = left;
    std::stable_sort(order.begin(), order.end(), [&](const RankPair& x, const RankPair& y) { return weight(x) > weight(y); });
    std::set<int> busy;
    std::vector<RankPair> round;
    for (const RankPair& p : order) {
      const std::vector<int> gpus = gpus_of(p, layout, index);
      if (std::any_of(gpus.begin(), gpus.end(), [&](int g) { return busy.count(g) > 0; })) continue;
      busy.insert(gpus.begin(), gpus.end());
      round.push_back(p);
    }
    std::sort(round.begin(), round.end());
    for (const RankPair& p : round) left.erase(std::find(left.begin(), left.end(), p));
    rounds.push_back(round);
  }
  return rounds;
}

// The rounds of one node's ranks (global rank numbers).
std::vector<std::vector<RankPair>> node_rounds(const GroupLayout& layout, const std::vector<int>& ranks) {
  GroupLayout node;
  for (int r : ranks) {
    node.gpu_of_rank.push_back(layout.gpu_of_rank[size_t(r)]);
    node.node_of_rank.push_back(0);
  }
  std::vector<std::vector<RankPair>> rounds;
  if (all_gpus_distinct(node)) {
    rounds = circle_rounds(node.size());
  } else {
    std::vector<RankPair> pairs;
    for (int a = 0; a < node.size(); ++a)
      for (int b = a + 1; b < node.size(); ++b) pairs.push_back({a, b});
    rounds = greedy_rounds(node, pairs);
  }
  for (auto& round : rounds)
    for (RankPair& p : round) p = ordered(ranks[size_t(p.first)], ranks[size_t(p.second)]);
  return rounds;
}

}  // namespace

std::vector<std::vector<RankPair>> pair_rounds(const GroupLayout& layout) {
  if (layout.size() < 2) return {};
  // Pairs within a node first, every node's k-th round at once; then the pairs across nodes, so
  // that methods without a path across nodes (CUDA IPC) skip whole rounds, not most of them.
  // Nodes that share GPUs (the node override on one host) take turns instead: no GPU twice.
  std::vector<std::vector<RankPair>> rounds;
  std::set<std::string> seen;
  bool nodes_share_gpus = false;
  for (const std::vector<int>& ranks : layout.nodes()) {
    std::set<std::string> mine;
    for (int r : ranks) mine.insert(layout.gpu_of_rank[size_t(r)]);
    for (const std::string& g : mine) nodes_share_gpus = nodes_share_gpus || seen.count(g) > 0;
    seen.insert(mine.begin(), mine.end());
  }
  for (const std::vector<int>& ranks : layout.nodes()) {
    const auto mine = node_rounds(layout, ranks);
    const size_t first = nodes_share_gpus ? rounds.size() : 0;
    if (rounds.size() < first + mine.size()) rounds.resize(first + mine.size());
    for (size_t k = 0; k < mine.size(); ++k) rounds[first + k].insert(rounds[first + k].end(), mine[k].begin(), mine[k].end());
  }
  for (auto& round : rounds) std::sort(round.begin(), round.end());
  std::vector<RankPair> across;
  for (int a = 0; a < layout.size(); ++a)
    for (int b = a + 1; b < layout.size(); ++b)
      if (!layout.same_node(a, b)) across.push_back({a, b});
  for (auto& round : greedy_rounds(layout, across)) rounds.push_back(round);
  return rounds;
}

std::vector<std::vector<Flow>> matrix_rounds(const GroupLayout& layout, Mode mode) {
  std::vector<std::vector<Flow>> out;
  for (const std::vector<RankPair>& round : pair_rounds(layout)) {
    std::vector<Flow> forward, backward, both;
    for (const auto& [a, b] : round) {
      forward.push_back({a, b});
      backward.push_back({b, a});
      both.push_back({a, b});
      both.push_back({b, a});
    }
    if (mode == Mode::kBidir) {
      out.push_back(both);
    } else {
      out.push_back(forward);
      out.push_back(backward);
    }
  }
  return out;
}

}  // namespace p2pbench
