#pragma once

// Jobs files (docs/jobs-as-code.md): groups with their jobs and workflows, and the business
// calendars they name, as YAML, kept in git and applied
// with `cronwheel apply` or POST /api/v1/apply. The format's one definition: both the CLI
// (which reads the files, with their script files) and the admin (which takes the JSON form,
// or an uploaded YAML file, and writes exports) check documents here, so neither can accept
// what the other refuses.
//
// A document's JSON form is the body of POST /api/v1/apply: the YAML's structure as is, with
// every `scriptFile` replaced by the `glueSource` it names. Checks here are about shape: known
// keys, types, enumeration values, the formats of names and node keys, duplicates, integers'
// signs, a workflow node's `after` naming another node of its workflow, a calendar's dates
// (YYYY-MM-DD or --MM-DD) and times of day (HH:MM[:SS]), a calendarMode only beside a calendar,
// a job's dstGap and dstRepeat other than their defaults (skip, once) only with scheduleType CRON,
// the bounds of a job's retryMultiplier (a number, 1-10), retryMaxInterval (0-2592000 s),
// retryJitter (0-100), maxConcurrent (0-1000) and priority (-1000-1000) and of a group's maxRunning
// (0-10000), and a retryMultiplier and retryMaxInterval other than their defaults (2, 0) only with
// retryBackoff exponential.
// What needs the server (lengths of texts, a cron expression in its zone, whether a child job,
// a node's job or a calendar exists, a workflow graph's cycles and templates, whether a date
// exists, a calendar's zone and the bounds of its lists) is the admin's; its errors name the
// same paths, which locate() turns back into lines.
//
// Every input may be hostile: a document is bounded in bytes (kMaxDocumentBytes), in nodes
// (kMaxNodes, which also stops aliases that would expand without bound) and in depth, before
// and while it is read.

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cronwheel::common::jobs_file {

inline constexpr std::size_t kMaxDocumentBytes = 16 * 1024 * 1024;
inline constexpr std::size_t kMaxNodes = 200'000;  // some 8,000 jobs
// Texts and paths together, aliases expanded: an alias of a long text repeated is bounded too.
inline constexpr std::size_t kMaxExpandedBytes = 4 * kMaxDocumentBytes;
inline constexpr std::size_t kMaxKeyBytes = 200;
inline constexpr int kMaxDepth = 32;
inline constexpr std::string_view kApiVersion = "cronwheel/v1";

// Where a node is: 1-based line and column in a YAML file (0 when not known, as in JSON).
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
};

// What is wrong and where. `path` names the node the way the admin's errors do:
// `groups[billing].jobs[nightly].scheduleType`, `groups[billing].workflows[etl].nodes[load].after[0]`,
// `users[alice].role`, `calendars[cn-holidays].excludedDates[3].date`, `groups[0]` for a group
// without an app name.
struct Problem {
  Location location;
  std::string path;
  std::string message;
};

// "FILE:LINE:COLUMN: PATH: MESSAGE", leaving out what is not known.
std::string to_string(const Problem& problem);

class JobsFileError : public std::runtime_error {
 public:
  explicit JobsFileError(Problem problem);
  const Problem& problem() const noexcept { return problem_; }

 private:
  Problem problem_;
};

// Answers the text of a job's `scriptFile` (as written in the file); throws std::exception with
// the reason when it cannot. An empty function refuses `scriptFile` (an uploaded file has no
// directory to read script files from).
using ScriptReader = std::function<std::string(const std::string& script_file)>;

// A checked document and where each of its nodes came from (by path, as in Problem).
struct ParsedFile {
  nlohmann::json document;
  std::map<std::string, Location> locations;
};

// Parses a YAML jobs file (at most kMaxDocumentBytes) into its JSON form, checked as above.
// Plain scalars that are integers or true/false are read as such; a string field takes any
// scalar as its text. A `~`/`null`/empty value is the same as leaving the key out. `file`
// names the text in problems. Throws JobsFileError.
ParsedFile parse_yaml(std::string_view text, const std::string& file, const ScriptReader& read_script);

// Checks a document's JSON form the same way (strict: a string field takes only a string; a
// `scriptFile` is refused); throws JobsFileError naming the path.
void check_json(const nlohmann::json& document);

// Joins several files' documents (apply -f DIR) into one. A group, or a user, may appear in one
// file only: a second is a JobsFileError naming both files. A calendar may appear in several
// (each group's file carrying the calendars its jobs name) when each describes it the same; it
// is then one calendar of the merged document, where the first file put it. Two different
// descriptions of one calendar are a JobsFileError naming both files.
ParsedFile merge(const std::vector<ParsedFile>& files);

// Where `path` (a Problem's, or the `field` of an admin's error) is in `file`: the node's own
// location, or its nearest enclosing node's; nullopt when none is known.
std::optional<Location> locate(const ParsedFile& file, std::string_view path);

// A checked document as YAML: keys in the format's order, multi-line scripts as literal
// blocks. parse_yaml(to_yaml(d)).document == d for every checked d.
std::string to_yaml(const nlohmann::json& document);

// A job's name (1-100 of a-z 0-9 . _ -, starting with a letter or digit) and a group's app name
// (4-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit): the identities files use.
bool is_job_name(std::string_view name) noexcept;
// A workflow's name: a job name of at most 64 characters.
bool is_workflow_name(std::string_view name) noexcept;
// A calendar's name: a job name of at most 64 characters, as a workflow's.
bool is_calendar_name(std::string_view name) noexcept;
bool is_app_name(std::string_view name) noexcept;

}  // namespace cronwheel::common::jobs_file
