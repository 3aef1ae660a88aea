// Topology and health against fake NVML libraries (tests/topology/fake_nvml.cpp): no GPU needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "topology/fabric_info.hpp"
#include "topology/health.hpp"
#include "topology/nvml_library.hpp"
#include "topology/topology.hpp"
#include "topology/topology_report.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

constexpr const char* kH200 = P2PBENCH_FAKE_NVML_H200;  // paths set by CMake
constexpr const char* kPcie = P2PBENCH_FAKE_NVML_PCIE;

// The fake's recorded GPUs, named as CUDA names them.
const GpuIdentity kGpu0{"0000:00:06.0", "GPU-1d3c9a8e-5b2f-4c61-a7e0-93f4b2d8c615"};
const GpuIdentity kGpu1{"0000:00:07.0", "GPU-7e2a4f90-c31b-4d8e-b5a6-0f19e7c3d284"};
const GpuIdentity kL40s0{"0000:3b:00.0", ""};
const GpuIdentity kL40s1{"0000:5e:00.0", ""};

// Sets an environment variable (a fake NVML knob) for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

NvmlLibrary open_fake(const char* path) {
  auto opened = NvmlLibrary::open(path);
  if (const auto* reason = std::get_if<std::string>(&opened)) {
    throw std::runtime_error("cannot open the fake NVML: " + *reason);
  }
  return std::get<NvmlLibrary>(std::move(opened));
}

TEST(NvmlLibrary, MissingLibraryIsUnavailableWithReason) {
  auto opened = NvmlLibrary::open("/nonexistent/libnvidia-ml.so.1");
  const auto* reason = std::get_if<std::string>(&opened);
  ASSERT_NE(reason, nullptr);
  EXPECT_EQ(reason->rfind("NVML unavailable: ", 0), 0u) << *reason;
  EXPECT_NE(reason->find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << *reason;
}

TEST(NvmlLibrary, LibraryWithoutNvmlSymbolsIsUnavailable) {
  auto opened = NvmlLibrary::open("libm.so.6");
  const auto* reason = std::get_if<std::string>(&opened);
  ASSERT_NE(reason, nullptr);
  EXPECT_NE(reason->find("does not export nvmlInit_v2"), std::string::npos) << *reason;
}

TEST(NvmlLibrary, MovedLibraryStaysUsable) {
  NvmlLibrary first = open_fake(kH200);
  NvmlLibrary second = std::move(first);
  EXPECT_EQ(second.error_string(nvml::kErrorNotSupported), "Not Supported");
  EXPECT_THROW(second.check(nvml::kErrorNotFound, "doing X"), NvmlError);
  try {
    second.check(nvml::kErrorNotFound, "doing X");
  } catch (const NvmlError& e) {
    EXPECT_STREQ(e.what(), "doing X: Not Found");
    EXPECT_EQ(e.code(), nvml::kErrorNotFound);
  }
}

TEST(Topology, ParsesPciBusIdsInCudaAndNvmlForms) {
  const auto cuda = parse_pci_bus_id("0000:00:06.0");
  const auto nvml = parse_pci_bus_id("00000000:00:06.0");
  ASSERT_TRUE(cuda && nvml);
  EXPECT_EQ(*cuda, *nvml);
  EXPECT_EQ(format_pci_bus_id(*parse_pci_bus_id("0001:3b:1f.2")), "00000001:3B:1F.2");
  EXPECT_EQ(format_pci_bus_id(*parse_pci_bus_id("3b:00.0")), "00000000:3B:00.0");
  EXPECT_FALSE(parse_pci_bus_id("GPU-1234"));
  EXPECT_FALSE(parse_pci_bus_id("0000:00:06.0 trailing"));
  EXPECT_FALSE(parse_pci_bus_id("0000:00:20.0"));  // device > 31
}

TEST(Topology, DecodesNvLinkVersionEnum) {
  EXPECT_EQ(nvlink_version_name(5), "3.1");  // A100 reads 5
  EXPECT_EQ(nvlink_version_name(6), "4.0");  // H100/H200 read 6
  EXPECT_EQ(nvlink_version_name(7), "5.0");
  EXPECT_FALSE(nvlink_version_name(0));
  EXPECT_FALSE(nvlink_version_name(42));
  EXPECT_EQ(pcie_path_class(nvml::kTopologyInternal), "same board");
  EXPECT_EQ(pcie_path_class(nvml::kTopologySystem), "SYS");
}

TEST(Topology, H200PairOverNvSwitch) {
  const NvmlLibrary lib = open_fake(kH200);
  const json pair = describe_pair(lib, kGpu0, kGpu1);
  EXPECT_EQ(pair["link_type"], "nvlink");
  EXPECT_EQ(pair["topo_label"], "NV18");
  const json& nv = pair["nvlink"];
  EXPECT_EQ(nv["active_links"], 18);
  EXPECT_EQ(nv["via_nvswitch"], true);
  EXPECT_EQ(nv["active_links_per_gpu"], json({18, 18}));
  EXPECT_EQ(nv["version"], "4.0");
  EXPECT_EQ(nv["version_raw"], 6);
  EXPECT_DOUBLE_EQ(nv["per_link_gbps"].get<double>(), 26.562);
  ASSERT_TRUE(pair["peak_gbps_per_direction"].is_number());
  EXPECT_NEAR(pair["peak_gbps_per_direction"].get<double>(), 478.116, 1e-9);
  EXPECT_EQ(peak_gbps(pair), pair["peak_gbps_per_direction"].get<double>());
  EXPECT_EQ(pair["peak_source"], "nvml_nvlink_speed_common");
  // PCIe is reported too: max Gen5 x16, idle link trained down to Gen1.
  EXPECT_EQ(pair["pcie"]["path"], "NODE");
  EXPECT_EQ(pair["pcie"]["max_gen"], 5);
  EXPECT_EQ(pair["pcie"]["max_width"], 16);
  EXPECT_EQ(pair["pcie"]["gpus"][0]["current_gen"], 1);
  EXPECT_EQ(pair["gpus"][0]["name"], "NVIDIA H200");
  EXPECT_EQ(pair["gpus"][0]["pci_bus_id"], "00000000:00:06.0");
  EXPECT_EQ(pair["gpus"][1]["uuid"], kGpu1.uuid);
  EXPECT_EQ(pair["gpus"][0]["matched_by"], "pci_bus_id");
}

TEST(Topology, RemoteWithoutDeviceTypeIsASwitchWhenNotAGpu) {
  const ScopedEnv untyped("FAKE_NVML_NVLINK", "untyped");
  const NvmlLibrary lib = open_fake(kH200);
  const json pair = describe_pair(lib, kGpu0, kGpu1);
  EXPECT_EQ(pair["nvlink"]["active_links"], 18);
  EXPECT_EQ(pair["nvlink"]["via_nvswitch"], true);
}

TEST(Topology, DirectNvLinkCountsLinksToThePeer) {
  const ScopedEnv direct("FAKE_NVML_NVLINK", "direct");
  const NvmlLibrary lib = open_fake(kH200);
  const json pair = describe_pair(lib, kGpu0, kGpu1);
  EXPECT_EQ(pair["topo_label"], "NV18");
  EXPECT_EQ(pair["nvlink"]["via_nvswitch"], false);
}

TEST(Topology, PeakFallsBackToPerLinkFieldsThenVersionTable) {
  const NvmlLibrary lib = open_fake(kH200);
  {
    const ScopedEnv speed("FAKE_NVML_SPEED", "per_link");
    const json pair = describe_pair(lib, kGpu0, kGpu1);
    EXPECT_EQ(pair["peak_source"], "nvml_nvlink_speed_per_link");
    EXPECT_NEAR(*peak_gbps(pair), 478.116, 1e-9);
    EXPECT_TRUE(pair["nvlink"]["unavailable"].contains("nvml_nvlink_speed_common"));
  }
  {
    const ScopedEnv speed("FAKE_NVML_SPEED", "none");
    const json pair = describe_pair(lib, kGpu0, kGpu1);
    EXPECT_EQ(pair["peak_source"], "nvlink_version_table");
    EXPECT_NEAR(*peak_gbps(pair), 18 * 25.0, 1e-9);
  }
}

TEST(Topology, PciePair) {
  const NvmlLibrary lib = open_fake(kPcie);
  const json pair = describe_pair(lib, kL40s0, kL40s1);
  EXPECT_EQ(pair["link_type"], "pcie");
  EXPECT_EQ(pair["topo_label"], "PXB");
  EXPECT_TRUE(pair["nvlink"].is_null());
  EXPECT_NE(pair["unavailable"]["nvlink"].get<std::string>().find("Not Supported"),
            std::string::npos);
  EXPECT_EQ(pair["pcie"]["path"], "PXB");
  EXPECT_EQ(pair["pcie"]["path_raw"], 20);
  EXPECT_EQ(pair["pcie"]["max_gen"], 4);
  EXPECT_EQ(pair["pcie"]["max_width"], 16);
  EXPECT_EQ(pair["pcie"]["gpus"][0]["current_gen"], 1);
  EXPECT_EQ(pair["pcie"]["gpus"][1]["current_gen"], 4);
  EXPECT_EQ(pair["peak_source"], "pcie_gen_table");
  EXPECT_NEAR(*peak_gbps(pair), 1.969 * 16, 1e-9);
}

TEST(Topology, MapsByUuidWhenNoBusIdIsGiven) {
  const NvmlLibrary lib = open_fake(kH200);
  const ResolvedGpu by_bus = resolve_gpu(lib, {kGpu1.pci_bus_id, ""});
  const ResolvedGpu by_uuid = resolve_gpu(lib, {"", kGpu1.uuid});
  EXPECT_EQ(by_bus.device, by_uuid.device);
  EXPECT_EQ(by_bus.matched_by, "pci_bus_id");
  EXPECT_EQ(by_uuid.matched_by, "uuid");
  EXPECT_EQ(by_uuid.pci_bus_id, "00000000:00:07.0");
  const json pair = describe_pair(lib, {"", kGpu0.uuid}, {kGpu1.pci_bus_id, ""});
  EXPECT_EQ(pair["gpus"][0]["pci_bus_id"], "00000000:00:06.0");
  EXPECT_EQ(pair["topo_label"], "NV18");
}

TEST(Topology, UnknownGpuIsAClearError) {
  const NvmlLibrary lib = open_fake(kH200);
  try {
    describe_pair(lib, kGpu0, {"0000:99:00.0", ""});
    FAIL() << "expected NvmlError";
  } catch (const NvmlError& e) {
    EXPECT_EQ(e.code(), nvml::kErrorNotFound);
    EXPECT_NE(std::string(e.what()).find("PCI bus id 0000:99:00.0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Not Found"), std::string::npos) << e.what();
  }
  EXPECT_THROW(resolve_gpu(lib, {"", "GPU-00000000-0000-0000-0000-000000000000"}), NvmlError);
  EXPECT_THROW(resolve_gpu(lib, {"", ""}), InputError);
  EXPECT_THROW(resolve_gpu(lib, {"not-a-bus-id", ""}), InputError);
  // Bus id of one GPU with the UUID of the other: CUDA and NVML disagree.
  EXPECT_THROW(resolve_gpu(lib, {kGpu0.pci_bus_id, kGpu1.uuid}), RuntimeFailure);
}

TEST(Topology, SameGpuTwiceHasNoPeak) {
  const NvmlLibrary lib = open_fake(kH200);
  const json pair = describe_pair(lib, kGpu0, {"", kGpu0.uuid});
  EXPECT_EQ(pair["link_type"], "same_device");
  EXPECT_FALSE(peak_gbps(pair));
}

TEST(Topology, PeakOfADescriptionWithoutOne) {
  EXPECT_FALSE(peak_gbps(json::object()));
  EXPECT_FALSE(peak_gbps(json{{"peak_gbps_per_direction", nullptr}}));
  EXPECT_EQ(peak_gbps(json{{"peak_gbps_per_direction", 12.5}}), 12.5);
}

TEST(Health, SnapshotOfTheH200Node) {
  const NvmlLibrary lib = open_fake(kH200);
  const json snap = health_snapshot(lib, {kGpu0, kGpu1});
  EXPECT_EQ(snap["available"], true);
  EXPECT_EQ(snap["driver_version"], "550.127.08");
  ASSERT_EQ(snap["gpus"].size(), 2u);
  const json& g0 = snap["gpus"][0];
  const json& g1 = snap["gpus"][1];
  EXPECT_EQ(g0["uuid"], kGpu0.uuid);
  EXPECT_EQ(g0["nvlink"]["active_links"], 18);
  EXPECT_EQ(g0["nvlink"]["links"].size(), 18u);
  EXPECT_EQ(g1["nvlink"]["errors_total"]["replay"], 2);
  EXPECT_EQ(g1["nvlink"]["links"][3]["replay"], 2);
  EXPECT_EQ(g1["nvlink"]["errors_total"]["crc_flit"], 0);
  EXPECT_EQ(g0["ecc"]["mode_current"], true);
  EXPECT_EQ(g0["ecc"]["aggregate"]["corrected"], 4);
  EXPECT_EQ(g0["ecc"]["volatile"]["uncorrected"], 0);
  EXPECT_EQ(g0["mig"]["current"], false);
  EXPECT_EQ(g0["clocks_mhz"]["sm"], 345);
  EXPECT_EQ(g0["clocks_mhz"]["sm_max"], 1980);
  EXPECT_EQ(g0["clocks_mhz"]["mem_max"], 3201);
  EXPECT_EQ(g0["clock_event_reasons"]["raw"], 1);
  EXPECT_EQ(g0["clock_event_reasons"]["names"], json({"gpu_idle"}));
  EXPECT_EQ(g0["temperature_c"], 31);
  EXPECT_DOUBLE_EQ(g0["power_w"].get<double>(), 74.512);
  ASSERT_EQ(g0["processes"].size(), 1u);
  EXPECT_EQ(g0["processes"][0]["pid"], 4242);
  EXPECT_EQ(g0["processes"][0]["used_memory_bytes"], 536870912);
  EXPECT_TRUE(g1["processes"].empty());
  EXPECT_EQ(g0["persistence_mode"], true);
  EXPECT_EQ(g1["persistence_mode"], false);
  EXPECT_EQ(g1["violation_ns"]["power"], 7000000);
  EXPECT_EQ(g0["violation_ns"]["power"], 0);
  EXPECT_TRUE(g0["violation_ns"]["reliability"].is_null());
  EXPECT_EQ(g0["violation_ns"]["unavailable"]["reliability"],
            "nvmlDeviceGetViolationStatus(reliability): Not Supported");
  EXPECT_TRUE(snap["taken_at_unix_s"].is_number());
}

TEST(Health, NotSupportedQueryBecomesNullWithReason) {
  const NvmlLibrary lib = open_fake(kH200);
  const json g = health_snapshot(lib, {kGpu0})["gpus"][0];
  const json& totals = g["nvlink"]["errors_total"];
  EXPECT_TRUE(totals["ecc_data"].is_null());
  EXPECT_EQ(totals["unavailable"]["ecc_data"],
            "nvmlDeviceGetNvLinkErrorCounter(ecc_data): Not Supported");
  EXPECT_TRUE(g["nvlink"]["links"][0]["ecc_data"].is_null());
}

TEST(Health, PcieOnlyGpus) {
  const NvmlLibrary lib = open_fake(kPcie);
  const json snap = health_snapshot(lib, {kL40s0, kL40s1});
  const json& g = snap["gpus"][0];
  EXPECT_TRUE(g["nvlink"].is_null());
  EXPECT_NE(g["unavailable"]["nvlink"].get<std::string>().find("Not Supported"), std::string::npos);
  EXPECT_TRUE(g["mig"]["current"].is_null());
  EXPECT_EQ(g["mig"]["unavailable"]["current"], "nvmlDeviceGetMigMode: Not Supported");
  // Only the old ...ThrottleReasons symbol exists there: still read.
  EXPECT_EQ(g["clock_event_reasons"]["names"], json({"sw_power_cap"}));
}

TEST(Health, UnknownGpuIsAnEntryWithAnError) {
  const NvmlLibrary lib = open_fake(kH200);
  const json snap = health_snapshot(lib, {{"0000:99:00.0", ""}, kGpu0});
  ASSERT_EQ(snap["gpus"].size(), 2u);
  EXPECT_NE(snap["gpus"][0]["error"].get<std::string>().find("Not Found"), std::string::npos);
  EXPECT_EQ(snap["gpus"][1]["name"], "NVIDIA H200");
}

TEST(Health, DeltaShowsCountersThatIncreased) {
  const NvmlLibrary lib = open_fake(kH200);
  const json before = health_snapshot(lib, {kGpu0, kGpu1});
  json after;
  {
    const ScopedEnv tick("FAKE_NVML_TICK", "1");
    after = health_snapshot(lib, {kGpu0, kGpu1});
  }
  const json delta = health_delta(before, after);
  EXPECT_EQ(delta["errors_increased"], true);
  const json& d0 = delta["gpus"][0];
  const json& d1 = delta["gpus"][1];
  EXPECT_EQ(d0["errors_increased"], true);
  EXPECT_EQ(d0["ecc_volatile"]["corrected"], 2);
  EXPECT_EQ(d0["ecc_aggregate"]["corrected"], 2);
  EXPECT_EQ(d0["nvlink_errors"]["replay"], 0);
  EXPECT_TRUE(d0["nvlink_errors_by_link"].empty());
  EXPECT_EQ(d1["nvlink_errors"]["replay"], 5);
  EXPECT_EQ(d1["nvlink_errors"]["crc_data"], 1);
  EXPECT_TRUE(d1["nvlink_errors"]["ecc_data"].is_null());
  ASSERT_EQ(d1["nvlink_errors_by_link"].size(), 1u);
  EXPECT_EQ(d1["nvlink_errors_by_link"][0]["link"], 3);
  EXPECT_EQ(d1["nvlink_errors_by_link"][0]["replay"], 5);
  EXPECT_TRUE(d1["links_down"].empty());
  // Limiter time: 3 ms of power capping on GPU1; idle time grows but is not an error.
  EXPECT_EQ(d1["violation_ns"]["power"], 3000000);
  EXPECT_EQ(d0["violation_ns"]["power"], 0);
  EXPECT_EQ(d0["violation_ns"]["low_utilization"], 1000000000);
  EXPECT_GE(delta["seconds"].get<double>(), 0.0);
  // Counters going backwards (driver reload) are not reported as a huge increase.
  const json backwards = health_delta(after, before);
  EXPECT_TRUE(backwards["gpus"][1]["nvlink_errors"]["replay"].is_null());
  EXPECT_EQ(backwards["errors_increased"], false);
}

TEST(Health, DeltaOfUnchangedOrUnavailableSnapshots) {
  const NvmlLibrary lib = open_fake(kH200);
  const json snap = health_snapshot(lib, {kGpu0, kGpu1});
  EXPECT_EQ(health_delta(snap, snap)["errors_increased"], false);
  const json none = health_delta(health_unavailable("NVML unavailable: x"), snap);
  EXPECT_EQ(none["available"], false);
  EXPECT_NE(none["reason"].get<std::string>().find("NVML unavailable: x"), std::string::npos);
}

TEST(Report, PrintsGpusMatrixPeaksAndHealth) {
  std::ostringstream out;
  EXPECT_EQ(print_topology(out, kH200), 0) << out.str();
  const std::string text = out.str();
  for (const char* expected :
       {"GPU0", "GPU1", "NVIDIA H200", "00000000:00:06.0", kGpu1.uuid.c_str(), "NV18", "478.1 GB/s",
        "nvml_nvlink_speed_common", "via NVSwitch", "NVLink 4.0", "NVLink active 18/18", "replay 2",
        "gpu_idle"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in:\n"
                                                      << text;
  }
}

TEST(Report, PcieMatrix) {
  std::ostringstream out;
  EXPECT_EQ(print_topology(out, kPcie), 0) << out.str();
  EXPECT_NE(out.str().find("PXB"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("31.5 GB/s"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("pcie_gen_table"), std::string::npos) << out.str();
}

TEST(Report, UnavailableNvmlExitsWithOne) {
  std::ostringstream out;
  EXPECT_EQ(print_topology(out, "/nonexistent/libnvidia-ml.so.1"), 1);
  EXPECT_EQ(out.str().rfind("NVML unavailable: ", 0), 0u) << out.str();
  // The person gets a next step, not only the loader's words.
  EXPECT_NE(out.str().find("nvidia-smi"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("--dry-run"), std::string::npos) << out.str();
}

// Fabric registration (nvmlDeviceGetGpuFabricInfoV), by the fake's FAKE_NVML_FABRIC knob.
TEST(Fabric, NotSupportedIsNotAvailableNamingTheError) {
  const GpuFabric f = read_gpu_fabric(kGpu0, kH200);
  EXPECT_FALSE(f.read());
  EXPECT_EQ(f.unavailable.rfind("N/A: NVML_ERROR_NOT_SUPPORTED (nvmlDeviceGetGpuFabricInfoV: ", 0), 0u) << f.unavailable;
}

TEST(Fabric, CompletedRegistrationGivesClusterAndClique) {
  const ScopedEnv fabric("FAKE_NVML_FABRIC", "completed");
  const GpuFabric f = read_gpu_fabric(kGpu1, kH200);
  ASSERT_TRUE(f.read()) << f.unavailable;
  EXPECT_EQ(f.state, "completed");
  EXPECT_EQ(f.status, "NVML_SUCCESS");
  EXPECT_EQ(f.cluster_uuid, "00112233445566778899aabbccddeeff");
  EXPECT_EQ(f.clique_id, 8u);  // the fake's GPU 1
  EXPECT_EQ(f.health_mask, 0x2u);
}

TEST(Fabric, ADriverBeforeV3IsAskedWithV2) {
  const ScopedEnv fabric("FAKE_NVML_FABRIC", "v2");
  const GpuFabric f = read_gpu_fabric(kGpu0, kH200);
  ASSERT_TRUE(f.read()) << f.unavailable;
  EXPECT_EQ(f.clique_id, 7u);
  EXPECT_EQ(f.state, "completed");
}

TEST(Fabric, RegistrationInProgressHasNoStatusYet) {
  const ScopedEnv fabric("FAKE_NVML_FABRIC", "in_progress");
  const GpuFabric f = read_gpu_fabric(kGpu0, kH200);
  ASSERT_TRUE(f.read());
  EXPECT_EQ(f.state, "in_progress");
  EXPECT_EQ(f.status, "");
}

TEST(Fabric, NoNvmlOrNoSuchGpuIsNotAvailableWithTheReason) {
  EXPECT_EQ(read_gpu_fabric(kGpu0, "/nonexistent/libnvidia-ml.so.1").unavailable.rfind("N/A: NVML unavailable", 0), 0u);
  const GpuFabric unknown = read_gpu_fabric({"0000:99:00.0", ""}, kH200);
  EXPECT_EQ(unknown.unavailable.rfind("N/A: finding the GPU in NVML: ", 0), 0u) << unknown.unavailable;
  // The PCIe-only fake has no fabric function at all (an older driver).
  EXPECT_EQ(read_gpu_fabric(kL40s0, kPcie).unavailable.rfind("N/A: NVML_ERROR_FUNCTION_NOT_FOUND", 0), 0u);
}

TEST(Fabric, TheTopologyReportShowsEachGpusDomainBasis) {
  std::ostringstream out;
  {
    const ScopedEnv fabric("FAKE_NVML_FABRIC", "completed");
    ASSERT_EQ(print_topology(out, kH200), 0);
  }
  EXPECT_NE(out.str().find("NVLink fabric"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("clique 7 of cluster 00112233445566778899aabbccddeeff"), std::string::npos) << out.str();
  std::ostringstream without;
  ASSERT_EQ(print_topology(without, kH200), 0);
  EXPECT_NE(without.str().find("N/A: NVML_ERROR_NOT_SUPPORTED"), std::string::npos) << without.str();
  EXPECT_NE(without.str().find("the domain is the host"), std::string::npos) << without.str();
}

}  // namespace
}  // namespace p2pbench
