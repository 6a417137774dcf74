#include "cli/bulk_commands.h"

#include <memory>
#include <ostream>
#include <utility>

#include "cli/api_client.h"
#include "cli/command_line.h"
#include "cli/output.h"

namespace cronwheel::cli {

namespace {

int for_each_object(Context& ctx, const std::vector<std::string>& texts, const NamedKind& kind,
                    const BulkCommand& command) {
  ApiClient& api = ctx.api();
  nlohmann::json answers = nlohmann::json::array();
  int failures = 0;
  for (const std::string& text : texts) {
    try {
      const JobRef ref = std::get<JobRef>(kind.parse(text));
      const auto id = kind.resolve(api, ref);
      nlohmann::json answer = command.call(api, id);
      if (ctx.format() == OutputFormat::kTable) {
        ctx.out() << kind.noun << " " << named(ref, id) << " " << command.done;
        if (answer.is_object() && int_of(answer, "triggerNextTime") > 0) {
          ctx.out() << ", next fire " << local_time(int_of(answer, "triggerNextTime"));
        }
        ctx.out() << "\n";
      }
      answers.push_back(answer.is_null() ? nlohmann::json{{"id", id}} : std::move(answer));
    } catch (const CliError& e) {
      ctx.report(text, e);
      ++failures;
      if (e.names_its_subject()) break;  // no answer from the server: the next would say the same
    }
  }
  print_document(ctx.out(), ctx.format(), answers);
  return failures == 0 ? kExitOk : kExitFailed;
}

}  // namespace

void add_bulk_commands(CommandLine& command_line, CLI::App& group, const NamedKind& kind,
                       const std::vector<BulkCommand>& commands) {
  for (const BulkCommand& command : commands) {
    auto texts = std::make_shared<std::vector<std::string>>();
    CLI::App* app = command_line.add_command(group, command.name, command.description, command.help,
                                             [texts, kind, command](Context& ctx) {
                                               return for_each_object(ctx, *texts, kind, command);
                                             });
    app->add_option(kind.argument, *texts, kind.description)->required()->check(kind.check());
  }
}

std::string named(const JobRef& ref, std::int64_t id) {
  return ref.text() + (ref.by_id() ? "" : " (" + std::to_string(id) + ")");
}

}  // namespace cronwheel::cli
