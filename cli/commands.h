#pragma once

// The commands of `cronwheel`, one file each; each function adds its commands to the command
// line (command_line.h), and main.cpp calls every one of them in the order --help lists them.

namespace CLI {
class App;
}

namespace cronwheel::cli {

class CommandLine;

void add_jobs_commands(CommandLine& command_line);           // jobs_command.cpp
// `jobs backfill`, under the jobs group (add_jobs_commands calls it): backfills_command.cpp.
void add_jobs_backfill_command(CommandLine& command_line, CLI::App& jobs);
void add_groups_commands(CommandLine& command_line);         // groups_command.cpp
void add_runs_commands(CommandLine& command_line);           // runs_command.cpp
void add_backfills_commands(CommandLine& command_line);      // backfills_command.cpp
void add_workflows_commands(CommandLine& command_line);      // workflows_command.cpp
// `workflows backfill`, under the workflows group (add_workflows_commands calls it):
// backfills_command.cpp.
void add_workflows_backfill_command(CommandLine& command_line, CLI::App& workflows);
void add_workflow_runs_commands(CommandLine& command_line);  // workflow_runs_command.cpp
void add_calendars_commands(CommandLine& command_line);      // calendars_command.cpp
void add_export_command(CommandLine& command_line);          // export_command.cpp
void add_apply_command(CommandLine& command_line);           // apply_command.cpp
void add_import_commands(CommandLine& command_line);         // import_command.cpp
void add_version_command(CommandLine& command_line);         // version_command.cpp

}  // namespace cronwheel::cli
