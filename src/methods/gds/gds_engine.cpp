// GPUDirect Storage: a file and GPU memory, each way, two paths:
//   gds_read, gds_write                cuFile (cuFileRead / cuFileWrite) straight between the
//                                      file and a cuFileBufRegister'ed device buffer
//   gds_read_bounce, gds_write_bounce  pread / pwrite (O_DIRECT) into pinned host memory and
//                                      cudaMemcpyAsync, in two 16 MiB chunks that overlap
// The file lies in the config's gds.directory (skipped without one). Every byte is verified:
// reads get a file holding the sample's pattern into poisoned GPU memory; writes put the GPU's
// pattern into the file, which is read back into the poisoned destination and checked.
// The transfers are synchronous host calls, which no CUDA graph can hold: the engine is fed
// host-driven, and the timer times each sample with the host clock (Feeding::kHostDriven).
// Whether cuFile ran in GDS or compatibility mode (or the bounce through the page cache) is the
// row's engine_mode; it is inferred: nvidia_fs loaded and compatibility not forced is GDS.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <nlohmann/json.hpp>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "common/event_wait.hpp"
#include "engines/engine_registry.hpp"
#include "measure/case_outcome.hpp"
#include "methods/gds/cufile_library.hpp"
#include "methods/gds/gds_file.hpp"
#include "methods/gds/gds_settings.hpp"

namespace p2pbench::gds {
namespace {

enum class Way { kRead, kWrite };  // read: file -> GPU; write: GPU -> file
constexpr double kIoDeadlineS = 120.0;  // one transfer's chunk copies

bool nvidia_fs_loaded() { return ::access("/sys/module/nvidia_fs", F_OK) == 0; }
bool compat_forced() {
  const char* v = std::getenv("CUFILE_FORCE_COMPAT_MODE");
  return v && std::strcmp(v, "true") == 0;
}

class GdsEngine final : public TransferEngine {
 public:
  GdsEngine(Way way, bool direct, const CaseSpec& c) : way_(way), direct_(direct), spec_(c) {}

  std::optional<std::string> unsupported_reason(int) const override;
  void prepare(int, int, const std::vector<Flow>&) override {
    if (!bounce_) bounce_ = std::make_unique<Bounce>(size_t(spec_.bytes));
  }
  Feeding feeding() const override { return Feeding::kHostDriven; }
  bool rotates_buffers() const override { return false; }  // one file range, offset 0
  Transfer transfer(Direction, const Endpoints& e, uint64_t offset, size_t bytes) const override {
    return local_transfer(e, offset, bytes);
  }
  void fill_source(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) override;
  void launch(const Transfer& t, cudaStream_t stream) override;
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return std::nullopt; }
  std::optional<std::string> verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                    cudaStream_t stream) override;
  std::optional<std::string> engine_mode() const override { return mode_; }

 private:
  std::optional<std::string> open_cufile() const;
  void register_buffer(const void* base, size_t bytes);
  void cufile_transfer(const Transfer& t);

  Way way_;
  bool direct_;
  CaseSpec spec_;
  // Made by unsupported_reason (the first call that may fail with a reason to show), kept for the case.
  mutable std::optional<CaseFile> file_;
  mutable std::shared_ptr<CuFileLibrary> cufile_;
  mutable FileHandle handle_;
  mutable std::optional<std::string> mode_;
  BufferRegistration registered_;
  std::unique_ptr<Bounce> bounce_;
};

std::optional<std::string> GdsEngine::unsupported_reason(int) const {
  const std::optional<std::string> directory = directory_of(spec_);
  if (!directory)
    return std::string("the gds methods need a directory for their file: set \"gds\": {\"directory\": \"/path\"} in the config");
  if (spec_.bytes == 0 || spec_.bytes % Bounce::kAlignment != 0)
    return "bytes (" + std::to_string(spec_.bytes) + ") must be a positive multiple of 4096 (O_DIRECT's alignment)";
  if (!file_) {
    std::string why;
    file_ = CaseFile::create(*directory, spec_.flows.front().src_rank, to_string(spec_.method), why);
    if (!file_) return why;
  }
  if (direct_) return open_cufile();
  mode_ = file_->direct_io() ? "posix_odirect on " + file_->filesystem()
                             : "posix_page_cache on " + file_->filesystem() + " (" + file_->cached_because() + ")";
  return std::nullopt;
}

// cuFile's driver and a handle of the case's file, or why not with what would allow it.
std::optional<std::string> GdsEngine::open_cufile() const {
  if (handle_.get()) return std::nullopt;
  std::string why;
  if (!cufile_) cufile_ = CuFileLibrary::open(why);
  if (!cufile_) return why;
  const auto props = cufile_->properties(why);
  if (!props) return why;
  const bool nvfs = nvidia_fs_loaded(), compat_allowed = (props->nvfs.dcontrolflags & kAllowCompatModeBit) != 0;
  void* h = cufile_->register_handle(file_->fd(), why);
  if (!h)
    return why + " for a file on " + file_->filesystem() + " in " + directory_of(spec_).value_or("") + " (nvidia_fs module " +
           (nvfs ? "loaded" : "not loaded") + ", compatibility mode " + (compat_allowed ? "allowed" : "not allowed") +
           " per cuFileDriverGetProperties" + (compat_forced() ? ", CUFILE_FORCE_COMPAT_MODE=true" : "") +
           "); cuFile would run with the nvidia_fs module loaded and a filesystem GDS supports (ext4 or xfs on local "
           "NVMe, ...), or in compatibility mode (\"allow_compat_mode\": true in the cufile.json that "
           "CUFILE_ENV_PATH_JSON names, or CUFILE_FORCE_COMPAT_MODE=true)";
  handle_ = FileHandle(cufile_, h);
  const bool gds = nvfs && props->nvfs.major_version > 0 && !compat_forced();
  mode_ = std::string(gds ? "cufile_gds" : "cufile_compat") + " on " + file_->filesystem() +
          (file_->direct_io() ? "" : " (no O_DIRECT: " + file_->cached_because() + ")") +
          (gds ? "" : nvfs ? " (CUFILE_FORCE_COMPAT_MODE=true)" : " (no nvidia_fs module: POSIX I/O inside cuFile)");
  return std::nullopt;
}

void GdsEngine::register_buffer(const void* base, size_t bytes) {
  if (!direct_ || registered_.base() == base) return;
  registered_ = BufferRegistration();
  if (auto why = cufile_->register_buffer(base, bytes)) throw RuntimeFailure(*why);
  registered_ = BufferRegistration(cufile_, base);
}

// Reads: the file holds the sample's pattern (written through the bounce, untimed).
void GdsEngine::fill_source(void* region, size_t bytes, uint64_t seed, cudaStream_t stream) {
  TransferEngine::fill_source(region, bytes, seed, stream);
  if (way_ == Way::kWrite) return;
  prepare(0, 0, {});
  bounce_->device_to_file(*file_, region, bytes, stream, kIoDeadlineS);
}

void GdsEngine::cufile_transfer(const Transfer& t) {
  for (size_t done = 0; done < t.bytes;) {
    errno = 0;
    const ssize_t n = way_ == Way::kRead
                          ? cufile_->read(handle_.get(), t.dst, t.bytes - done, off_t(done), off_t(done))
                          : cufile_->write(handle_.get(), t.src, t.bytes - done, off_t(done), off_t(done));
    if (n <= 0)
      throw RuntimeFailure(std::string(way_ == Way::kRead ? "cuFileRead" : "cuFileWrite") + " of " +
                           std::to_string(t.bytes - done) + " bytes at " + std::to_string(done) + " failed: " +
                           (n == 0 ? std::string("nothing moved") : io_error_text(n, errno)));
    done += size_t(n);
  }
}

void GdsEngine::launch(const Transfer& t, cudaStream_t stream) {
  if (!file_ || (direct_ && !handle_.get())) throw RuntimeFailure("a gds transfer was launched before its file was open");
  if (direct_) {  // registered on the first transfer, calibration's untimed one
    register_buffer(way_ == Way::kRead ? t.dst : t.src, t.bytes);
    return cufile_transfer(t);
  }
  if (way_ == Way::kRead) return bounce_->file_to_device(*file_, t.dst, t.bytes, stream, kIoDeadlineS);
  bounce_->device_to_file(*file_, t.src, t.bytes, stream, kIoDeadlineS);
}

// Writes: what the file holds, read back into the poisoned destination, is what is checked.
std::optional<std::string> GdsEngine::verify(const void* dst, size_t bytes, uint64_t seed, uint64_t offset,
                                             cudaStream_t stream) {
  if (way_ == Way::kWrite) {
    bounce_->file_to_device(*file_, const_cast<void*>(dst), bytes, stream, kIoDeadlineS);
    wait_for_stream(stream, kLocalWorkWaitS, "the written file's reading back into the GPU");
  }
  return TransferEngine::verify(dst, bytes, seed, offset, stream);
}

// How the engine ran (TransferEngine::engine_mode): GDS, cuFile's compatibility mode or POSIX I/O.
nlohmann::json engine_mode_value(const CaseSpec&, const CaseOutcome& o) {
  return o.engine_mode ? nlohmann::json(*o.engine_mode) : nlohmann::json(nlohmann::json::value_t::discarded);
}

RowField engine_mode_field() {
  RowField f{"engine_mode", RowFieldType::kText, "",
             "how the engine ran where the environment decides it (gds_* methods): cufile_gds | cufile_compat "
             "(cuFile's compatibility mode: POSIX I/O inside cuFile; inferred: GDS needs the nvidia_fs module and no "
             "CUFILE_FORCE_COMPAT_MODE) | posix_odirect | posix_page_cache (the filesystem refused O_DIRECT), then "
             "'on <filesystem>' and any reason"};
  f.value = engine_mode_value;
  return f;
}

MethodInfo info(const char* name, const char* title, const char* color, int order, const char* help) {
  MethodInfo m{Method{}, name, MethodKind::kLocal, {}, title, color, order, false,
               "", help};
  m.push_only = true;
  m.settings = &kSection;
  m.row_fields = {engine_mode_field()};
  return m;
}

template <Way kWay, bool kDirect>
std::unique_ptr<TransferEngine> make(const CaseSpec& c) {
  return std::make_unique<GdsEngine>(kWay, kDirect, c);
}

}  // namespace
}  // namespace p2pbench::gds

namespace p2pbench {

P2PBENCH_REGISTER_METHOD(kGdsRead,
                         gds::info("gds_read", "file → GPU (cuFile)", "tab:green", 60,
                                   "GPUDirect Storage: cuFileRead from a file in gds.directory into registered GPU "
                                   "memory (GDS or cuFile's compatibility mode: the row's engine_mode)"),
                         (gds::make<gds::Way::kRead, true>));
P2PBENCH_REGISTER_METHOD(kGdsWrite,
                         gds::info("gds_write", "GPU → file (cuFile)", "tab:red", 61,
                                   "GPUDirect Storage: cuFileWrite from registered GPU memory into a file in "
                                   "gds.directory"),
                         (gds::make<gds::Way::kWrite, true>));
P2PBENCH_REGISTER_METHOD(kGdsReadBounce,
                         gds::info("gds_read_bounce", "file → host → GPU", "tab:olive", 62,
                                   "the bounce GDS avoids: pread (O_DIRECT) into pinned host memory, then "
                                   "cudaMemcpyAsync to the GPU, in overlapping 16 MiB chunks"),
                         (gds::make<gds::Way::kRead, false>));
P2PBENCH_REGISTER_METHOD(kGdsWriteBounce,
                         gds::info("gds_write_bounce", "GPU → host → file", "tab:purple", 63,
                                   "cudaMemcpyAsync into pinned host memory, then pwrite (O_DIRECT) into a file in "
                                   "gds.directory, in overlapping 16 MiB chunks"),
                         (gds::make<gds::Way::kWrite, false>));

}  // namespace p2pbench
