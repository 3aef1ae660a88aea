#include "device/shared_gate.hpp"

namespace p2pbench {

namespace {
constexpr size_t kGateBytes = 4096;  // one page: cudaHostRegister works on whole pages
constexpr const char* kWhat = "the start gate";
}  // namespace

SharedGate SharedGate::create() {
  SharedGate gate(SharedHostMemory::create(kGateBytes, kWhat));
  gate.releaser_ = true;
  return gate;
}

SharedGate SharedGate::open(const std::string& name) { return SharedGate(SharedHostMemory::open(name, kGateBytes, kWhat)); }

void SharedGate::release(uint32_t ticket) {
  if (releaser_) __atomic_store_n(word(), ticket, __ATOMIC_RELEASE);
}

uint32_t SharedGate::current() const { return __atomic_load_n(word(), __ATOMIC_ACQUIRE); }

}  // namespace p2pbench
