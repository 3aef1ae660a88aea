// The console header, printed from the committed H200 run's meta and from partial metas.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "committed_run.hpp"
#include "driver/run_header.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

std::string header_of(const json& meta) {
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buf, &size);
  print_run_header(out, meta);
  std::fclose(out);
  std::string text(buf, size);
  std::free(buf);
  return text;
}

TEST(RunHeader, IdentifiesTheCommittedH200Run) {
  json meta = committed_meta();
  meta["health_before"]["gpus"][0]["persistence_mode"] = true;  // not in that file's snapshot yet
  const std::string text = header_of(meta);
  for (const char* expected :
       {"host vm", "label h200-nv18", "verify on", "10 samples per case of >= 1.0 ms", "NVIDIA driver 580.159.04",
        "CUDA driver API 13.0", "CUDA runtime 13.0",
        "GPU rank 0: index 0, NVIDIA H200, bus 0000:00:06.0, GPU-2592755b-9f24-f5f7-a815-34d27fe0aa35, persistence on",
        "GPU rank 1: index 1, NVIDIA H200, bus 0000:00:07.0, GPU-8616ec97-e106-6012-40ea-fed5b03fc595, persistence unknown",
        "clocks SM 1980/1980 MHz, memory 3201/3201 MHz (current/max)",
        "link rank 0 <-> rank 1: NV18 (NVLink 4.0, 18 links x 26.562 GB/s, via NVSwitch), peak 478.1 GB/s per direction "
        "(1 GB = 1e9 B; nvml_nvlink_speed_per_link)",
        "rank 0 (pid 1771, vm): cpus 0-31, NUMA node -1, gpu-local", "rank 1 (pid 1772, vm)"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << text;
  }
  EXPECT_EQ(text.find("NCCL"), text.find("NCCL unknown"));  // that file predates meta.nccl_version
}

TEST(RunHeader, StartOfRunMetaWithoutRanksOrNvml) {
  json meta = committed_meta();
  meta.erase("ranks");
  meta.erase("health_before");
  meta["topology"] = {{"available", false}, {"reason", "NVML unavailable: cannot load libnvidia-ml.so.1"}};
  meta["nccl_version"] = nullptr;
  const std::string text = header_of(meta);
  EXPECT_NE(text.find("CPU binding: not known yet"), std::string::npos) << text;
  EXPECT_NE(text.find("link rank 0 <-> rank 1: unknown (NVML unavailable: cannot load"), std::string::npos) << text;
  EXPECT_NE(text.find("NCCL not in this build"), std::string::npos) << text;
  EXPECT_NE(text.find("clocks max SM 1980.0 MHz"), std::string::npos) << text;
  EXPECT_NE(text.find("NVIDIA driver 580.159.04"), std::string::npos) << text;  // from meta.gpus
}

TEST(RunHeader, SaysWhenTheBinaryWasBuiltFromAChangedTree) {
  json meta = committed_meta();
  meta["tool"]["git_sha"] = "fa1d864fae80";
  EXPECT_NE(header_of(meta).find("p2pbench 0.1.0 (git fa1d864fae80), "), std::string::npos)  // written before it
      << header_of(meta);
  meta["provenance"] = {{"commit", "fa1d864fae80aaaa"}, {"dirty", true}, {"diff_sha256", std::string(64, 'a')}};
  EXPECT_NE(header_of(meta).find("p2pbench 0.1.0 (git fa1d864fae80, dirty), "), std::string::npos) << header_of(meta);
  meta["provenance"]["dirty"] = false;
  EXPECT_NE(header_of(meta).find("(git fa1d864fae80), "), std::string::npos) << header_of(meta);
}

TEST(RunHeader, OneRankHasNoLink) {
  json meta = committed_meta();
  meta["gpus"] = json::array({meta["gpus"][0]});
  meta["topology"] = {{"available", false}, {"reason", "one rank: no GPU pair"}};
  const std::string text = header_of(meta);
  EXPECT_NE(text.find("link: none (one rank: its own GPU only)"), std::string::npos) << text;
  EXPECT_EQ(text.find("rank 1"), text.find("rank 1 (pid"));  // only the committed run's CPU binding names it
}

TEST(RunHeader, PcieLinkAndEmptyMetaDoNotThrow) {
  json meta = {{"topology", {{"available", true}, {"link_type", "pcie"}, {"topo_label", "PXB"},
                             {"pcie", {{"max_gen", 4}, {"max_width", 16}, {"path", "PXB"}}},
                             {"peak_gbps_per_direction", 31.5}, {"peak_source", "pcie_gen_table"}}}};
  EXPECT_NE(header_of(meta).find("PXB (PCIe Gen4 x16, path PXB), peak 31.5 GB/s per direction"), std::string::npos)
      << header_of(meta);
  EXPECT_NE(header_of(json::object()).find("GPUs: unknown"), std::string::npos);
}

TEST(RunHeader, SaysHowThePeersBuffersWereMapped) {
  json meta = committed_meta();
  EXPECT_EQ(header_of(meta).find("peer memory:"), std::string::npos);  // a file from before the allocators
  meta["peer_mapping"] = {{"allocator", "vmm"}, {"mapped", true}, {"map_ms", 38.24}, {"granularity_bytes", 2097152},
                          {"own_buffers", "cuMemCreate"}};
  EXPECT_NE(header_of(meta).find("peer memory: allocator vmm, buffers from cuMemCreate (granularity 2097152 B), peers "
                                 "mapped in 38.2 ms (max over ranks)"),
            std::string::npos)
      << header_of(meta);
  meta["peer_mapping"] = {{"allocator", "fabric"}, {"mapped", false}, {"map_ms", nullptr}, {"own_buffers", "cudaMalloc"},
                          {"reason", "fabric handles: cuMemCreate: CUDA_ERROR_NOT_PERMITTED: no IMEX channel (...)"}};
  EXPECT_NE(header_of(meta).find("peer memory: allocator fabric, buffers from cudaMalloc, no peer mapping: fabric "
                                 "handles: cuMemCreate: CUDA_ERROR_NOT_PERMITTED"),
            std::string::npos)
      << header_of(meta);
}

}  // namespace
}  // namespace p2pbench
