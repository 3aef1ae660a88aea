// Placeholder until the staged and NCCL engines land: every baseline reports itself unavailable.
#include "engines/baseline_resources.hpp"

namespace p2pbench {

namespace {

class UnavailableEngine final : public TransferEngine {
 public:
  explicit UnavailableEngine(std::string why) : why_(std::move(why)) {}
  std::optional<std::string> unsupported_reason(int) const override { return why_; }
  void prepare(int, int, const std::vector<Orientation>&) override {}
  void launch(const Transfer&, cudaStream_t) override {}
  std::optional<int> measure_sms_used(const Transfer&, cudaStream_t) override { return std::nullopt; }

 private:
  std::string why_;
};

class NoBaselines final : public BaselineResources {
 public:
  std::optional<std::string> begin(Method, const Communicator&) override { return "not implemented yet"; }
  void end(Method, const Communicator&) override {}
  std::unique_ptr<TransferEngine> make_engine(const CaseSpec& c) override {
    if (!is_two_sided_baseline(c.method)) return nullptr;
    return std::make_unique<UnavailableEngine>(std::string(to_string(c.method)) + " is not implemented yet");
  }
};

}  // namespace

std::unique_ptr<BaselineResources> make_baseline_resources(size_t, int) { return std::make_unique<NoBaselines>(); }

}  // namespace p2pbench
