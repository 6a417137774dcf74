// cronwheel apply -f FILE|DIR [-f ...] [--dry-run] [--prune]

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/api_client.h"
#include "cli/arguments.h"
#include "cli/apply_plan.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/jobs_files.h"

namespace cronwheel::cli {

namespace {

namespace jobs_file = common::jobs_file;
using nlohmann::json;

// A problem's line, as compilers write theirs (FILE:LINE:COL: ...), so editors jump to it.
constexpr std::size_t kProblemLineBytes = 2048;

struct ApplyOptions {
  std::vector<std::string> files;
  bool dry_run = false;
  bool prune = false;
};

// Where the server's error `field` is in the files: only inside a group, user or calendar they
// hold, or their calendars list (a path such as `users` or `groups[ops]` for a group they do not
// hold has no line to show).
std::optional<jobs_file::Location> place_in_files(const jobs_file::ParsedFile& parsed, const std::string& field) {
  const auto bracket = field.find(']');
  const std::string held = bracket != std::string::npos ? field.substr(0, bracket + 1)
                           : field == "calendars"       ? field
                                                        : std::string();
  if (held.empty() || parsed.locations.count(held) == 0) return std::nullopt;
  auto location = jobs_file::locate(parsed, field);
  if (!location || location->line == 0) return std::nullopt;
  return location;
}

int apply(Context& ctx, const ApplyOptions& options) {
  jobs_file::ParsedFile parsed;
  try {
    parsed = read_jobs_files(jobs_file_sources(options.files));
  } catch (const jobs_file::JobsFileError& e) {
    ctx.err() << one_line(jobs_file::to_string(e.problem()), kProblemLineBytes) << "\n";
    return kExitFailed;
  }
  json plan;
  try {
    plan = post_apply(ctx.api(), parsed.document, options.dry_run, options.prune);
  } catch (const ApiError& e) {
    const auto location = place_in_files(parsed, e.field());
    if (!location) throw;
    // The server's message starts with the path already.
    ctx.err() << one_line(location->file + ":" + std::to_string(location->line) + ": " + e.api_message(),
                          kProblemLineBytes)
              << "\n";
    return kExitFailed;
  }
  return report_plan(ctx, plan, options.dry_run);
}

}  // namespace

void add_apply_command(CommandLine& command_line) {
  auto options = std::make_shared<ApplyOptions>();
  CLI::App* command = command_line.add_command(
      command_line.app(), "apply", "Make the server's groups and jobs match jobs files",
      "Reads the jobs files (docs/jobs-as-code.md) and makes the server match them, all of it in\n"
      "one transaction or nothing, then prints what changed: a line for each group and job created,\n"
      "updated (with a line for each field that changed: old value → new value) or deleted, and a\n"
      "summary. A job left out of the files is left alone, unless --prune is given: then every job\n"
      "of the files' groups that no file names is deleted. A group's jobs belong in one file.\n\n"
      "A `scriptFile:` is read relative to its YAML file, and must lie inside the directory given\n"
      "with -f (for -f FILE: the file's own directory); each is at most 1 MiB.\n\n"
      "A problem in a file is printed FILE:LINE:COLUMN: KEY PATH: MESSAGE, and so is one the server\n"
      "finds (FILE:LINE: ...); nothing is changed then. -o json and -o yaml print the plan as the\n"
      "API answers it (POST /api/v1/apply).\n\n"
      "With --dry-run nothing changes, and the exit status is 3 when the server differs from the\n"
      "files (0 when it matches them), so a pipeline can check for drift.\n\n"
      "ARGUMENTS\n"
      "  -f FILE|DIR  a jobs file, or a directory whose *.yaml and *.yml files (recursively, sorted,\n"
      "               hidden ones left out) are read; give -f several times for several\n\n"
      "EXAMPLES\n"
      "  cronwheel apply -f jobs/ --dry-run        # what would change; exit status 3 if anything\n"
      "  cronwheel apply -f jobs/                  # apply it\n"
      "  cronwheel apply -f billing.yaml -f reports.yaml --prune\n"
      "  cronwheel export --group billing -o billing.yaml && cronwheel apply -f billing.yaml --dry-run\n",
      [options](Context& ctx) { return apply(ctx, *options); });
  command->add_option("-f,--file", options->files, "A jobs file, or a directory of them")
      ->type_name("FILE|DIR")
      ->required()
      ->check(bounded_text_check());
  command->add_flag("--dry-run", options->dry_run, "Print the plan and change nothing; exit status 3 on changes");
  command->add_flag("--prune", options->prune, "Also delete the jobs of the files' groups that the files leave out");
}

}  // namespace cronwheel::cli
