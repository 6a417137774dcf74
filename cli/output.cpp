#include "cli/output.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <ostream>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "common/util/utf8.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

// One UTF-8 character at text[i]: its code point and length, or length 0 where the bytes are not
// UTF-8.
std::pair<char32_t, std::size_t> decode(std::string_view text, std::size_t i) {
  const std::size_t length = common::utf8::sequence_length(text, i);
  if (length == 0) return {0, 0};
  return {common::utf8::decode(text, i, length), length};
}

// East Asian Wide and Fullwidth ranges (the common ones: CJK, Hangul, fullwidth forms, emoji),
// which terminals draw two columns wide.
bool wide(char32_t c) {
  static constexpr std::array<std::pair<char32_t, char32_t>, 12> kWide{{{0x1100, 0x115F},
                                                                       {0x2E80, 0x303E},
                                                                       {0x3041, 0x33FF},
                                                                       {0x3400, 0x4DBF},
                                                                       {0x4E00, 0x9FFF},
                                                                       {0xA000, 0xA4CF},
                                                                       {0xAC00, 0xD7A3},
                                                                       {0xF900, 0xFAFF},
                                                                       {0xFE30, 0xFE4F},
                                                                       {0xFF00, 0xFF60},
                                                                       {0xFFE0, 0xFFE6},
                                                                       {0x1F300, 0x3FFFD}}};
  for (const auto& [first, last] : kWide) {
    if (c >= first && c <= last) return true;
  }
  return false;
}

// Whether a YAML reader would take `text`, written plain, as something other than this string
// (a boolean, null, a number, ...): such strings are written quoted. Conservative: any plain
// scalar that starts like a number is quoted.
bool needs_quotes(const std::string& text) {
  if (text.empty()) return true;
  const char first = text.front();
  if (std::isdigit(static_cast<unsigned char>(first)) || first == '+' || first == '-' || first == '.') return true;
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::array<std::string_view, 10> kWords{"y", "yes", "n", "no", "true", "false", "on", "off", "null", "~"};
  return std::find(kWords.begin(), kWords.end(), lower) != kWords.end();
}

void emit(YAML::Emitter& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      if (value.empty()) out << YAML::Flow;  // {} on the key's line
      out << YAML::BeginMap;
      for (const auto& [key, member] : value.items()) {
        if (needs_quotes(key)) out << YAML::Key << YAML::DoubleQuoted << key;
        else out << YAML::Key << key;
        out << YAML::Value;
        emit(out, member);
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      if (value.empty()) out << YAML::Flow;  // [] on the key's line
      out << YAML::BeginSeq;
      for (const auto& element : value) emit(out, element);
      out << YAML::EndSeq;
      break;
    case json::value_t::string: {
      const auto& text = value.get_ref<const std::string&>();
      if (needs_quotes(text)) out << YAML::DoubleQuoted;
      out << text;
      break;
    }
    case json::value_t::boolean:
      out << value.get<bool>();
      break;
    case json::value_t::number_integer:
      out << value.get<std::int64_t>();
      break;
    case json::value_t::number_unsigned:
      out << value.get<std::uint64_t>();
      break;
    case json::value_t::number_float:
      out << value.dump();  // JSON's shortest form, which YAML reads back as the same float
      break;
    default:
      out << YAML::Null;
      break;
  }
}

}  // namespace

OutputFormat parse_output_format(std::string_view name) {
  if (name == "table") return OutputFormat::kTable;
  if (name == "json") return OutputFormat::kJson;
  if (name == "yaml") return OutputFormat::kYaml;
  throw std::invalid_argument("unknown output format '" + std::string(name) + "'");
}

void print_json(std::ostream& out, const json& document) {
  out << document.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

void print_yaml(std::ostream& out, const json& document) {
  YAML::Emitter emitter;
  emitter.SetIndent(2);
  emit(emitter, document);
  out << emitter.c_str() << "\n";
}

void print_document(std::ostream& out, OutputFormat format, const json& document) {
  if (format == OutputFormat::kJson) print_json(out, document);
  else if (format == OutputFormat::kYaml) print_yaml(out, document);
}

std::string local_time(std::int64_t epoch_ms) {
  if (epoch_ms <= 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm local{};
  if (::localtime_r(&seconds, &local) == nullptr) return "-";
  char text[64];
  if (std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local) == 0) return "-";
  const long offset = local.tm_gmtoff;
  const long magnitude = offset < 0 ? -offset : offset;
  char zone[48];
  std::snprintf(zone, sizeof zone, "%c%02ld:%02ld", offset < 0 ? '-' : '+', magnitude / 3600, magnitude % 3600 / 60);
  return std::string(text) + zone;
}

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    auto [code, length] = decode(text, i);
    if (length == 0) {
      ++width;
      ++i;
      continue;
    }
    width += wide(code) ? 2 : 1;
    i += length;
  }
  return width;
}

std::string cell_text(std::string_view text, std::size_t max_width) {
  struct Piece {
    std::string text;
    std::size_t width;
  };
  std::vector<Piece> pieces;
  std::size_t total = 0;
  for (std::size_t i = 0; i < text.size();) {
    auto [code, length] = decode(text, i);
    if (length == 0) {
      pieces.push_back({"?", 1});
      length = 1;
    } else if (code < 0x20 || code == 0x7F || (code >= 0x80 && code < 0xA0)) {
      pieces.push_back({" ", 1});
    } else {
      pieces.push_back({std::string(text.substr(i, length)), wide(code) ? 2u : 1u});
    }
    total += pieces.back().width;
    i += length;
  }
  const bool cut = max_width != 0 && total > max_width;
  std::string cell;
  std::size_t width = 0;
  for (const auto& piece : pieces) {
    if (cut && width + piece.width > max_width - 1) break;  // one column left for the ellipsis
    cell += piece.text;
    width += piece.width;
  }
  if (cut) cell += "\u2026";
  return cell;
}

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> widths(headers_.size());
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  };
  measure(headers_);
  for (const auto& row : rows_) measure(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (std::size_t c = 0; c < row.size(); ++c) {
      text += row[c];
      if (c + 1 < row.size()) text += std::string(widths[c] - display_width(row[c]) + 2, ' ');
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();  // empty last cells
    out << text << "\n";
  };
  line(headers_);
  for (const auto& row : rows_) line(row);
}

void print_fields(std::ostream& out, const std::vector<std::pair<std::string, std::string>>& fields) {
  std::size_t width = 0;
  for (const auto& [name, value] : fields) width = std::max(width, display_width(name) + 1);
  for (const auto& [name, value] : fields) {
    std::string text = name + ":" + std::string(width - display_width(name) - 1 + 2, ' ') + cell_text(value);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  }
}

std::string text_of(const json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    std::string joined;
    for (const auto& element : *it) {
      if (!joined.empty()) joined += ", ";
      joined += element.is_string() ? element.get<std::string>() : element.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    return joined;
  }
  return it->dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string partial_page_note(const json& page, std::size_t shown, const char* what) {
  const auto total = int_of(page, "total", -1);
  if (total < 0 || static_cast<std::uint64_t>(total) <= shown) return {};
  const auto exact = page.find("totalExact");
  const bool lower_bound = exact != page.end() && exact->is_boolean() && !exact->get<bool>();
  return "(" + std::to_string(shown) + " of " + (lower_bound ? "at least " : "") + std::to_string(total) + " " + what +
         " shown; --limit shows up to 1000)\n";
}

std::int64_t int_of(const json& object, const char* key, std::int64_t fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return fallback;
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) return fallback;
  return it->get<std::int64_t>();
}

}  // namespace cronwheel::cli
