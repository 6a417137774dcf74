#include "cli/settings.h"

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <variant>

#include <CLI/CLI.hpp>

#include "cli/cli_error.h"
#include "common/cli/config_sources.h"
#include "common/http/url.h"

namespace cronwheel::cli {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxTokenBytes = 4096;

std::optional<std::string> variable(const Environment& environment, const std::string& name) {
  auto value = environment(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

void check_url(const std::string& url, const std::string& source) {
  auto parsed = common::http::parse_base_url(url);
  if (auto* why = std::get_if<std::string>(&parsed)) {
    throw CliError(kExitUsage, source + ": '" + one_line(url, 200) + "' is not an http(s) URL: " + *why, true);
  }
}

void check_token(const std::string& token, const std::string& source) {
  if (token.empty()) throw CliError(kExitUsage, source + ": the token is empty", true);
  if (token.size() > kMaxTokenBytes) throw CliError(kExitUsage, source + ": the token is longer than 4096 bytes", true);
  for (unsigned char c : token) {
    // It travels in the Authorization header: a CR or LF would end the header.
    if (c < 0x21 || c == 0x7f) {
      throw CliError(kExitUsage, source + ": the token must not contain spaces or control characters", true);
    }
  }
}

std::string read_token_file(const std::string& path, const std::string& source) {
  try {
    return common::read_secret_file(path, source);
  } catch (const common::ConfigError& e) {
    throw CliError(kExitUsage, e.what(), true);
  }
}

struct FileSettings {
  std::optional<std::string> url;
  std::optional<std::string> token;
  std::optional<std::string> token_file;  // resolved against the file's directory
};

// The settings file's keys, read through apply_config_sources on a command of their own so that
// nothing but the file can have set them.
FileSettings read_settings_file(const std::string& path, bool must_exist) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) {
    if (!must_exist) return {};
    throw CliError(kExitUsage, "--config: " + path + " does not exist", true);
  }
  if (!fs::is_regular_file(status)) throw CliError(kExitUsage, "settings file " + path + " is not a file", true);

  CLI::App file("cronwheel settings");
  std::string url, token, token_file;
  auto* url_option = file.add_option("--url", url)->group("Settings");
  auto* token_option = file.add_option("--token", token)->group("Settings");
  auto* token_file_option = file.add_option("--token-file", token_file)->group("Settings");
  try {
    common::apply_config_sources(file, {path, {}});
  } catch (const common::ConfigError& e) {
    throw CliError(kExitUsage, e.what(), true);
  }
  FileSettings settings;
  if (url_option->count() > 0) settings.url = url;
  if (token_option->count() > 0) settings.token = token;
  if (token_file_option->count() > 0) {
    fs::path named(token_file);
    settings.token_file = named.is_absolute() ? named.string() : (fs::path(path).parent_path() / named).string();
  }
  return settings;
}

}  // namespace

Environment process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::string default_config_path(const Environment& environment) {
  if (auto xdg = variable(environment, "XDG_CONFIG_HOME"); xdg && fs::path(*xdg).is_absolute()) {
    return (fs::path(*xdg) / "cronwheel" / "cli.toml").string();
  }
  if (auto home = variable(environment, "HOME")) return (fs::path(*home) / ".config" / "cronwheel" / "cli.toml").string();
  return {};
}

Settings resolve_settings(const SettingFlags& flags, const Environment& environment) {
  if (flags.token && flags.token_file) {
    throw CliError(kExitUsage, "--token and --token-file: give one of them, not both", true);
  }
  if (flags.config && flags.config->empty()) throw CliError(kExitUsage, "--config: the path is empty", true);
  const std::string config_path = flags.config ? *flags.config : default_config_path(environment);
  const FileSettings file = config_path.empty() ? FileSettings{} : read_settings_file(config_path, flags.config.has_value());

  Settings settings;
  if (flags.url) {
    settings.url = *flags.url;
    settings.url_source = "--url";
  } else if (auto url = variable(environment, "CRONWHEEL_URL")) {
    settings.url = *url;
    settings.url_source = "CRONWHEEL_URL";
  } else if (file.url) {
    settings.url = *file.url;
    settings.url_source = config_path + ": url";
  }
  check_url(settings.url, settings.url_source);

  if (flags.token) {
    settings.token = *flags.token;
    settings.token_source = "--token";
  } else if (flags.token_file) {
    settings.token = read_token_file(*flags.token_file, "--token-file");
    settings.token_source = "--token-file";
  } else if (auto token = variable(environment, "CRONWHEEL_TOKEN")) {
    settings.token = *token;
    settings.token_source = "CRONWHEEL_TOKEN";
  } else if (auto token_file = variable(environment, "CRONWHEEL_TOKEN_FILE")) {
    settings.token = read_token_file(*token_file, "CRONWHEEL_TOKEN_FILE");
    settings.token_source = "CRONWHEEL_TOKEN_FILE";
  } else if (file.token) {
    settings.token = *file.token;
    settings.token_source = config_path + ": token";
  } else if (file.token_file) {
    settings.token = read_token_file(*file.token_file, config_path + ": token-file");
    settings.token_source = config_path + ": token-file";
  }
  if (!settings.token_source.empty()) check_token(settings.token, settings.token_source);
  return settings;
}

}  // namespace cronwheel::cli
