#include "cli/arguments.h"

#include <string>
#include <variant>

#include "cli/cli_error.h"
#include "cli/instant.h"
#include "cli/job_ref.h"
#include "cli/workflow_inputs.h"
#include "common/jobs_file/jobs_file.h"

namespace cronwheel::cli {

namespace {

constexpr std::size_t kMaxTextBytes = 65536;

}  // namespace

const CLI::Validator& job_ref_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        auto ref = parse_job_ref(text);
        if (auto* why = std::get_if<std::string>(&ref)) return "'" + text + "': " + *why;
        return {};
      },
      "JOB", "job");
  return check;
}

const CLI::Validator& workflow_ref_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        auto ref = parse_workflow_ref(text);
        if (auto* why = std::get_if<std::string>(&ref)) return "'" + text + "': " + *why;
        return {};
      },
      "WF", "workflow");
  return check;
}

const CLI::Validator& workflow_name_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        if (auto why = workflow_name_problem(text)) return "'" + text + "': " + *why;
        return {};
      },
      "NAME", "workflow name");
  return check;
}

const CLI::Validator& param_assignment_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        if (text.size() > kMaxTextBytes) return "longer than 65536 bytes";
        auto parsed = parse_param_assignment(text);
        if (auto* why = std::get_if<std::string>(&parsed)) return "'" + text + "': " + *why;
        return {};
      },
      "NAME=VALUE", "workflow input");
  return check;
}

const CLI::Validator& node_key_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        if (auto why = workflow_key_problem(text, "node key")) return "'" + text + "': " + *why;
        return {};
      },
      "NODE", "node key");
  return check;
}

const CLI::Validator& calendar_ref_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        if (common::jobs_file::is_calendar_name(text)) return {};
        return "'" + one_line(text, 80) + "': a calendar is its name (1-64 of a-z, 0-9, '.', '_' and '-', starting with a "
               "letter or digit) or its numeric id";
      },
      "CAL", "calendar");
  return check;
}

const CLI::Validator& import_source_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        if (common::jobs_file::is_calendar_name(text)) return {};
        return "'" + one_line(text, 80) + "': a source is 1-64 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit";
      },
      "S", "import source");
  return check;
}

const CLI::Validator& app_name_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        if (auto why = app_name_problem(text)) return "'" + text + "': " + *why;
        return {};
      },
      "APP", "app name");
  return check;
}

const CLI::Validator& id_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        auto id = parse_id(text);
        if (auto* why = std::get_if<std::string>(&id)) return "'" + text + "': " + *why;
        return {};
      },
      "ID", "id");
  return check;
}

const CLI::Validator& instant_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        auto instant = parse_instant(text);
        if (auto* why = std::get_if<std::string>(&instant)) return "'" + one_line(text, 80) + "': " + *why;
        return {};
      },
      "TIME", "instant");
  return check;
}

const CLI::Validator& bounded_text_check() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        return text.size() > kMaxTextBytes ? "longer than 65536 bytes" : std::string();
      },
      "", "bounded text");
  return check;
}

}  // namespace cronwheel::cli
