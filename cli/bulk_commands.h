#pragma once

// What `jobs start|stop|delete` and `workflows start|stop|delete` share: a command that acts on
// each of the objects named on its command line, one call to the API each, every one tried.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/job_ref.h"

namespace cronwheel::cli {

class ApiClient;
class CommandLine;

// How the objects of one kind are named on the command line (an id or APP/NAME, job_ref.h) and
// found.
struct NamedKind {
  const char* noun;         // "job": what each line starts with
  const char* argument;     // "JOB": the positional argument's name in --help
  const char* description;  // "Jobs: ids or APP/NAME"
  const CLI::Validator& (*check)();
  std::variant<JobRef, std::string> (*parse)(std::string_view text);
  std::int64_t (*resolve)(ApiClient& api, const JobRef& ref);
};

// One bulk command: `call` acts on the object with the id; its answer (null for none) is what -o
// json prints for it.
struct BulkCommand {
  const char* name;         // "start"
  const char* description;  // "Start scheduling jobs"
  const char* help;         // ARGUMENTS, EXAMPLES, ...
  const char* done;         // "started": "job billing/nightly (7) started"
  std::function<nlohmann::json(ApiClient& api, std::int64_t id)> call;
};

// Adds each of `commands` under `group`, taking one or more objects of `kind`. Each object is
// resolved and acted on in its own calls, in the order given; as a table, a line each ("job 7
// started", ", next fire TIME" when the answer has a triggerNextTime); with -o json or -o yaml,
// the list of the answers (an object {"id": ID} for an empty one). A failed object is said on
// stderr and the next ones are still tried, unless no answer came from the server (the next would
// only say the same); any failure makes the exit status 1.
void add_bulk_commands(CommandLine& command_line, CLI::App& group, const NamedKind& kind,
                       const std::vector<BulkCommand>& commands);

// "billing/etl (12)" for an object named APP/NAME, "12" for one named by its id: what the command
// was given, and the id.
std::string named(const JobRef& ref, std::int64_t id);

}  // namespace cronwheel::cli
