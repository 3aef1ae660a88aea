#include "results/pair_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <tuple>

#include "common/text_format.hpp"
#include "results/result_writer.hpp"
#include "stats/statistics.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;

const json& field(const json& j, const char* key) {
  static const json kNull;  // what an absent key reads as (never written)
  return j.is_object() && j.contains(key) ? j[key] : kNull;
}

std::string text_of(const json& j, const char* key, const std::string& fallback) {
  const json& v = field(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

bool flag(const json& j, const char* key) {
  const json& v = field(j, key);
  return v.is_boolean() && v.get<bool>();
}

// The kernel-shape and variant fields that tell two otherwise equal measurements apart, as the
// case's row names them (identity_fields): "blocks:8/threads:512/unroll:4".
constexpr const char* kVariantKeys[] = {"protocol", "atomic_type", "atomic_pattern", "ops_per_thread", "hot_addresses"};

std::string shape_of(const CaseSpec& c) {
  const json identity = identity_fields(c, CaseOutcome{});
  std::vector<const char*> keys;
  for (ShapeAxis a : kShapeAxes) keys.push_back(to_string(a));
  keys.insert(keys.end(), std::begin(kVariantKeys), std::end(kVariantKeys));
  std::string shape;
  for (const char* key : keys) {
    const json& v = field(identity, key);
    if (v.is_null()) continue;
    shape += (shape.empty() ? "" : "/") + std::string(key) + ":" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return shape;
}

MatrixCell cell_of(const CaseResult& r, int src, int dst, const std::vector<double>& gbps, const PairLinks& links) {
  MatrixCell cell;
  if (links.is_same_device(src, dst)) {
    cell.state = CellState::kSameDevice;
  } else if (r.outcome.status != CaseStatus::kOk) {
    cell.state = r.outcome.status == CaseStatus::kSkipped ? CellState::kSkipped : CellState::kFailed;
    cell.reason = r.outcome.error;
  } else if (!gbps.empty()) {
    cell.state = CellState::kMeasured;
    cell.median_gbps = summarize(gbps).median;  // the flow's median, as its row writes it
  }
  return cell;
}

void grow(PairMatrix& m, int ranks) {
  if (ranks <= m.ranks) return;
  m.ranks = ranks;
  m.cells.resize(size_t(ranks));
  for (auto& row : m.cells) row.resize(size_t(ranks));
}

const MatrixCell* measured_cell(const PairMatrix* m, int src, int dst) {
  if (!m || src >= m->ranks || dst >= m->ranks) return nullptr;
  const MatrixCell& c = m->at(src, dst);
  return c.state == CellState::kMeasured ? &c : nullptr;
}

const PairMatrix* find_matrix(const std::vector<PairMatrix>& matrices, const MatrixKey& like, const char* schedule) {
  for (const PairMatrix& m : matrices)
    if (m.key.schedule == schedule && m.key.same_measurement(like)) return &m;
  return nullptr;
}

std::string class_of_entry(const json& pair) {
  const std::string type = text_of(pair, "link_type", "");
  const std::string label = text_of(pair, "topo_label", "");
  if (type.empty() && label.empty()) return field(pair, "same_node") == false ? "across nodes" : "unknown";
  return type + (type.empty() || label.empty() ? "" : " ") + label;
}

int rank_count(const json& v) {
  if (v.is_number_integer()) return v.get<int>();
  if (v.is_array()) return int(v.size());
  return 0;
}

}  // namespace

bool is_matrix_case(const CaseSpec& c) {
  if (c.pattern != Pattern::kMatrix && c.pattern != Pattern::kSampled) return false;
  const MethodKind kind = method_info(c.method).kind;
  return kind != MethodKind::kLatency && kind != MethodKind::kInterference && !runs_on_own_gpu(c.method);
}

std::string MatrixKey::title() const {
  return method + " " + direction + " " + mode + ", " + format_size(bytes) + (shape.empty() ? "" : " (" + shape + ")") +
         (schedule.empty() ? "" : ", " + schedule);
}

bool MatrixKey::same_measurement(const MatrixKey& o) const {
  return std::tie(method, direction, mode, bytes, shape) == std::tie(o.method, o.direction, o.mode, o.bytes, o.shape);
}

bool MatrixKey::operator<(const MatrixKey& o) const {
  return std::tie(method, direction, mode, bytes, shape, schedule) <
         std::tie(o.method, o.direction, o.mode, o.bytes, o.shape, o.schedule);
}

bool MatrixKey::operator==(const MatrixKey& o) const { return same_measurement(o) && schedule == o.schedule; }

MatrixKey matrix_key_of(const CaseSpec& c) {
  MatrixKey key;
  key.method = to_string(c.method);
  key.direction = to_string(c.direction);
  key.mode = to_string(c.mode);
  key.bytes = c.bytes;
  key.shape = shape_of(c);
  key.schedule = c.pattern == Pattern::kSampled ? "sampled" : to_string(c.schedule.value_or(Schedule::kSequential));
  return key;
}

const char* to_string(CellState s) {
  switch (s) {
    case CellState::kMissing: return "missing";
    case CellState::kMeasured: return "measured";
    case CellState::kSameDevice: return "same_device";
    case CellState::kSkipped: return "skipped";
    case CellState::kFailed: return "failed";
  }
  return "missing";
}

std::string PairLinks::class_of(int src, int dst) const {
  const auto it = link_class.find({src, dst});
  return it == link_class.end() ? "unknown" : it->second;
}

PairLinks pair_links_from_meta(const json& meta, int ranks) {
  PairLinks links;
  links.ranks = std::max({ranks, rank_count(field(field(meta, "group"), "ranks")), rank_count(field(meta, "ranks"))});
  const json& pairs = field(meta, "pairs");
  if (pairs.is_array()) {
    for (const json& p : pairs) {
      const int src = p.at("src_rank").get<int>(), dst = p.at("dst_rank").get<int>();
      links.ranks = std::max(links.ranks, std::max(src, dst) + 1);
      links.link_class[{src, dst}] = class_of_entry(p);
      if (flag(p, "same_device")) links.same_device.insert({src, dst});
    }
    return links;
  }
  // A v1 meta: one topology, for ranks 0 and 1.
  const json& topology = field(meta, "topology");
  if (topology.is_object() && field(topology, "available") != false)
    links.link_class[{0, 1}] = links.link_class[{1, 0}] = class_of_entry(topology);
  if (flag(meta, "same_device")) links.same_device = {{0, 1}, {1, 0}};
  return links;
}

size_t PairMatrix::count(CellState s) const {
  size_t n = 0;
  for (const auto& row : cells) n += size_t(std::count_if(row.begin(), row.end(), [s](const MatrixCell& c) { return c.state == s; }));
  return n;
}

std::vector<PairMatrix> assemble_matrices(const std::vector<CaseResult>& cases, const PairLinks& links) {
  static const std::vector<double> kNoFigures;
  std::vector<PairMatrix> matrices;
  std::map<MatrixKey, size_t> index;
  for (const CaseResult& r : cases) {
    if (!is_matrix_case(r.spec)) continue;
    const MatrixKey key = matrix_key_of(r.spec);
    if (!index.count(key)) {
      index[key] = matrices.size();
      matrices.push_back({key, 0, {}});
      grow(matrices.back(), links.ranks);
    }
    PairMatrix& m = matrices[index[key]];
    for (size_t i = 0; i < r.spec.flows.size(); ++i) {
      const Flow& f = r.spec.flows[i];
      if (f.src_rank < 0 || f.dst_rank < 0 || f.src_rank == f.dst_rank) continue;
      grow(m, std::max(f.src_rank, f.dst_rank) + 1);
      const std::vector<double>& gbps = i < r.outcome.flows.size() ? r.outcome.flows[i].gbps : kNoFigures;
      MatrixCell& cell = m.cells[size_t(f.src_rank)][size_t(f.dst_rank)];
      if (cell.state != CellState::kMeasured) cell = cell_of(r, f.src_rank, f.dst_rank, gbps, links);  // the first figure stays
    }
  }
  return matrices;
}

double RoundsAgreement::max_abs_difference_pct() const {
  double worst = 0;
  for (const PairAgreement& p : pairs) worst = std::max(worst, std::fabs(p.difference_pct));
  return worst;
}

std::vector<RoundsAgreement> rounds_agreement(const std::vector<PairMatrix>& matrices) {
  std::vector<RoundsAgreement> out;
  for (const PairMatrix& rounds : matrices) {
    if (rounds.key.schedule != "rounds") continue;
    const PairMatrix* alone = find_matrix(matrices, rounds.key, "alone_check");
    const PairMatrix* sequential = find_matrix(matrices, rounds.key, "sequential");
    RoundsAgreement agreement{rounds.key, {}};
    for (int src = 0; src < rounds.ranks; ++src)
      for (int dst = 0; dst < rounds.ranks; ++dst) {
        const MatrixCell* in_rounds = measured_cell(&rounds, src, dst);
        const MatrixCell* checked = measured_cell(alone, src, dst);
        const MatrixCell* reference = checked ? checked : measured_cell(sequential, src, dst);
        if (!in_rounds || !reference || reference->median_gbps <= 0) continue;
        agreement.pairs.push_back({src, dst, in_rounds->median_gbps, reference->median_gbps,
                                   100.0 * (in_rounds->median_gbps - reference->median_gbps) / reference->median_gbps,
                                   checked ? "alone_check" : "sequential"});
      }
    if (!agreement.pairs.empty()) out.push_back(agreement);
  }
  return out;
}

std::vector<SuspectPair> judge_pairs(const std::vector<PairMatrix>& matrices, const PairLinks& links) {
  std::vector<SuspectPair> out;
  for (const PairMatrix& m : matrices) {
    if (m.key.schedule == "alone_check" || m.key.bytes < kSuspectMinBytes) continue;
    std::map<std::string, std::vector<std::pair<int, int>>> by_class;
    for (int src = 0; src < m.ranks; ++src)
      for (int dst = 0; dst < m.ranks; ++dst)
        if (measured_cell(&m, src, dst)) by_class[links.class_of(src, dst)].push_back({src, dst});
    for (const auto& [link_class, cells] : by_class) {
      if (cells.size() < 2) continue;
      std::vector<double> figures;
      for (const auto& [src, dst] : cells) figures.push_back(m.at(src, dst).median_gbps);
      const double median = quantile(figures, 0.5);
      for (size_t i = 0; i < cells.size(); ++i) {
        std::vector<double> others = figures;
        others.erase(others.begin() + std::ptrdiff_t(i));
        const double reference = quantile(others, 0.5);
        if (reference <= 0) continue;
        const double shortfall = 100.0 * (reference - figures[i]) / reference;
        out.push_back({m.key, cells[i].first, cells[i].second, link_class, figures[i], median, reference, shortfall, cells.size()});
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const SuspectPair& a, const SuspectPair& b) { return a.shortfall_pct > b.shortfall_pct; });
  return out;
}

namespace {
std::vector<SuspectPair> suspects_among(const std::vector<SuspectPair>& judged, double margin_pct) {
  std::vector<SuspectPair> out;
  std::copy_if(judged.begin(), judged.end(), std::back_inserter(out),
               [margin_pct](const SuspectPair& p) { return p.shortfall_pct > margin_pct; });
  return out;
}
}  // namespace

std::vector<SuspectPair> suspect_pairs(const std::vector<PairMatrix>& matrices, const PairLinks& links, double margin_pct) {
  return suspects_among(judge_pairs(matrices, links), margin_pct);
}

MatrixReport build_matrix_report(const std::vector<CaseResult>& cases, PairLinks links, double margin_pct) {
  MatrixReport report;
  report.links = std::move(links);
  report.matrices = assemble_matrices(cases, report.links);
  for (const PairMatrix& m : report.matrices) report.links.ranks = std::max(report.links.ranks, m.ranks);
  report.agreement = rounds_agreement(report.matrices);
  report.judged = judge_pairs(report.matrices, report.links);
  report.suspects = suspects_among(report.judged, margin_pct);
  report.margin_pct = margin_pct;
  return report;
}

json to_json(const MatrixKey& key) {
  return {{"method", key.method}, {"direction", key.direction}, {"mode", key.mode},
          {"bytes", key.bytes},   {"shape", key.shape},         {"schedule", key.schedule}};
}

json to_json(const PairMatrix& m) {
  json j = to_json(m.key);
  json figures = json::array(), states = json::array(), notes = json::array();
  for (int src = 0; src < m.ranks; ++src) {
    json figure_row = json::array(), state_row = json::array();
    for (int dst = 0; dst < m.ranks; ++dst) {
      const MatrixCell& c = m.at(src, dst);
      figure_row.push_back(c.state == CellState::kMeasured ? json(c.median_gbps) : json());
      state_row.push_back(src == dst ? "diagonal" : to_string(c.state));
      if (!c.reason.empty())
        notes.push_back({{"src_rank", src}, {"dst_rank", dst}, {"state", to_string(c.state)}, {"reason", c.reason}});
    }
    figures.push_back(figure_row);
    states.push_back(state_row);
  }
  j["ranks"] = m.ranks;
  j["bandwidth_gbps"] = figures;  // [src][dst], the flow's median; null where there is no P2P figure
  j["state"] = states;
  j["notes"] = notes;
  return j;
}

json to_json(const RoundsAgreement& a) {
  json j = to_json(a.key);
  j["pairs"] = json::array();
  for (const PairAgreement& p : a.pairs)
    j["pairs"].push_back({{"src_rank", p.src_rank}, {"dst_rank", p.dst_rank}, {"rounds_gbps", p.rounds_gbps},
                          {"alone_gbps", p.alone_gbps}, {"difference_pct", p.difference_pct}, {"alone_from", p.alone_from}});
  j["max_abs_difference_pct"] = a.max_abs_difference_pct();
  return j;
}

json to_json(const SuspectPair& s) {
  json j = to_json(s.key);
  j.update({{"src_rank", s.src_rank}, {"dst_rank", s.dst_rank}, {"link_class", s.link_class},
            {"bandwidth_gbps", s.gbps}, {"class_median_gbps", s.class_median_gbps}, {"reference_gbps", s.reference_gbps},
            {"shortfall_pct", s.shortfall_pct}, {"comparable_cells", s.comparable_cells}});
  return j;
}

json to_json(const MatrixReport& report) {
  json matrices = json::array(), agreement = json::array(), suspects = json::array(), judged = json::array();
  for (const PairMatrix& m : report.matrices) matrices.push_back(to_json(m));
  for (const RoundsAgreement& a : report.agreement) agreement.push_back(to_json(a));
  for (const SuspectPair& s : report.suspects) suspects.push_back(to_json(s));
  for (const SuspectPair& s : report.judged) judged.push_back(to_json(s));
  return {{"matrices", matrices},
          {"rounds_agreement", agreement},
          {"suspect_pairs", {{"margin_pct", report.margin_pct}, {"pairs", suspects}, {"judged", judged}}}};
}

}  // namespace p2pbench
