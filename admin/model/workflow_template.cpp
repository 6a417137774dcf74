#include "admin/model/workflow_template.h"

#include <cctype>
#include <optional>

#include "admin/model/workflow.h"
#include "common/protocol/json_reader.h"

namespace cronwheel::admin {
namespace {

bool is_segment_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

std::vector<std::string> split_path(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = text.find('.', start);
    out.emplace_back(text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

// Reads what is between ${ and }; sets `error` when it is not a reference.
std::optional<TemplateRef> read_ref(std::string_view inner, std::string& error) {
  TemplateRef ref;
  ref.text = std::string(inner);
  const std::vector<std::string> parts = split_path(inner);
  for (const auto& p : parts) {
    if (p.empty()) {
      error = "\"${" + ref.text + "}\" has an empty name between dots";
      return std::nullopt;
    }
    for (char c : p) {
      if (!is_segment_char(c)) {
        error = "\"${" + ref.text + "}\" may hold only letters, digits, '_', '-' and dots";
        return std::nullopt;
      }
    }
  }
  if (parts[0] == "params") {
    if (parts.size() != 2) {
      error = "\"${" + ref.text + "}\": a parameter is written ${params.NAME}";
      return std::nullopt;
    }
    ref.kind = TemplateRef::Kind::kParam;
    ref.name = parts[1];
    return ref;
  }
  if (parts[0] == "nodes") {
    if (parts.size() < 3 || parts[2] != "output") {
      error = "\"${" + ref.text + "}\": a node's output is written ${nodes.KEY.output} or ${nodes.KEY.output.FIELD}";
      return std::nullopt;
    }
    ref.kind = TemplateRef::Kind::kNodeOutput;
    ref.name = parts[1];
    ref.path.assign(parts.begin() + 3, parts.end());
    return ref;
  }
  error = "\"${" + ref.text + "}\" names neither params nor nodes";
  return std::nullopt;
}

std::string as_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

ParsedTemplate parse_template(std::string_view text) {
  ParsedTemplate out;
  if (text.size() > kMaxTemplateBytes) {
    out.error = "longer than " + std::to_string(kMaxTemplateBytes) + " bytes";
    return out;
  }
  std::string literal;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "$${") == 0) {
      literal += "${";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "${") == 0) {
      const std::size_t close = text.find('}', i + 2);
      if (close == std::string_view::npos) {
        out.error = "\"${\" at offset " + std::to_string(i) + " is not closed by \"}\"";
        return out;
      }
      std::string error;
      auto ref = read_ref(text.substr(i + 2, close - i - 2), error);
      if (!ref) {
        out.error = error + " (offset " + std::to_string(i) + ")";
        return out;
      }
      out.literals.push_back(std::move(literal));
      literal.clear();
      out.refs.push_back(std::move(*ref));
      i = close + 1;
      continue;
    }
    literal += text[i++];
  }
  out.literals.push_back(std::move(literal));
  return out;
}

Rendered render_template(const ParsedTemplate& parsed, const nlohmann::json& params,
                         const std::map<std::string, nlohmann::json, std::less<>>& outputs) {
  Rendered out;
  if (!parsed.ok()) {
    out.error = parsed.error;
    return out;
  }
  out.text = parsed.literals.front();
  for (std::size_t i = 0; i < parsed.refs.size(); ++i) {
    const TemplateRef& ref = parsed.refs[i];
    const std::string where = "${" + ref.text + "}: ";
    if (ref.kind == TemplateRef::Kind::kParam) {
      if (!params.is_object() || !params.contains(ref.name)) {
        out = {"", where + "the run has no parameter \"" + ref.name + "\""};
        return out;
      }
      out.text += as_text(params.at(ref.name));
    } else {
      auto found = outputs.find(ref.name);
      if (found == outputs.end()) {
        out = {"", where + "node " + ref.name + " has no output"};
        return out;
      }
      const nlohmann::json* value = &found->second;
      std::string walked = "output";
      for (const std::string& field : ref.path) {
        if (value->is_object()) {
          auto it = value->find(field);
          if (it == value->end()) {
            out = {"", where + "the " + walked + " of node " + ref.name + " has no field \"" + field + "\""};
            return out;
          }
          value = &*it;
        } else if (value->is_array()) {
          std::size_t index = 0;
          bool digits = !field.empty() && field.size() <= 9;
          for (char c : field) digits = digits && std::isdigit(static_cast<unsigned char>(c)) != 0;
          if (digits) index = std::stoul(field);
          if (!digits || index >= value->size()) {
            out = {"", where + "the " + walked + " of node " + ref.name + " is a list of " +
                           std::to_string(value->size()) + " with no item \"" + field + "\""};
            return out;
          }
          value = &(*value)[index];
        } else {
          out = {"", where + "the " + walked + " of node " + ref.name + " is " +
                         (value->is_string() ? "a string" : "not an object") + ", so it has no field \"" + field + "\""};
          return out;
        }
        walked += "." + field;
      }
      out.text += as_text(*value);
    }
    out.text += parsed.literals[i + 1];
  }
  return out;
}

namespace {
// JSON of a node's output, bounded like a message body; nullopt when it is not such JSON.
std::optional<nlohmann::json> bounded_json(const std::string& text) {
  if (text.size() > kMaxNodeOutputBytes) return std::nullopt;
  try {
    return common::protocol::parse_json(text, common::protocol::JsonLimits{});
  } catch (const std::exception&) {
    return std::nullopt;
  }
}
}  // namespace

nlohmann::json node_output_value(const std::optional<std::string>& output, const std::string& handle_msg) {
  if (output) {
    if (auto parsed = bounded_json(*output)) return std::move(*parsed);
    return *output;
  }
  // A message that holds a JSON object or array is structured output; anything else is text.
  std::size_t first = handle_msg.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (handle_msg[first] == '{' || handle_msg[first] == '[')) {
    if (auto parsed = bounded_json(handle_msg)) return std::move(*parsed);
  }
  return handle_msg;
}

}  // namespace cronwheel::admin
