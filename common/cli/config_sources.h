#pragma once

// Where the programs' settings come from (docs/configuration.md), highest first:
//
//   1. the command line (--db-url ...);
//   2. the option's environment variable (CRONWHEEL_DB_URL), or, for a secret, the file named
//      by that variable with _FILE appended (CRONWHEEL_DB_URL_FILE: its first line);
//   3. the configuration file (--config / CRONWHEEL_CONFIG): TOML or INI, one key per option,
//      named as the option without its dashes (db-url = "postgresql://...");
//   4. the option's default.
//
// CLI11 reads the command line and the environment; apply_config_sources() fills in what they
// left unset from the secret files and the configuration file, through each option's own
// conversion and checks (a value out of range in the file is refused as on the command line).

#include <CLI/CLI.hpp>

#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cronwheel::common {

// A setting that cannot be read: names the source (the file, the variable), the key and why.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A secret kept in a file: its first line, without the line end. At most 4 KiB and not empty;
// ConfigError naming `what` (the option or variable it is for) otherwise.
std::string read_secret_file(const std::string& path, const std::string& what);

struct ConfigSources {
  std::string config_path;        // the configuration file; empty: none
  std::set<std::string> secrets;  // long option names ("--db-url") that also read <ENVNAME>_FILE
};

// Parses argv into `command` and the environment variables its options name. nullopt when the
// program goes on; otherwise the status it exits with: 0 once --help or --version is printed
// (CLI11 prints them), 2 for a usage error, said on `err` as "<prefix><what was wrong>".
std::optional<int> parse_command_line(CLI::App& command, int argc, char** argv, std::ostream& err,
                                      std::string_view prefix = {});

// Call after `command` (the command that was run) parsed its command line and environment.
// Fills every option neither set, as said above; throws ConfigError for an unreadable file, a
// key no option has, a section (the file is flat), or a value the option refuses.
void apply_config_sources(CLI::App& command, const ConfigSources& sources);

// docs/configuration.md's table of `command`'s options: | option | environment | file key |
// default | meaning |, one row per option but help, version and config. `secrets` are marked
// as also read from <ENVNAME>_FILE.
void print_option_table(const CLI::App& command, const std::set<std::string>& secrets, std::ostream& out);

}  // namespace cronwheel::common
