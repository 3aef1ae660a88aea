#include "plan/load_length.hpp"

#include "plan/estimate.hpp"

namespace p2pbench {

double load_seconds(const Config& config, const CaseSpec& c) {
  const double samples = double(config.samples + 1);  // and the warm-up sample
  return 2 * samples * fixed_sample_seconds(config, c, CaseCostModel::upper_bound()) + 0.5;
}

}  // namespace p2pbench
