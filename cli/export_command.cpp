// cronwheel export [--group APP]... [-o FILE]

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/api_client.h"
#include "cli/arguments.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/jobs_files.h"
#include "common/jobs_file/jobs_file.h"

namespace cronwheel::cli {

namespace {

namespace jobs_file = common::jobs_file;

struct ExportOptions {
  std::vector<std::string> groups;
  std::string file;
};

int export_jobs(Context& ctx, const ExportOptions& options) {
  std::string names;
  for (const std::string& group : options.groups) names += (names.empty() ? "" : ",") + group;
  ApiRequest request;
  request.target = "export" + (names.empty() ? std::string() : query_string({{"appName", names}}));
  request.accept = "application/yaml";
  const ApiAnswer answer = ctx.api().request(std::move(request));
  // Only a jobs file is written (not a proxy's page): what apply would read back.
  jobs_file::ParsedFile exported;
  try {
    exported = jobs_file::parse_yaml(answer.body, "the export", {});
  } catch (const jobs_file::JobsFileError& e) {
    throw unexpected_answer("not a jobs file: " + jobs_file::to_string(e.problem()));
  }
  if (options.file.empty()) {
    ctx.out() << answer.body;
    return kExitOk;
  }
  write_file_atomically(options.file, answer.body);
  std::size_t groups = 0, jobs = 0;
  for (const auto& group : exported.document.value("groups", nlohmann::json::array())) {
    ++groups;
    jobs += group.value("jobs", nlohmann::json::object()).size();
  }
  ctx.err() << "exported " << groups << (groups == 1 ? " group, " : " groups, ") << jobs << (jobs == 1 ? " job" : " jobs")
            << " to " << one_line(options.file, 400) << "\n";
  return kExitOk;
}

}  // namespace

void add_export_command(CommandLine& command_line) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* command = command_line.add_command(
      command_line.app(), "export", "Write groups and their jobs as one jobs file",
      "Writes the groups you may see, or those named with --group, and all their jobs (scripts\n"
      "inline) as one YAML jobs file (docs/jobs-as-code.md), to stdout or to FILE. Applying what\n"
      "export wrote changes nothing: `cronwheel apply -f FILE --dry-run` exits 0. A FILE is\n"
      "replaced whole (written beside it, then renamed), so a failure leaves it as it was.\n"
      "A group's executor access token is never exported.\n\n"
      "EXAMPLES\n"
      "  cronwheel export > all-jobs.yaml\n"
      "  cronwheel export --group billing --group reports -o jobs/billing-and-reports.yaml\n",
      [options](Context& ctx) { return export_jobs(ctx, *options); });
  command->add_option("--group", options->groups, "Only this group (by app name); give it several times for several")
      ->type_name("APP")
      ->check(app_name_check());
  command->add_option("-o,--output", options->file, "Write the file here instead of stdout")
      ->type_name("FILE")
      ->check(bounded_text_check());
}

}  // namespace cronwheel::cli
