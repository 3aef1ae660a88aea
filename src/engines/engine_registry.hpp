// Which engine moves the bytes of a method: one maker per method, the built-in ones listed in
// engine_registry.cpp, a new one registered with its method by one line in its engine's file:
//
//   P2PBENCH_REGISTER_METHOD(kMyCopy, (MethodInfo{Method{}, "my_copy", MethodKind::kCopy, ...}),
//                            [](const CaseSpec& c) -> std::unique_ptr<TransferEngine> { ... });
//
// The sweep, the config section of its axes, the limits, --help and --list-methods then know it
// (they read the method registry); the case loop runs it through this maker. The object file
// holding the registration must be linked in whole (an executable's own source, or a library
// linked with WHOLE_ARCHIVE): nothing else refers to it.
#pragma once

#include <memory>

#include "engines/transfer_engine.hpp"
#include "vocab/methods.hpp"

namespace p2pbench {

using EngineMaker = std::unique_ptr<TransferEngine> (*)(const CaseSpec& c);

// The maker of a method's engine, or null (latency methods have their own runner; the two-sided
// baselines' engines hold session resources and come from BaselineResources).
EngineMaker engine_maker(Method m);

// Registers a method beyond the built-in ones (vocab/methods.hpp's register_method) and its
// engine, before main() runs; returns its id.
Method register_method_with_engine(MethodInfo info, EngineMaker make);

}  // namespace p2pbench

#define P2PBENCH_REGISTER_METHOD(id, info, maker) \
  static const ::p2pbench::Method id = ::p2pbench::register_method_with_engine(info, maker)
