#include "common/util/process_secrets.h"

#include <sys/prctl.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

namespace cronwheel::common {
namespace {

// Fields of /proc/<pid>/stat (proc(5), counted from 1) bounding the environment block.
constexpr int kEnvStartField = 50;
constexpr int kEnvEndField = 51;

struct Block {
  char* begin;
  char* end;
};

// The environment block the process started with, as the kernel shows it in
// /proc/self/environ. nullopt when /proc/self/stat cannot be read or lacks the fields.
std::optional<Block> environment_block() {
  std::ifstream in("/proc/self/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // "pid (comm) state ...": comm may hold spaces and parentheses; fields resume after the last
  // ')', with the state as field 3.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(stat).substr(close + 1);
  std::uintptr_t start = 0;
  std::uintptr_t end = 0;
  int field = 2;
  while (!rest.empty() && field < kEnvEndField) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const auto space = rest.find(' ');
    const std::string_view token = rest.substr(0, space);
    rest.remove_prefix(space == std::string_view::npos ? rest.size() : space);
    ++field;
    if (field == kEnvStartField || field == kEnvEndField) {
      std::uintptr_t value = 0;
      const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc() || ptr != token.data() + token.size()) return std::nullopt;
      (field == kEnvStartField ? start : end) = value;
    }
  }
  if (field != kEnvEndField || start == 0 || end <= start) return std::nullopt;
  return Block{reinterpret_cast<char*>(start), reinterpret_cast<char*>(end)};
}

bool usable_name(std::string_view name) {
  return !name.empty() && name.find('=') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

}  // namespace

std::size_t erase_environment_variables(std::span<const std::string_view> names) {
  // unsetenv first: afterwards nothing in `environ` points at the entries overwritten below.
  for (const auto name : names) {
    if (usable_name(name)) ::unsetenv(std::string(name).c_str());
  }
  const auto block = environment_block();
  if (!block) return 0;
  std::size_t erased = 0;
  for (char* entry = block->begin; entry < block->end;) {
    const std::size_t length = ::strnlen(entry, static_cast<std::size_t>(block->end - entry));
    const std::string_view text(entry, length);
    for (const auto name : names) {
      if (usable_name(name) && text.size() > name.size() && text.starts_with(name) &&
          text[name.size()] == '=') {
        std::memset(entry, 0, length);
        ++erased;
        break;
      }
    }
    entry += length + 1;
  }
  return erased;
}

std::size_t hide_option_values(int argc, char** argv, std::span<const std::string_view> options) {
  std::size_t hidden = 0;
  auto hide = [&hidden](char* value) {
    if (value == nullptr || *value == '\0') return;
    for (char* c = value; *c != '\0'; ++c) *c = 'x';
    ++hidden;
  };
  for (int i = 1; i < argc && argv[i] != nullptr; ++i) {
    const std::string_view argument(argv[i]);
    for (const auto option : options) {
      if (option.empty() || !argument.starts_with(option)) continue;
      if (argument.size() == option.size()) {
        // "--option VALUE": the next argument is the value, whatever it looks like.
        if (i + 1 < argc) hide(argv[++i]);
        break;
      }
      if (argument[option.size()] == '=') {
        hide(argv[i] + option.size() + 1);
        break;
      }
    }
  }
  return hidden;
}

bool make_undumpable() noexcept { return ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0; }

}  // namespace cronwheel::common
