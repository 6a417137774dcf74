// cronwheel jobs list|get|start|stop|delete|trigger (and backfill: backfills_command.cpp)

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "cli/api_client.h"
#include "cli/arguments.h"
#include "cli/bulk_commands.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/job_ref.h"
#include "cli/list_page.h"
#include "cli/output.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

constexpr std::size_t kDescriptionWidth = 48;
constexpr std::size_t kScheduleWidth = 32;

JobRef job_ref(const std::string& text) { return std::get<JobRef>(parse_job_ref(text)); }

std::string schedule_of(const json& job) {
  const std::string type = text_of(job, "scheduleType");
  if (type.empty() || type == "NONE") return "-";
  const std::string conf = text_of(job, "scheduleConf");
  if (type == "FIX_RATE") return "every " + conf + " s";
  if (type == "FIX_DELAY") return conf + " s after each run";
  return conf;  // CRON
}

std::string status_of(const json& job) {
  if (int_of(job, "triggerStatus") == 1) return "running";
  if (job.is_object() && job.value("pausedWithGroup", false)) return "paused";
  return "stopped";
}

std::string job_label(const json& job, const std::map<std::int64_t, std::string>& apps) {
  return app_slash_name(job, apps);
}

// A number as people write it: 2, 1.5 (the API's retryMultiplier is a JSON number).
std::string number_text(const json& job, const char* key) {
  const auto it = job.is_object() ? job.find(key) : job.end();
  if (it == job.end() || !it->is_number()) return text_of(job, key);
  const double value = it->get<double>();
  if (value == static_cast<double>(static_cast<std::int64_t>(value))) return std::to_string(static_cast<std::int64_t>(value));
  return it->dump();
}

// "2, 30 s apart"; "3, 30 s then 2 times longer each, at most 600 s, up to 10% sooner": how a
// failed run is retried (docs/scheduling.md, "Retries with back-off").
std::string retries_of(const json& job) {
  std::string text = std::to_string(int_of(job, "executorFailRetryCount")) + ", " + std::to_string(int_of(job, "retryInterval")) + " s";
  if (text_of(job, "retryBackoff") == "EXPONENTIAL") {
    text += " then " + number_text(job, "retryMultiplier") + " times longer each";
    if (int_of(job, "retryMaxInterval") > 0) text += ", at most " + std::to_string(int_of(job, "retryMaxInterval")) + " s";
  } else {
    text += " apart";
  }
  if (int_of(job, "retryJitter") > 0) text += ", up to " + std::to_string(int_of(job, "retryJitter")) + "% sooner";
  return text;
}

// "at most 2 at once", or "no limit" (the job's own limit; its group may have one too).
std::string concurrency_of(const json& job) {
  const auto limit = int_of(job, "maxConcurrent");
  return limit > 0 ? "at most " + std::to_string(limit) + " at once" : "no limit";
}

// ---- jobs list

struct JobListOptions {
  std::string group;
  std::string status;
  std::string search;
  int limit = kDefaultListLimit;
};

int list_jobs(Context& ctx, const JobListOptions& options) {
  QueryParameters filters;
  if (!options.group.empty()) filters.emplace_back("appName", options.group);
  if (options.status == "running") filters.emplace_back("triggerStatus", "1");
  if (options.status == "stopped") filters.emplace_back("triggerStatus", "0");
  if (!options.search.empty()) filters.emplace_back("text", options.search);
  ListTable table;
  table.plural = "jobs";
  table.headers = {"JOB", "STATUS", "SCHEDULE", "NEXT FIRE", "DESCRIPTION"};
  table.app_names = true;
  table.known_app_name = options.group;
  table.row = [](const json& job, const AppNames& apps) -> std::vector<std::string> {
    return {cell_text(job_label(job, apps)),
            status_of(job),
            cell_text(schedule_of(job), kScheduleWidth),
            local_time(int_of(job, "triggerNextTime")),
            cell_text(text_of(job, "jobDesc"), kDescriptionWidth)};
  };
  return print_list_page(ctx, "jobs", std::move(filters), options.limit, table);
}

// ---- jobs get

int get_job(Context& ctx, const std::string& text) {
  return ctx.about(text, [&] {
    ApiClient& api = ctx.api();
    const auto id = resolve_job(api, job_ref(text));
    const json job = api.get("jobs/" + std::to_string(id));
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), job);
      return kExitOk;
    }
    const auto apps = group_app_names(api, json::array({job}));
    const std::string glue = text_of(job, "glueType");
    std::vector<std::pair<std::string, std::string>> fields{
        {"ID", std::to_string(int_member(job, "id"))},
        {"Job", job_label(job, apps)},
        {"Description", text_of(job, "jobDesc")},
        {"Author", text_of(job, "author")},
        {"Status", status_of(job)},
        {"Schedule", text_of(job, "scheduleType") + (schedule_of(job) == "-" ? "" : " " + text_of(job, "scheduleConf"))},
        {"Time zone", text_of(job, "timezone")},
        {"Next fire", local_time(int_of(job, "triggerNextTime"))},
        {"Last fire", local_time(int_of(job, "triggerLastTime"))},
        {"Misfire", text_of(job, "misfireStrategy")},
        {"Route", text_of(job, "executorRouteStrategy")},
        {"Block", text_of(job, "executorBlockStrategy")},
        {glue == "BEAN" ? "Handler" : "Script", glue == "BEAN" ? text_of(job, "executorHandler")
                                                               : glue + " (" + text_of(job, "glueRemark") + ")"},
        {"Parameters", text_of(job, "executorParam")},
        {"Timeout", std::to_string(int_of(job, "executorTimeout")) + " s"},
        {"Retries", retries_of(job)},
        {"Concurrency", concurrency_of(job)},
        {"Priority", std::to_string(int_of(job, "priority"))},
        {"Child jobs", text_of(job, "childJobId")},
        {"Alarm e-mail", text_of(job, "alarmEmail")},
        {"Updated", local_time(int_of(job, "updatedAt"))},
    };
    print_fields(ctx.out(), fields);
    return kExitOk;
  });
}

// ---- jobs trigger

struct TriggerOptions {
  std::string job;
  std::string param;
  CLI::Option* param_option = nullptr;
};

int trigger_job(Context& ctx, const TriggerOptions& options) {
  return ctx.about(options.job, [&] {
    ApiClient& api = ctx.api();
    const JobRef ref = job_ref(options.job);
    const auto id = resolve_job(api, ref);
    json body = json::object();
    if (options.param_option->count() > 0) body["executorParam"] = options.param;
    const json run = api.post("jobs/" + std::to_string(id) + "/trigger", body);
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), run);
      return kExitOk;
    }
    ctx.out() << "job " << named(ref, id) << " triggered: run " << int_member(run, "id") << "\n";
    return kExitOk;
  });
}

}  // namespace

void add_jobs_commands(CommandLine& command_line) {
  CLI::App* jobs = command_line.add_group("jobs", "List, inspect, start, stop, trigger and delete jobs");

  {
    auto options = std::make_shared<JobListOptions>();
    CLI::App* list = command_line.add_command(
        *jobs, "list", "List jobs, newest first",
        "Lists the jobs you may see: their id, APP/NAME (the group's app name and the job's name),\n"
        "status (running, stopped, or paused with its group), schedule, next fire time (local\n"
        "time) and description. -o json and -o yaml print the API's page as answered.\n\n"
        "EXAMPLES\n"
        "  cronwheel jobs list\n"
        "  cronwheel jobs list --group billing --status running\n"
        "  cronwheel jobs list --search invoice --limit 100 -o json\n",
        [options](Context& ctx) { return list_jobs(ctx, *options); });
    add_group_option(*list, options->group, "the jobs");
    list->add_option("--status", options->status, "Only running or only stopped jobs")
        ->type_name("STATUS")
        ->check(CLI::IsMember({"running", "stopped"}));
    list->add_option("--search", options->search, "Text in the name, description, handler or author")
        ->type_name("TEXT")
        ->check(bounded_text_check());
    add_limit_option(*list, options->limit, "jobs");
  }

  {
    auto job = std::make_shared<std::string>();
    CLI::App* get = command_line.add_command(
        *jobs, "get", "Show one job",
        "Shows every setting of the job. -o json and -o yaml print the job as the API answers it.\n\n"
        "ARGUMENTS\n"
        "  JOB  the job's numeric id, or APP/NAME: its group's app name and its name\n\n"
        "EXAMPLES\n"
        "  cronwheel jobs get 42\n"
        "  cronwheel jobs get billing/nightly-invoices -o yaml\n",
        [job](Context& ctx) { return get_job(ctx, *job); });
    get->add_option("JOB", *job, "The job: its id or APP/NAME")->required()->check(job_ref_check());
  }

  const NamedKind kJob{"job", "JOB", "Jobs: ids or APP/NAME", job_ref_check, parse_job_ref, resolve_job};
  add_bulk_commands(command_line, *jobs, kJob, {
      {"start", "Start scheduling jobs",
       "Starts each job: it fires from its schedule's first time after now + 5 s. A job that\n"
       "runs already stays as it is. Each job is its own call; a line is printed for each, and\n"
       "the jobs after a failed one are still started.\n\n"
       "ARGUMENTS\n"
       "  JOB...  jobs, each its numeric id or APP/NAME\n\n"
       "EXAMPLES\n"
       "  cronwheel jobs start billing/nightly-invoices billing/reconcile\n"
       "  cronwheel jobs start 42 43 44\n\n"
       "A job that could not be started makes the exit status 1, after every job was tried.\n",
       "started", [](ApiClient& api, std::int64_t id) { return api.post("jobs/" + std::to_string(id) + "/start"); }},
      {"stop", "Stop scheduling jobs",
       "Stops each job: it fires no more until started again (runs under way go on). Each job\n"
       "is its own call; a line is printed for each, and the jobs after a failed one are still\n"
       "stopped.\n\n"
       "ARGUMENTS\n"
       "  JOB...  jobs, each its numeric id or APP/NAME\n\n"
       "EXAMPLES\n"
       "  cronwheel jobs stop billing/nightly-invoices\n\n"
       "A job that could not be stopped makes the exit status 1, after every job was tried.\n",
       "stopped", [](ApiClient& api, std::int64_t id) { return api.post("jobs/" + std::to_string(id) + "/stop"); }},
      {"delete", "Delete jobs, with their runs and script history",
       "Deletes each job with its runs' records and its script versions; this cannot be undone.\n"
       "Each job is its own call; a line is printed for each, and the jobs after a failed one\n"
       "are still deleted.\n\n"
       "ARGUMENTS\n"
       "  JOB...  jobs, each its numeric id or APP/NAME\n\n"
       "EXAMPLES\n"
       "  cronwheel jobs delete billing/old-report 57\n\n"
       "A job that could not be deleted makes the exit status 1, after every job was tried.\n",
       "deleted", [](ApiClient& api, std::int64_t id) { return api.remove("jobs/" + std::to_string(id)); }},
  });

  {
    auto options = std::make_shared<TriggerOptions>();
    CLI::App* trigger = command_line.add_command(
        *jobs, "trigger", "Fire a job once, now",
        "Asks for one run of the job now, whatever its status, and prints the run's id (follow\n"
        "its log with `cronwheel runs logs -f ID`). --param gives this run its parameters instead\n"
        "of the job's own.\n\n"
        "ARGUMENTS\n"
        "  JOB  the job's numeric id, or APP/NAME\n\n"
        "EXAMPLES\n"
        "  cronwheel jobs trigger billing/nightly-invoices\n"
        "  cronwheel jobs trigger 42 --param 'region=eu'\n",
        [options](Context& ctx) { return trigger_job(ctx, *options); });
    trigger->add_option("JOB", options->job, "The job: its id or APP/NAME")->required()->check(job_ref_check());
    options->param_option = trigger->add_option("--param", options->param, "Parameters for this run")
                                ->type_name("P")
                                ->check(bounded_text_check());
  }

  add_jobs_backfill_command(command_line, *jobs);
}

}  // namespace cronwheel::cli
