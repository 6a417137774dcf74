#pragma once

// Where `cronwheel` finds the admin and its API token (docs/cli.md, "Settings"), highest first:
//
//   1. the flags --url, --token, --token-file;
//   2. the environment: CRONWHEEL_URL, CRONWHEEL_TOKEN, CRONWHEEL_TOKEN_FILE;
//   3. the settings file: --config FILE, else $XDG_CONFIG_HOME/cronwheel/cli.toml, else
//      ~/.config/cronwheel/cli.toml, with the keys url, token and token-file (TOML, read by
//      common/cli's apply_config_sources, so a key no setting has is refused);
//   4. the default URL http://127.0.0.1:8080 and no token.
//
// A token beats a token file at the same level; --token and --token-file together are bad
// usage. A token file's first line is the token (read_secret_file: at most 4 KiB, not empty); a
// relative token-file in the settings file is relative to the settings file's directory. The
// default settings file may be missing; a file named by --config may not, and a file that
// exists but cannot be read or parsed is an error naming it. Every error is a CliError with
// status 2 that names the source ("CRONWHEEL_URL: ...", "/home/ann/.config/cronwheel/cli.toml:
// url: ...").

#include <functional>
#include <optional>
#include <string>

namespace cronwheel::cli {

inline constexpr const char* kDefaultUrl = "http://127.0.0.1:8080";

// The value of an environment variable; nullopt (or empty) when it is not set.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;

// The process's own environment (getenv).
Environment process_environment();

// What the command line said; nullopt when a flag was not given.
struct SettingFlags {
  std::optional<std::string> url;
  std::optional<std::string> token;
  std::optional<std::string> token_file;
  std::optional<std::string> config;
};

struct Settings {
  std::string url = kDefaultUrl;
  std::string url_source = "the default";  // where url came from, for messages
  std::string token;                       // empty: none
  std::string token_source;                // "--token", "CRONWHEEL_TOKEN_FILE", ...; empty: none
};

// Resolves the settings as above; throws CliError (status 2) for a bad or unreadable source.
Settings resolve_settings(const SettingFlags& flags, const Environment& environment);

// The settings file read when --config is not given: $XDG_CONFIG_HOME/cronwheel/cli.toml (when
// XDG_CONFIG_HOME is an absolute path), else $HOME/.config/cronwheel/cli.toml; empty when
// neither variable is set.
std::string default_config_path(const Environment& environment);

}  // namespace cronwheel::cli
