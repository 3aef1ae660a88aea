// latency_signal's protocols: every name the config accepts is one the ping-pong runs, and back.
#include <gtest/gtest.h>

#include "kernels/latency_kernels.hpp"
#include "vocab/variants.hpp"

namespace p2pbench {
namespace {

TEST(SignalProtocols, EveryConfigNameIsAProtocolAndBack) {
  for (const std::string& name : signal_protocol_names()) {
    const auto p = kernels::signal_protocol_named(name);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_EQ(kernels::signal_protocol_name(*p), name);
  }
  EXPECT_EQ(signal_protocol_names().size(), 4u);
  EXPECT_FALSE(kernels::signal_protocol_named("flag_then_payload").has_value());
}

}  // namespace
}  // namespace p2pbench
