#include "measure/shared_gate.hpp"

namespace p2pbench {

namespace {
constexpr size_t kGateBytes = 4096;  // one page: cudaHostRegister works on whole pages
constexpr const char* kWhat = "the start gate";
}  // namespace

SharedGate SharedGate::create() { return SharedGate(SharedHostMemory::create(kGateBytes, kWhat)); }

SharedGate SharedGate::open(const std::string& name) { return SharedGate(SharedHostMemory::open(name, kGateBytes, kWhat)); }

void SharedGate::release(uint32_t ticket) { __atomic_store_n(word(), ticket, __ATOMIC_RELEASE); }

uint32_t SharedGate::current() const { return __atomic_load_n(word(), __ATOMIC_ACQUIRE); }

}  // namespace p2pbench
