#include "engines/engine_registry.hpp"

#include <map>

#include "engines/atomic_engine.hpp"
#include "engines/ce_engine.hpp"
#include "engines/host_link_engine.hpp"
#include "engines/sm_engines.hpp"

namespace p2pbench {

namespace {

// Written only before main() (register_method_with_engine), read after.
std::map<Method, EngineMaker>& makers() {
  static std::map<Method, EngineMaker> table = {
      {Method::kCe, [](const CaseSpec&) -> std::unique_ptr<TransferEngine> { return std::make_unique<CopyEngine>(); }},
      {Method::kLdst,
       [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> {
         return std::make_unique<LdstEngine>(kernels::LdstShape{*c.blocks, *c.threads, *c.unroll});
       }},
      {Method::kTma,
       [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> {
         return std::make_unique<TmaEngine>(kernels::TmaShape{*c.blocks, size_t(*c.smem_bytes), *c.stages});
       }},
      {Method::kH2d,
       [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> {
         return std::make_unique<HostLinkEngine>(HostLinkEngine::kHostToDevice, c.host_memory.value_or(HostMemoryKind::kPinned),
                                                 c.host_numa.value_or(NumaPlacement::kLocal));
       }},
      {Method::kD2h,
       [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> {
         return std::make_unique<HostLinkEngine>(HostLinkEngine::kDeviceToHost, c.host_memory.value_or(HostMemoryKind::kPinned),
                                                 c.host_numa.value_or(NumaPlacement::kLocal));
       }},
      {Method::kAtomic,
       [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> { return std::make_unique<AtomicEngine>(atomic_shape_of(c)); }},
  };
  return table;
}

}  // namespace

EngineMaker engine_maker(Method m) {
  const auto it = makers().find(m);
  return it == makers().end() ? nullptr : it->second;
}

Method register_method_with_engine(MethodInfo info, EngineMaker make) {
  const Method id = register_method(std::move(info));
  makers()[id] = make;
  return id;
}

std::unique_ptr<TransferEngine> make_engine(const CaseSpec& c) {
  const EngineMaker make = engine_maker(c.method);
  return make ? make(c) : nullptr;
}

}  // namespace p2pbench
