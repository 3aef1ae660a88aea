#include "methods/gds/gds_settings.hpp"

#include <sys/stat.h>

#include "common/errors.hpp"

namespace p2pbench::gds {

namespace {

using nlohmann::json;

// The directory, checked when the config is read, so a typo stops the run before any case (exit 2)
// rather than skipping every gds row. Without one (no section, or "directory": null, the effective
// config's none) the settings record null.
json parse_section(const json* section, const KeyNamer& name) {
  const json none = {{"directory", nullptr}};
  if (!section) return none;
  if (!section->is_object()) throw InputError(name("gds"), section->dump(), "must be an object {\"directory\"}");
  reject_unknown_keys(*section, {"directory"}, "gds.", name);
  if (!section->contains("directory") || (*section)["directory"].is_null()) return none;
  const json& v = (*section)["directory"];
  if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>()[0] != '/')
    throw InputError(name("gds.directory"), v.dump(), "must be an absolute path of a directory");
  struct stat st{};
  if (stat(v.get<std::string>().c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError(name("gds.directory"), v.dump(), "is not an existing directory");
  return {{"directory", v}};
}

}  // namespace

const SettingsSection kSection{
    "gds",
    "{\"directory\"}: an existing directory (absolute path) where the gds_* methods write and read their file "
    "(p2pbench-gds-*.bin, removed after the case); without it their rows are skipped",
    parse_section};

std::optional<std::string> directory_of(const CaseSpec& c) {
  if (!c.settings.is_object()) return std::nullopt;
  const auto it = c.settings.find("directory");
  if (it == c.settings.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace p2pbench::gds
