// What an interference case measured, per sample, before any formatting.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace p2pbench {

struct InterferenceSamples {
  std::string workload_unit;         // "TFLOP/s" or "GB/s" (1 GB = 1e9 bytes copied)
  std::string workload_description;  // shape, algorithm, blocks
  int workload_gpus = 1;             // GPUs that ran the workload (the figures are per GPU, their mean)
  std::vector<double> workload_alone;            // on the whole GPU
  std::vector<double> workload_partition_alone;  // alone in the workload's SM group (partitioned cases)
  std::vector<double> workload_together;         // beside the transfer
  std::vector<double> transfer_alone_gbps;       // alone (in its SM group, where partitioned)
  std::vector<double> transfer_together_gbps;    // beside the workload
  std::vector<double> overlap;                   // shortest window / longest window, per sample
  std::vector<double> workload_launches_together;
  // The green-context split (partitioned cases): SMs each group holds.
  std::optional<int> transfer_group_sms;
  std::optional<int> workload_group_sms;
};

}  // namespace p2pbench
