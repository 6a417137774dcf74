// cronwheel import xxl-job --mysql URL --zone ZONE [--keep-running] [-o FILE | --dry-run]

#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "cli/api_client.h"
#include "cli/apply_plan.h"
#include "cli/arguments.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/jobs_files.h"
#include "cli/settings.h"
#include "cli/xxl_job/mysql_url.h"
#include "cli/xxl_job/xxl_job_import.h"
#include "common/cron/cron_expression.h"
#include "common/jobs_file/jobs_file.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

// Where the database's password may come from instead of the URL (which `ps` shows to every
// user until the command hides it, and shells keep in their history).
constexpr const char* kPasswordVariable = "CRONWHEEL_MYSQL_PASSWORD";

struct ImportCommandOptions {
  std::string mysql;
  std::string zone;
  bool keep_running = false;
  std::string file;
  bool dry_run = false;
};

std::string percent_encoded(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

// `url` with `password` in it when it has none of its own (the URL's wins, as flags beat the
// environment in every setting).
std::string with_password(const std::string& url, const std::optional<std::string>& password) {
  if (!password || password->empty()) return url;
  const xxl_job::MysqlUrl parsed = xxl_job::parse_mysql_url(url);  // checked by the option already
  if (!parsed.password.empty()) return url;
  const bool ipv6 = parsed.host.find(':') != std::string::npos;
  return "mysql://" + percent_encoded(parsed.user) + ":" + percent_encoded(*password) + "@" +
         (ipv6 ? "[" + parsed.host + "]" : parsed.host) + ":" + std::to_string(parsed.port) + "/" +
         percent_encoded(parsed.database);
}

const CLI::Validator& mysql_url_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        try {
          (void)xxl_job::parse_mysql_url(text);
        } catch (const xxl_job::MysqlUrlError& e) {
          return e.what();  // never repeats the password
        }
        return {};
      },
      "URL", "mysql URL");
  return check;
}

const CLI::Validator& zone_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        if (text.size() <= 64 && common::is_valid_time_zone(text)) return {};
        return "unknown time zone '" + one_line(text, 64) + "' (the XXL-JOB admin's, an IANA name such as Asia/Shanghai)";
      },
      "ZONE", "time zone");
  return check;
}

std::string counted(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string contents_of(const json& document) {
  std::size_t jobs = 0;
  for (const json& group : document.value("groups", json::array())) jobs += group.value("jobs", json::object()).size();
  return counted(document.value("groups", json::array()).size(), "group", "groups") + ", " +
         counted(jobs, "job", "jobs") + ", " + counted(document.value("users", json::array()).size(), "user", "users");
}

bool is_about_users(const std::string& field) { return field == "users" || field.rfind("users[", 0) == 0; }

int import_xxl_job(Context& ctx, const ImportCommandOptions& options) {
  xxl_job::ImportOptions import;
  import.mysql_url = with_password(options.mysql, process_environment()(kPasswordVariable));
  import.zone = options.zone;
  import.keep_running = options.keep_running;
  xxl_job::ImportResult result;
  try {
    result = xxl_job::import_xxl_job(import);
  } catch (const xxl_job::XxlJobImportError& e) {
    throw operation_failed(e.what());
  }
  for (const xxl_job::Finding& finding : result.findings) ctx.err() << one_line(to_string(finding), 4096) << "\n";

  if (!options.file.empty()) {
    write_file_atomically(options.file, common::jobs_file::to_yaml(result.document));
    ctx.err() << "wrote " << contents_of(result.document) << " to " << one_line(options.file, 400)
              << "; apply it with: cronwheel apply -f " << one_line(options.file, 400) << "\n";
    return kExitOk;
  }
  try {
    return report_plan(ctx, post_apply(ctx.api(), result.document, options.dry_run, /*prune=*/false), options.dry_run);
  } catch (const ApiError& e) {
    if (e.http_status() != 400 || !is_about_users(e.field())) throw;
    throw operation_failed("the server does not take users from a jobs file (" + one_line(e.api_message(), 300) +
                           "): nothing was applied. Write the file with -o FILE, remove its users: list, apply "
                           "it with `cronwheel apply -f FILE`, and create the users in the console");
  }
}

}  // namespace

void add_import_commands(CommandLine& command_line) {
  CLI::App* import = command_line.add_group("import", "Import jobs from another scheduler");
  auto options = std::make_shared<ImportCommandOptions>();
  CLI::App* command = command_line.add_command(
      *import, "xxl-job", "Import an XXL-JOB 2.4 installation's groups, jobs and users",
      "Reads XXL-JOB 2.4's tables (xxl_job_group, xxl_job_info, xxl_job_logglue, xxl_job_user)\n"
      "from its MySQL or MariaDB database, in one read-only transaction, and turns them into a\n"
      "jobs file (docs/migrating-from-xxl-job.md says what maps to what). With -o the file is\n"
      "written and nothing is applied; otherwise it is applied to the server at once (all of it or\n"
      "nothing) and the plan is printed as `cronwheel apply` prints it. --dry-run prints the plan\n"
      "without changing anything (exit status 3 when there would be changes).\n\n"
      "Every job is imported stopped unless --keep-running is given, so XXL-JOB and cronwheel never\n"
      "both fire a job. Users are created without a password: they cannot log in until an admin\n"
      "sets one. What could not be imported as it is (a finding) is printed on stderr, one line\n"
      "each; findings are no error.\n\n"
      "ARGUMENTS\n"
      "  --mysql URL  mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE; percent-encode '@', ':', '/'\n"
      "               in the user, password and database (p@ss is p%40ss). The password may\n"
      "               come from CRONWHEEL_MYSQL_PASSWORD instead (the URL's wins); it is never\n"
      "               printed. The connection is TCP without TLS: use a tunnel to reach a\n"
      "               remote database.\n"
      "  --zone ZONE  the XXL-JOB admin JVM's time zone (IANA, e.g. Asia/Shanghai): its cron\n"
      "               expressions' zone\n\n"
      "EXAMPLES\n"
      "  export CRONWHEEL_MYSQL_PASSWORD=...\n"
      "  cronwheel import xxl-job --mysql mysql://xxl_reader@xxl-db:3306/xxl_job --zone Asia/Shanghai \\\n"
      "    -o xxl-jobs.yaml\n"
      "  cronwheel import xxl-job --mysql mysql://xxl_reader@xxl-db/xxl_job --zone Asia/Shanghai --dry-run\n",
      [options](Context& ctx) { return import_xxl_job(ctx, *options); });
  command->add_option("--mysql", options->mysql, "XXL-JOB's database")
      ->type_name("URL")
      ->required()
      ->check(mysql_url_check());
  command->add_option("--zone", options->zone, "The XXL-JOB admin's time zone")
      ->type_name("ZONE")
      ->required()
      ->check(zone_check());
  command->add_flag("--keep-running", options->keep_running, "Jobs running in XXL-JOB are imported running");
  auto* output = command->add_option("-o,--output", options->file, "Write the jobs file here; apply nothing")
                     ->type_name("FILE")
                     ->check(bounded_text_check());
  command->add_flag("--dry-run", options->dry_run, "Print what applying would change; change nothing")
      ->excludes(output);
}

}  // namespace cronwheel::cli
