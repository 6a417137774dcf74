#pragma once

// What `cronwheel` prints: tables for people (the default), the API's objects as JSON or YAML
// for scripts (-o json, -o yaml).

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace cronwheel::cli {

enum class OutputFormat { kTable, kJson, kYaml };

// "table", "json", "yaml"; throws std::invalid_argument for anything else.
OutputFormat parse_output_format(std::string_view name);

// `document` as JSON (indented by 2, one document, a newline after it) or as YAML (one
// document: mappings and sequences in block style, strings quoted where YAML would read them
// as something else, so a YAML reader gets back exactly the JSON's values).
void print_json(std::ostream& out, const nlohmann::json& document);
void print_yaml(std::ostream& out, const nlohmann::json& document);
// print_json or print_yaml; nothing for kTable (the command prints its own table).
void print_document(std::ostream& out, OutputFormat format, const nlohmann::json& document);

// An instant (epoch milliseconds) as local ISO-8601 with the UTC offset, to the second:
// "2026-05-01T14:30:00+02:00" (the zone is the process's: TZ, else /etc/localtime). "-" for 0
// and negative values (the API's "never").
std::string local_time(std::int64_t epoch_ms);

// How many terminal columns `text` (UTF-8) takes: East Asian wide characters count 2, an
// invalid byte 1.
std::size_t display_width(std::string_view text);

// `text` fit for a table cell: control characters become spaces, invalid UTF-8 becomes '?', and
// text wider than `max_width` columns is cut with "…" (0: never cut).
std::string cell_text(std::string_view text, std::size_t max_width = 0);

// A table: a header line, then one line per row, columns separated by two spaces and padded to
// the widest cell (by display width); the last column is not padded, so no line ends in spaces.
// Cells are printed as given: pass them through cell_text.
class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  void add_row(std::vector<std::string> cells);  // fewer cells than headers: the rest empty
  void print(std::ostream& out) const;
  std::size_t rows() const noexcept { return rows_.size(); }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// "Name:  value" lines with the values aligned, for one object (`jobs get`). Values are cell_text
// of the given text.
void print_fields(std::ostream& out, const std::vector<std::pair<std::string, std::string>>& fields);

// Lenient reading for display: the member as text ("" when missing or null; numbers and booleans
// as JSON writes them; lists joined with ", "), or as an integer (`fallback` when missing or not
// an integer).
std::string text_of(const nlohmann::json& object, const char* key);
// The note a list prints on stderr when its page holds fewer than the `total` matches: "(20 of 57
// jobs shown; --limit shows up to 1000)\n", "at least 10000" when the total is a lower bound
// (totalExact false); "" when the page holds them all. `what` is the objects' plural.
std::string partial_page_note(const nlohmann::json& page, std::size_t shown, const char* what);
std::int64_t int_of(const nlohmann::json& object, const char* key, std::int64_t fallback = 0);

}  // namespace cronwheel::cli
