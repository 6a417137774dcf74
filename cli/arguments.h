#pragma once

// Checks of the command line's arguments, run by CLI11 while it parses, so that a bad value is a
// usage error (exit status 2) before anything is sent.

#include <CLI/CLI.hpp>

namespace cronwheel::cli {

// A job: its numeric id or APP/NAME (job_ref.h says exactly what is accepted).
const CLI::Validator& job_ref_check();
// A workflow: its numeric id or APP/NAME, as jobs are.
const CLI::Validator& workflow_ref_check();
// A workflow's name (as job names are).
const CLI::Validator& workflow_name_check();
// A workflow's input, NAME=VALUE (workflow_inputs.h).
const CLI::Validator& param_assignment_check();
// A workflow node's key.
const CLI::Validator& node_key_check();
// A calendar: its name (as jobs files name it) or its numeric id; an id is a name too, of digits.
const CLI::Validator& calendar_ref_check();
// An import's source name (calendars import --source): as calendars' names are.
const CLI::Validator& import_source_check();
// A group's app name.
const CLI::Validator& app_name_check();
// A numeric id (runs).
const CLI::Validator& id_check();
// An instant: ISO-8601 with its UTC offset, or epoch milliseconds (instant.h).
const CLI::Validator& instant_check();
// Any text, at most 64 KiB (a job's parameters are at most that).
const CLI::Validator& bounded_text_check();

}  // namespace cronwheel::cli
