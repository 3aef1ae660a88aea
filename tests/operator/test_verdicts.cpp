// Health and contention verdicts: on the committed H200 run and on synthetic metas.
#include <gtest/gtest.h>

#include <string>

#include "committed_run.hpp"
#include "judgement/verdicts.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

const json* find_item(const json& verdicts, const std::string& code, const std::string& uuid = "") {
  for (const json& i : verdicts["items"])
    if (i["code"] == code && (uuid.empty() || i["gpu_uuid"] == uuid)) return &i;
  return nullptr;
}

constexpr const char* kU0 = "GPU-aaaa";
constexpr const char* kU1 = "GPU-bbbb";

json zero_delta(const char* uuid, const char* bus) {
  return {{"uuid", uuid},
          {"pci_bus_id", bus},
          {"nvlink_errors", {{"replay", 0}, {"recovery", 0}, {"crc_flit", 0}, {"crc_data", 0}, {"ecc_data", 0}}},
          {"nvlink_errors_by_link", json::array()},
          {"links_down", json::array()},
          {"ecc_volatile", {{"corrected", 0}, {"uncorrected", 0}}},
          {"violation_ns", {{"power", 0}, {"thermal", 0}, {"low_utilization", 0}}},
          {"errors_increased", false}};
}

json snapshot_gpu(const char* uuid, const char* bus, json pids) {
  json procs = json::array();
  for (const json& p : pids) procs.push_back({{"pid", p}, {"used_memory_bytes", 1u << 30}, {"is_self", false}});
  return {{"uuid", uuid}, {"pci_bus_id", bus}, {"processes", procs},
          {"clock_event_reasons", {{"raw", 1}, {"names", {"gpu_idle"}}}}};
}

// Two ranks (pids 100, 101) on two GPUs, 10 s between the snapshots, nothing wrong.
json synthetic_meta(json gpu0_pids = {100}, json gpu1_pids = {101}) {
  json meta;
  meta["gpus"] = {{{"rank", 0}, {"device_index", 0}, {"uuid", kU0}, {"pci_bus_id", "0000:00:06.0"}},
                  {{"rank", 1}, {"device_index", 1}, {"uuid", kU1}, {"pci_bus_id", "0000:00:07.0"}}};
  meta["ranks"] = {{{"rank", 0}, {"pid", 100}}, {{"rank", 1}, {"pid", 101}}};
  for (const char* when : {"health_before", "health_after"})
    meta[when] = {{"available", true},
                  {"gpus", {snapshot_gpu(kU0, "00000000:00:06.0", gpu0_pids), snapshot_gpu(kU1, "00000000:00:07.0", gpu1_pids)}}};
  meta["health_delta"] = {{"available", true},
                          {"seconds", 10.0},
                          {"gpus", {zero_delta(kU0, "00000000:00:06.0"), zero_delta(kU1, "00000000:00:07.0")}}};
  return meta;
}

TEST(Verdicts, HealthyRunIsOkWithNoItems) {
  const json v = compute_verdicts(synthetic_meta());
  EXPECT_EQ(v["status"], "ok");
  EXPECT_EQ(v["contention"], false);
  EXPECT_EQ(v["throttled"], false);
  EXPECT_EQ(v["link_errors"], false);
  EXPECT_TRUE(v["items"].empty()) << v.dump(2);
}

// A committed default.json (the run of 2026-11-22, kept as a fixture in data/): GPU0 +759 CRC-data and +1770 ECC-data over the 3.95 s sweep
// (192 CRC-data errors/s), GPU1 +1028 CRC-data (260/s): both past DCGM's 100/s, and ECC-data
// rose, which DCGM 4.6 fails outright. No other process; rank 1's pid was marked is_self false
// by rank 0's snapshot, and must not read as contention.
TEST(Verdicts, CommittedH200RunWarnsOfNvLinkErrorsOnly) {
  const json meta = committed_meta();
  const json v = compute_verdicts(meta);
  EXPECT_EQ(v["status"], "warn");
  EXPECT_EQ(v["link_errors"], true);
  EXPECT_EQ(v["contention"], false) << v.dump(2);
  EXPECT_EQ(v["throttled"], false);
  const json* g0 = find_item(v, "nvlink_errors", "GPU-2592755b-9f24-f5f7-a815-34d27fe0aa35");
  ASSERT_NE(g0, nullptr) << v.dump(2);
  EXPECT_EQ((*g0)["severity"], "warn");
  EXPECT_EQ((*g0)["rank"], 0);
  EXPECT_EQ((*g0)["evidence"]["crc_data"], 759);
  EXPECT_EQ((*g0)["evidence"]["ecc_data"], 1770);
  EXPECT_NEAR((*g0)["evidence"]["crc_data_per_second"].get<double>(), 759 / 3.949053896, 1e-6);
  EXPECT_EQ((*g0)["evidence"]["worst_link"]["link"], 6);  // 334 ECC-data errors
  const std::string m = (*g0)["message"];
  EXPECT_EQ(m.rfind("GPU0 (00000000:00:06.0) links 0-17: +759 CRC-data, +1770 ECC-data in 3.9 s (CRC 192/s >= DCGM limit "
                    "100/s; ECC-data should stay 0 (DCGM 4.6); worst link 6: +0 CRC-data, +334 ECC-data)",
                    0),
            0u)
      << m;
  const json* g1 = find_item(v, "nvlink_errors", "GPU-8616ec97-e106-6012-40ea-fed5b03fc595");
  ASSERT_NE(g1, nullptr);
  EXPECT_EQ((*g1)["rank"], 1);
  EXPECT_EQ((*g1)["evidence"]["crc_data"], 1028);
  EXPECT_EQ(find_item(v, "nvlink_replay_recovery"), nullptr);
  EXPECT_EQ(find_item(v, "contention"), nullptr);
  EXPECT_EQ(v["items"].size(), 2u) << v.dump(2);
}

TEST(Verdicts, AddVerdictsMarksEveryRanksProcessesAsOwn) {
  json meta = committed_meta();
  ASSERT_EQ(meta["health_after"]["gpus"][1]["processes"][0]["is_self"], false);  // rank 0's view
  add_verdicts(meta);
  EXPECT_EQ(meta["health_after"]["gpus"][1]["processes"][0]["is_self"], true);
  EXPECT_EQ(meta["health_after"]["gpus"][1]["processes"][0]["rank"], 1);
  EXPECT_EQ(meta["verdicts"]["status"], "warn");
}

TEST(Verdicts, ForeignPidIsContention) {
  const json v = compute_verdicts(synthetic_meta({100, 4242}, {101}));
  EXPECT_EQ(v["status"], "warn");
  EXPECT_EQ(v["contention"], true);
  const json* c = find_item(v, "contention", kU0);
  ASSERT_NE(c, nullptr) << v.dump(2);
  EXPECT_EQ((*c)["severity"], "warn");
  EXPECT_EQ((*c)["rank"], 0);
  EXPECT_EQ((*c)["evidence"]["other_pids"], json({4242}));
  EXPECT_NE((*c)["message"].get<std::string>().find("pid 4242 (1024 MiB) at before after"), std::string::npos);
  EXPECT_EQ(find_item(v, "contention", kU1), nullptr);
}

TEST(Verdicts, OwnPidsOfBothRanksOnBothGpusAreNotContention) {
  const json v = compute_verdicts(synthetic_meta({100, 101}, {101, 100}));
  EXPECT_EQ(v["contention"], false) << v.dump(2);
  EXPECT_TRUE(v["items"].empty());
}

TEST(Verdicts, PidsFromAnotherNamespaceAreUnknownNotContention) {
  // No listed pid is a rank's: one process per GPU, as many as ranks use it.
  const json v = compute_verdicts(synthetic_meta({5000}, {5001}));
  EXPECT_EQ(v["contention"], false) << v.dump(2);
  EXPECT_EQ(v["status"], "ok");
  const json* c = find_item(v, "contention", kU0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["severity"], "info");
  EXPECT_NE((*c)["message"].get<std::string>().find("pid namespace"), std::string::npos);
  // More processes than ranks on a GPU: the surplus is contention.
  const json busy = compute_verdicts(synthetic_meta({5000, 5002}, {5001}));
  EXPECT_EQ(busy["contention"], true);
  EXPECT_EQ((*find_item(busy, "contention", kU0))["evidence"]["other_processes_at_least"], 1);
}

TEST(Verdicts, ThrottleReasonsExceptIdleAndApplicationClocks) {
  json meta = synthetic_meta();
  meta["health_after"]["gpus"][1]["clock_event_reasons"]["names"] = {"gpu_idle", "applications_clocks_setting"};
  EXPECT_EQ(compute_verdicts(meta)["throttled"], false);
  meta["health_after"]["gpus"][1]["clock_event_reasons"]["names"] = {"gpu_idle", "sw_power_cap"};
  const json v = compute_verdicts(meta);
  EXPECT_EQ(v["throttled"], true);
  EXPECT_EQ(v["status"], "warn");
  const json* t = find_item(v, "throttle", kU1);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ((*t)["evidence"]["clock_event_reasons"], json({"sw_power_cap"}));
  EXPECT_EQ((*t)["message"].get<std::string>().find("gpu_idle"), std::string::npos);
}

TEST(Verdicts, LimiterTimeDuringTheRunIsThrottlingButIdleTimeIsNot) {
  json meta = synthetic_meta();
  meta["health_delta"]["gpus"][0]["violation_ns"]["low_utilization"] = 9000000000ULL;
  EXPECT_EQ(compute_verdicts(meta)["throttled"], false);
  meta["health_delta"]["gpus"][0]["violation_ns"]["power"] = 3000000;
  const json v = compute_verdicts(meta);
  EXPECT_EQ(v["throttled"], true);
  EXPECT_NE((*find_item(v, "throttle", kU0))["message"].get<std::string>().find("power 3.0 ms of 10.0 s"),
            std::string::npos);
}

TEST(Verdicts, LinkDown) {
  json meta = synthetic_meta();
  meta["health_delta"]["gpus"][1]["links_down"] = {3, 4, 5, 9};
  const json v = compute_verdicts(meta);
  EXPECT_EQ(v["link_errors"], true);
  const json* d = find_item(v, "links_down", kU1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ((*d)["severity"], "warn");
  EXPECT_NE((*d)["message"].get<std::string>().find("4 NVLink link(s) went down during the run: 3-5, 9"), std::string::npos)
      << (*d)["message"];
}

TEST(Verdicts, UncorrectedEccIsAWarningCorrectedAnInfo) {
  json meta = synthetic_meta();
  meta["health_delta"]["gpus"][0]["ecc_volatile"]["corrected"] = 2;
  json v = compute_verdicts(meta);
  EXPECT_EQ(v["status"], "ok");
  EXPECT_EQ((*find_item(v, "ecc", kU0))["severity"], "info");
  meta["health_delta"]["gpus"][0]["ecc_volatile"]["uncorrected"] = 1;
  v = compute_verdicts(meta);
  EXPECT_EQ(v["status"], "warn");
  EXPECT_EQ((*find_item(v, "ecc", kU0))["severity"], "warn");
}

TEST(Verdicts, CrcBelowDcgmRateIsInfoReplayIsWarning) {
  json meta = synthetic_meta();
  meta["health_delta"]["gpus"][0]["nvlink_errors"]["crc_data"] = 999;  // 99.9/s over 10 s
  meta["health_delta"]["gpus"][0]["nvlink_errors_by_link"] = {{{"link", 2}, {"crc_data", 999}}};
  json v = compute_verdicts(meta);
  EXPECT_EQ(v["status"], "ok");
  EXPECT_EQ(v["link_errors"], true);
  EXPECT_EQ((*find_item(v, "nvlink_errors", kU0))["severity"], "info");
  meta["health_delta"]["gpus"][0]["nvlink_errors"]["crc_data"] = 1000;  // 100/s: DCGM's limit
  EXPECT_EQ(compute_verdicts(meta)["status"], "warn");
  meta["health_delta"]["gpus"][0]["nvlink_errors"]["crc_data"] = 0;
  meta["health_delta"]["gpus"][0]["nvlink_errors"]["replay"] = 1;
  meta["health_delta"]["gpus"][0]["nvlink_errors_by_link"] = {{{"link", 2}, {"replay", 1}}};
  v = compute_verdicts(meta);
  EXPECT_EQ(v["status"], "warn");
  EXPECT_EQ((*find_item(v, "nvlink_replay_recovery", kU0))["message"],
            "GPU0 (00000000:00:06.0) links 2: +1 replay, +0 recovery in 10.0 s (DCGM: should be 0)");
}

TEST(Verdicts, MissingHealthIsAnInfoItem) {
  json meta = synthetic_meta();
  meta["health_delta"] = {{"available", false}, {"reason", "before: NVML unavailable: cannot load libnvidia-ml.so.1"}};
  const json v = compute_verdicts(meta);
  EXPECT_EQ(v["status"], "ok");
  const json* u = find_item(v, "health_unavailable");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ((*u)["severity"], "info");
  EXPECT_NE((*u)["message"].get<std::string>().find("NVML unavailable"), std::string::npos);
}

TEST(Verdicts, ConsoleLines) {
  json meta = synthetic_meta({100, 4242}, {101});
  meta["health_delta"]["gpus"][0]["ecc_volatile"]["corrected"] = 2;
  const auto lines = verdict_lines(compute_verdicts(meta));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "INFO ecc: GPU0 (00000000:00:06.0): +2 corrected (single-bit) memory ECC errors during the run (corrected in "
            "hardware; not a DCGM health failure)");
  EXPECT_EQ(lines[1], "WARN contention: GPU0 (00000000:00:06.0): 1 other process(es) on the GPU during the run: pid 4242 "
                      "(1024 MiB) at before after");
}

}  // namespace
}  // namespace p2pbench
