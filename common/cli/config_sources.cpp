#include "common/cli/config_sources.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace cronwheel::common {

namespace {

constexpr std::size_t kMaxSecretBytes = 4096;
constexpr std::size_t kMaxConfigBytes = 1 << 20;

// "--db-url" → "db-url": the option's key in a configuration file.
std::string key_of(const CLI::Option& option) {
  const auto& names = option.get_lnames();
  return names.empty() ? std::string() : names.front();
}

bool documented(const CLI::Option& option) {
  const std::string key = key_of(option);
  return !key.empty() && key != "help" && key != "version" && key != "config" && !option.get_group().empty();
}

CLI::Option* option_for(CLI::App& command, const std::string& key) {
  for (CLI::Option* option : command.get_options()) {
    if (key_of(*option) == key) return option;
  }
  return nullptr;
}

// Sets `option` from one source's text, through its own checks and conversion.
void set_from(CLI::Option& option, std::vector<std::string> inputs, const std::string& source) {
  try {
    if (option.get_expected_min() == 0) {  // a flag: true/false, yes/no, on/off, 1/0
      if (inputs.size() != 1) throw ConfigError(source + ": a flag takes one value");
      option.add_result(option.get_flag_value(key_of(option), inputs.front()));
    } else {
      option.add_result(std::move(inputs));
    }
    option.run_callback();
  } catch (const CLI::Error& e) {
    throw ConfigError(source + ": " + e.what());
  }
}

}  // namespace

std::optional<int> parse_command_line(CLI::App& command, int argc, char** argv, std::ostream& err,
                                      std::string_view prefix) {
  try {
    command.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return command.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return command.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return command.exit(e);
  } catch (const CLI::ParseError& e) {
    err << prefix << e.what() << "\n";
    return 2;
  }
  return std::nullopt;
}

std::string read_secret_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(what + ": cannot read " + path + ": " + std::strerror(errno));
  std::string text(kMaxSecretBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxSecretBytes) {
    throw ConfigError(what + ": " + path + " is longer than 4096 bytes: not a secret file");
  }
  text = text.substr(0, text.find_first_of("\r\n"));
  if (text.empty()) throw ConfigError(what + ": " + path + " is empty");
  return text;
}

void apply_config_sources(CLI::App& command, const ConfigSources& sources) {
  // 2. Secrets from files, where neither the flag nor the variable itself gave them.
  for (const std::string& name : sources.secrets) {
    CLI::Option* option = command.get_option_no_throw(name);
    if (option == nullptr || option->count() > 0 || option->get_envname().empty()) continue;
    const std::string variable = option->get_envname() + "_FILE";
    const char* path = std::getenv(variable.c_str());
    if (path == nullptr || *path == '\0') continue;
    set_from(*option, {read_secret_file(path, variable)}, variable);
  }

  // 3. The configuration file.
  if (sources.config_path.empty()) return;
  {
    std::ifstream probe(sources.config_path, std::ios::binary | std::ios::ate);
    if (!probe) {
      throw ConfigError("--config: cannot read " + sources.config_path + ": " + std::strerror(errno));
    }
    if (static_cast<std::size_t>(probe.tellg()) > kMaxConfigBytes) {
      throw ConfigError("--config: " + sources.config_path + " is larger than 1 MiB");
    }
  }
  std::vector<CLI::ConfigItem> items;
  try {
    items = CLI::ConfigTOML().from_file(sources.config_path);
  } catch (const CLI::Error& e) {
    throw ConfigError("--config " + sources.config_path + ": " + e.what());
  }
  for (const auto& item : items) {
    if (!item.parents.empty()) {
      throw ConfigError(sources.config_path + ": [" + item.parents.front() +
                        "]: sections are not used; write every key at the top of the file");
    }
    const std::string where = sources.config_path + ": " + item.name;
    CLI::Option* option = option_for(command, item.name);
    if (option == nullptr || !documented(*option)) {
      throw ConfigError(where + ": no such setting (docs/configuration.md lists them)");
    }
    if (option->count() > 0) continue;  // the command line or the environment said otherwise
    set_from(*option, item.inputs, where);
  }
}

void print_option_table(const CLI::App& command, const std::set<std::string>& secrets, std::ostream& out) {
  auto cell = [](std::string text) {
    std::string escaped;
    for (char c : text) {
      if (c == '|') escaped += "\\|";
      else if (c == '\n') escaped += ' ';
      else escaped += c;
    }
    return escaped;
  };
  out << "| option | environment | file key | default | meaning |\n|---|---|---|---|---|\n";
  for (const CLI::Option* option : command.get_options()) {
    if (!documented(*option)) continue;
    const std::string key = key_of(*option);
    std::string environment = option->get_envname().empty() ? "" : "`" + option->get_envname() + "`";
    if (secrets.count("--" + key) != 0) environment += ", `" + option->get_envname() + "_FILE`";
    const std::string fallback = option->get_default_str();
    out << "| `--" << key << "` | " << environment << " | `" << key << "` | "
        << (fallback.empty() ? "" : "`" + cell(fallback) + "`") << " | " << cell(option->get_description()) << " |\n";
  }
}

}  // namespace cronwheel::common
