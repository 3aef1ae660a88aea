// The allocators without a GPU: the config key and its errors, the bytes of exported handles,
// the texts a run without peer mappings gives as its reason, and the row's `allocator`.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "common/errors.hpp"
#include "config/config.hpp"
#include "device/peer_memory.hpp"
#include "results/result_writer.hpp"

namespace p2pbench {
namespace {

using nlohmann::json;

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

json minimal() { return json{{"sizes", json::array({4096})}}; }

TEST(AllocatorConfig, DefaultIsLegacyAndEveryNameParses) {
  EXPECT_EQ(parse_config(minimal()).allocator, Allocator::kLegacy);
  for (Allocator a : {Allocator::kLegacy, Allocator::kVmm, Allocator::kFabric}) {
    json doc = minimal();
    doc["allocator"] = to_string(a);
    const Config c = parse_config(doc);
    EXPECT_EQ(c.allocator, a);
    EXPECT_EQ(c.to_json()["allocator"], to_string(a));
    EXPECT_EQ(parse_config(c.to_json()).allocator, a);  // the effective config reads back
  }
}

TEST(AllocatorConfig, BadValuesNameTheKeyTheFlagAndTheValue) {
  for (const json& bad : {json("vmm2"), json("VMM"), json(3), json(nullptr), json::array({"vmm"})}) {
    json doc = minimal();
    doc["allocator"] = bad;
    try {
      parse_config(doc);
      ADD_FAILURE() << "accepted allocator = " << bad.dump();
    } catch (const InputError& e) {
      EXPECT_TRUE(has(e.what(), "allocator = " + bad.dump())) << e.what();
      EXPECT_TRUE(has(e.what(), "\"legacy\", \"vmm\", \"fabric\"")) << e.what();
    }
  }
  json doc = minimal();
  doc["allocator"] = "ipc";
  try {
    parse_config(doc, {{"allocator", "--allocator"}});
    ADD_FAILURE() << "accepted --allocator ipc";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "allocator (from --allocator) = \"ipc\"")) << e.what();
  }
}

TEST(AllocatorConfig, TheKeyIsInTheHelp) {
  bool listed = false;
  for (const auto& [key, help] : config_key_help()) listed = listed || (key == "allocator" && has(help, "IMEX"));
  EXPECT_TRUE(listed);
}

TEST(FdHandle, PacksAsTagPidFdSizeSocketLittleEndian) {
  const FdHandle h{0x01020304, 17, (uint64_t(5) << 32) + 2097152, 0x1122334455667788ULL};
  const std::string bytes = pack_fd_handle(h);
  ASSERT_EQ(bytes.size(), kFdHandleBytes);
  EXPECT_EQ(bytes.substr(0, 4), "vmm2");
  EXPECT_EQ(bytes.substr(4, 4), std::string("\x04\x03\x02\x01", 4));
  EXPECT_EQ(bytes.substr(8, 4), std::string("\x11\x00\x00\x00", 4));
  EXPECT_EQ(bytes.substr(12, 8), std::string("\x00\x00\x20\x00\x05\x00\x00\x00", 8));
  const FdHandle back = unpack_fd_handle(bytes);
  EXPECT_EQ(back.pid, h.pid);
  EXPECT_EQ(back.fd, h.fd);
  EXPECT_EQ(back.bytes, h.bytes);
  EXPECT_EQ(bytes.substr(20, 8), std::string("\x88\x77\x66\x55\x44\x33\x22\x11", 8));
  EXPECT_EQ(back.socket_id, h.socket_id);
  const FdHandle largest = unpack_fd_handle(pack_fd_handle({INT32_MAX, INT32_MAX, UINT64_MAX}));
  EXPECT_EQ(largest.pid, INT32_MAX);
  EXPECT_EQ(largest.fd, INT32_MAX);
  EXPECT_EQ(largest.bytes, UINT64_MAX);
}

TEST(FdHandle, WrongSizeOrTagIsRefusedNamingTheAllocator) {
  const std::string good = pack_fd_handle({42, 7, 4096});
  for (const std::string& bad : {good.substr(0, 19), good + "x", std::string(64, '\0'), "fab1" + good.substr(4)}) {
    try {
      unpack_fd_handle(bad);
      ADD_FAILURE() << "accepted " << bad.size() << " bytes";
    } catch (const RuntimeFailure& e) {
      EXPECT_TRUE(has(e.what(), "malformed vmm")) << e.what();
      EXPECT_TRUE(has(e.what(), "same --allocator")) << e.what();
    }
  }
}

TEST(FabricHandle, KeepsEveryByteAndTheSize) {
  FabricHandle h;
  h.bytes = 6 * 2097152;
  for (size_t i = 0; i < h.data.size(); ++i) h.data[i] = static_cast<unsigned char>(255 - i);
  const std::string bytes = pack_fabric_handle(h);
  ASSERT_EQ(bytes.size(), kFabricHandleBytes);
  EXPECT_EQ(bytes.substr(0, 4), "fab1");
  const FabricHandle back = unpack_fabric_handle(bytes);
  EXPECT_EQ(back.bytes, h.bytes);
  EXPECT_EQ(back.data, h.data);
  EXPECT_THROW(unpack_fabric_handle(pack_fd_handle({1, 2, 3})), RuntimeFailure);
  EXPECT_THROW(unpack_fabric_handle(bytes.substr(1)), RuntimeFailure);
}

TEST(Granularity, SizesRoundUpToWholeGranules) {
  const uint64_t g = 2 << 20;
  EXPECT_EQ(round_up_to_granularity(0, g), g);  // an empty signal area still gets an address
  EXPECT_EQ(round_up_to_granularity(1, g), g);
  EXPECT_EQ(round_up_to_granularity(g, g), g);
  EXPECT_EQ(round_up_to_granularity(g + 1, g), 2 * g);
  EXPECT_EQ(round_up_to_granularity(uint64_t(1) << 30, g), uint64_t(1) << 30);
  EXPECT_EQ(round_up_to_granularity(12345, 0), 12345u);  // legacy: no granularity
}

TEST(FallbackReasons, RefusedPidfdGetfdNamesTheCallTheErrnoAndWhatAllowsIt) {
  const std::string text = pidfd_failure("pidfd_getfd", EPERM, 41, 17, 1, "mapping the source buffer of rank 1");
  EXPECT_EQ(text.rfind("vmm handles: pidfd_getfd(pid 41, fd 17): ", 0), 0u) << text;
  for (const char* needle : {"Operation not permitted", "(EPERM)", "same user", "CAP_SYS_PTRACE",
                             "kernel.yama.ptrace_scope=0", "(it is 1 here)", "(mapping the source buffer of rank 1)"})
    EXPECT_TRUE(has(text, needle)) << needle << " in " << text;
  EXPECT_TRUE(has(pidfd_failure("pidfd_getfd", EPERM, 41, 17, 3, "x"), "until reboot"));
  EXPECT_FALSE(has(pidfd_failure("pidfd_getfd", EPERM, 41, 17, std::nullopt, "x"), "here)"));  // no Yama: no value
}

TEST(FallbackReasons, OtherPidfdErrorsSayWhatIsWrong) {
  const std::string old_kernel = pidfd_failure("pidfd_getfd", ENOSYS, 41, 17, std::nullopt, "x");
  EXPECT_TRUE(has(old_kernel, "(ENOSYS)") && has(old_kernel, "Linux 5.6")) << old_kernel;
  const std::string gone = pidfd_failure("pidfd_open", ESRCH, 41, 17, std::nullopt, "x");
  EXPECT_EQ(gone.rfind("vmm handles: pidfd_open(pid 41): ", 0), 0u) << gone;  // no fd: pidfd_open takes none
  EXPECT_TRUE(has(gone, "PID namespace")) << gone;
  EXPECT_TRUE(has(pidfd_failure("pidfd_getfd", EBADF, 41, 17, std::nullopt, "x"), "not open"));
  EXPECT_TRUE(has(pidfd_failure("pidfd_getfd", 9999, 41, 17, std::nullopt, "x"), "(errno 9999)"));
}

TEST(FallbackReasons, FabricWithoutImexChannelSaysSo) {
  const std::string text = driver_call_failure(Allocator::kFabric, "cuMemCreate", "CUDA_ERROR_NOT_PERMITTED",
                                               "allocating 2097152 bytes for the source buffer");
  EXPECT_EQ(text.rfind("fabric handles: cuMemCreate: CUDA_ERROR_NOT_PERMITTED: no IMEX channel (", 0), 0u) << text;
  EXPECT_TRUE(has(text, "/dev/nvidia-caps-imex-channels")) << text;
  EXPECT_TRUE(has(text, "allocating 2097152 bytes for the source buffer)")) << text;
  // Another error, or vmm's NOT_PERMITTED, is the driver's word with what was being done.
  EXPECT_EQ(driver_call_failure(Allocator::kVmm, "cuMemMap", "CUDA_ERROR_INVALID_VALUE", "mapping x"),
            "vmm handles: cuMemMap: CUDA_ERROR_INVALID_VALUE (mapping x)");
  EXPECT_FALSE(has(driver_call_failure(Allocator::kVmm, "cuMemCreate", "CUDA_ERROR_NOT_PERMITTED", "x"), "IMEX"));
}

TEST(FallbackReasons, UnsupportedFeatureNamesTheAttribute) {
  const std::string text = unsupported_feature(Allocator::kFabric, "fabric handles (CU_MEM_HANDLE_TYPE_FABRIC)",
                                               "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED");
  EXPECT_EQ(text.rfind("fabric handles: this GPU or driver does not support fabric handles", 0), 0u) << text;
  EXPECT_TRUE(has(text, "(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 0)")) << text;
  EXPECT_TRUE(has(text, "--allocator legacy")) << text;
}

TEST(FallbackReasons, RanksFailingAlikeReadAsOneReason) {
  EXPECT_EQ(failures_by_rank({"", ""}), "");
  EXPECT_EQ(failures_by_rank({"a", "", "a", "b"}), "ranks 0, 2: a; rank 3: b");
  const std::string all = failures_by_rank({"fabric handles: x", "fabric handles: x"});
  EXPECT_EQ(no_shared_memory_reason(Allocator::kFabric, all),
            "the ranks cannot share memory with --allocator fabric: ranks 0, 1: fabric handles: x");
}

// pidfd_getfd on this process's own descriptors: always allowed where the kernel has it (the
// ptrace check passes for oneself), so this runs the real syscalls without a second process.
TEST(TakeDescriptor, CopiesADescriptorOfAProcess) {
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  int copy = -1;
  try {
    copy = take_descriptor(int32_t(getpid()), ends[1], "a test");
  } catch (const PeerMemoryUnavailable& e) {
    close(ends[0]);
    close(ends[1]);
    GTEST_SKIP() << "this kernel or sandbox refuses pidfd_getfd even on the calling process: " << e.what();
  }
  EXPECT_NE(copy, ends[1]);
  ASSERT_EQ(write(copy, "abc", 3), 3);
  close(copy);
  close(ends[1]);
  char got[4] = {};
  EXPECT_EQ(read(ends[0], got, sizeof got), 3);
  EXPECT_STREQ(got, "abc");
  close(ends[0]);
}

TEST(TakeDescriptor, AClosedDescriptorOrAMissingProcessIsNamed) {
  const int pid = int(getpid());
  try {
    take_descriptor(pid, 1 << 20, "mapping the signal area of rank 1");
    ADD_FAILURE() << "took descriptor 1048576";
  } catch (const PeerMemoryUnavailable& e) {
    const std::string text = e.what();
    if (has(text, "(ENOSYS)")) GTEST_SKIP() << text;
    EXPECT_TRUE(has(text, "pidfd_getfd(pid " + std::to_string(pid) + ", fd 1048576): ")) << text;
    EXPECT_TRUE(has(text, "(EBADF)") && has(text, "(mapping the signal area of rank 1)")) << text;
  }
  try {
    take_descriptor(INT32_MAX, 3, "x");  // beyond any pid_max
    ADD_FAILURE() << "opened pid " << INT32_MAX;
  } catch (const PeerMemoryUnavailable& e) {
    EXPECT_TRUE(has(e.what(), "vmm handles: pidfd_open(pid 2147483647): ")) << e.what();
  }
}

TEST(AllocatorRow, EveryRowRecordsTheRunsAllocator) {
  CaseSpec c;
  c.method = Method::kCe;
  c.flows = {{0, 1}};
  c.bytes = 4096;
  CaseOutcome o;
  o.status = CaseStatus::kSkipped;
  o.error = "the ranks cannot share memory with --allocator fabric: ...";
  GroupFacts facts = GroupFacts::pair(std::nullopt);
  EXPECT_EQ(result_row(c, o, facts)["allocator"], "legacy");
  facts.allocator = "vmm";
  const json row = result_row(c, o, facts);
  EXPECT_EQ(row["allocator"], "vmm");
  EXPECT_FALSE(identity_fields(c, o).contains("allocator"));  // a run's condition: cases match across it
}

}  // namespace
}  // namespace p2pbench
