// A config section of settings that methods declare with their registration beyond their swept
// axes (MethodInfo::settings: the gds methods' "gds": {"directory"}), so that the config layer
// knows no method's own keys: the config parses the section of every registered method that
// declares one, --help lists it, the effective config records it where the run uses such a
// method, and the sweep gives each case of such a method its settings (CaseSpec::settings), which
// the method's engine reads.
#pragma once

#include <nlohmann/json.hpp>

#include "config/config_keys.hpp"

namespace p2pbench {

struct SettingsSection {
  const char* key;   // the section's key in the config ("gds"); methods that declare one section share it
  const char* help;  // its line of --help's config keys
  // The section's settings, checked, as the effective config records them; `section` is null
  // where the config has none. Throws InputError naming the key (through `name`) and the value.
  nlohmann::json (*parse)(const nlohmann::json* section, const KeyNamer& name);
};

}  // namespace p2pbench
