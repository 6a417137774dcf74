// cronwheel version

#include <ostream>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/version.h"

namespace cronwheel::cli {

void add_version_command(CommandLine& command_line) {
  command_line.add_command(command_line.app(), "version", "Print the client's version",
                           "Prints this program's version; it calls no server.\n\n"
                           "EXAMPLES\n"
                           "  cronwheel version\n"
                           "  cronwheel version -o json\n",
                           [](Context& ctx) {
                             if (ctx.format() == OutputFormat::kTable) ctx.out() << "cronwheel " << kVersion << "\n";
                             else print_document(ctx.out(), ctx.format(), {{"client", kVersion}});
                             return static_cast<int>(kExitOk);
                           });
}

}  // namespace cronwheel::cli
