// openapi.yaml against the REST API as built: the route table of RestApi (every route module)
// and the JSON form of the records. The document is the contract of the console and of
// automation, so a route added without documentation, an operation documented but not routed,
// a wrong access level or a response schema that lost a field fails here.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "admin/api/rest_api.h"
#include "admin/model/backfill.h"
#include "admin/model/calendar_json.h"
#include "admin/model/record_json.h"
#include "common/http/http_server.h"
#include "tests/support/fake_alarm_store.h"
#include "tests/support/fake_backfill_store.h"
#include "tests/support/fake_calendar_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::admin {
namespace {

const std::set<std::string> kMethods{"get", "post", "put", "delete", "patch", "head", "options"};

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string access_name(Access access) {
  switch (access) {
    case Access::kPublic:
      return "public";
    case Access::kUser:
      return "user";
    case Access::kAdmin:
      return "admin";
  }
  return "?";
}

class OpenApiDocument : public ::testing::Test {
 protected:
  struct Operation {
    YAML::Node node;
    YAML::Node path_item;
  };

  void SetUp() override {
    doc_ = YAML::LoadFile(std::string(CRONWHEEL_SOURCE_DIR) + "/openapi.yaml");
    for (const auto& path : doc_["paths"]) {
      auto name = path.first.as<std::string>();
      for (const auto& item : path.second) {
        auto method = item.first.as<std::string>();
        if (kMethods.count(method) == 0) continue;
        documented_[upper(method) + " " + name.substr(1)] = {item.second, path.second};
      }
    }

    RestApi::Options options;
    options.passwords.strength = PasswordHasher::Strength::kMinimum;
    options.alarm_channels.store = &alarm_store_;
    options.jobs_files.store = &apply_store_;
    options.workflows.store = &workflow_store_;
    options.calendars.store = &calendar_store_;
    options.backfills.store = &backfill_store_;
    api_ = std::make_unique<RestApi>(server_, fake_.stores(), clock_, options);
    for (const auto& route : api_->router().routes()) routed_[route.method + " " + route.path] = route;
  }

  // Follows a local "$ref" ("#/components/parameters/Id") to the node it names; an undefined
  // node when it names nothing. (Lookups go through const nodes: yaml-cpp's non-const
  // operator[] and assignment can change the document.)
  YAML::Node resolve(const YAML::Node& node) const {
    if (!node.IsMap() || !node["$ref"]) return node;
    auto ref = node["$ref"].as<std::string>();
    if (ref.rfind("#/", 0) != 0) return YAML::Node(YAML::NodeType::Undefined);
    std::vector<std::string> parts;
    for (std::size_t start = 2; start <= ref.size();) {
      auto slash = std::min(ref.find('/', start), ref.size());
      parts.push_back(ref.substr(start, slash - start));
      start = slash + 1;
    }
    return descend(doc_, parts, 0);
  }

  static YAML::Node descend(const YAML::Node& at, const std::vector<std::string>& parts, std::size_t i) {
    if (i == parts.size()) return at;
    const YAML::Node child = at[parts[i]];
    if (!child.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
    return descend(child, parts, i + 1);
  }

  std::set<std::string> property_names(const std::string& schema) const {
    std::set<std::string> names;
    for (const auto& p : doc_["components"]["schemas"][schema]["properties"]) names.insert(p.first.as<std::string>());
    return names;
  }

  YAML::Node doc_;
  std::map<std::string, Operation> documented_;
  testing::FakeClock clock_;
  testing::FakeStores fake_{clock_};
  testing::FakeAlarmStore alarm_store_;
  // The route table is all this suite reads: the store is never called.
  struct UnusedApplyStore final : ApplyStore {
    ApplyOutcome apply(const std::vector<std::string>&, const std::function<ApplyPlan(const JobsSnapshot&)>&, bool,
                       const Actor&) override {
      throw std::logic_error("not used by the route table check");
    }
    JobsSnapshot snapshot(const std::vector<std::string>&) override { throw std::logic_error("not used"); }
  } apply_store_;
  struct UnusedWorkflowStore final : WorkflowStore {
    [[noreturn]] static void unused() { throw std::logic_error("not used by the route table check"); }
    Page<Workflow> list(const Filter&) override { unused(); }
    std::optional<Workflow> get(std::int64_t) override { unused(); }
    Workflow create(const Workflow&, const Actor&) override { unused(); }
    Workflow update(const Workflow&, int, std::int64_t, const Actor&) override { unused(); }
    void remove(std::int64_t, const Actor&) override { unused(); }
    Workflow set_status(std::int64_t, int, std::int64_t, const Actor&) override { unused(); }
    Changed trigger(const TriggerRequest&) override { unused(); }
    Changed scan(std::string_view, std::int64_t, std::int64_t, int, const Decide&) override { unused(); }
    Page<WorkflowRun> list_runs(const RunFilter&) override { unused(); }
    std::optional<RunDetail> get_run(std::int64_t) override { unused(); }
    RunChange cancel(std::int64_t, std::int64_t, std::string_view, const Actor&) override { unused(); }
    RunChange rerun(std::int64_t, std::string_view, std::int64_t, std::string_view, const Actor&) override { unused(); }
    Changed time_out(std::int64_t, std::string_view, int) override { unused(); }
    std::vector<JobLog> kill_candidates(int) override { unused(); }
    Changed start_waiting(std::int64_t, std::string_view, int) override { unused(); }
    std::vector<std::pair<WorkflowRunState, std::int64_t>> count_runs() override { unused(); }
    std::vector<Alarm> claim_alarms(std::int64_t, std::int64_t, int) override { unused(); }
    void finish_alarm(std::int64_t, std::int64_t, AlarmOutcome) override { unused(); }
  } workflow_store_;
  testing::FakeCalendarStore calendar_store_{fake_};
  testing::FakeBackfillStore backfill_store_{fake_};
  common::http::HttpServer server_{common::http::HttpServerOptions{}};
  std::unique_ptr<RestApi> api_;
  std::map<std::string, ApiRouter::Route> routed_;
};

TEST_F(OpenApiDocument, IsOpenApi303ServedUnderApiV1) {
  EXPECT_EQ(doc_["openapi"].as<std::string>(), "3.0.3");
  EXPECT_EQ(doc_["servers"][0]["url"].as<std::string>(), "/api/v1");
  EXPECT_FALSE(documented_.empty());
}

TEST_F(OpenApiDocument, EveryRouteIsDocumented) {
  ASSERT_FALSE(routed_.empty());
  for (const auto& [key, route] : routed_) EXPECT_EQ(documented_.count(key), 1u) << key << " is routed but not in openapi.yaml";
}

TEST_F(OpenApiDocument, EveryDocumentedOperationIsRouted) {
  for (const auto& [key, op] : documented_) EXPECT_EQ(routed_.count(key), 1u) << key << " is in openapi.yaml but not routed";
}

TEST_F(OpenApiDocument, AccessMatchesTheRouter) {
  for (const auto& [key, route] : routed_) {
    auto it = documented_.find(key);
    if (it == documented_.end()) continue;
    const auto& op = it->second.node;
    ASSERT_TRUE(op["x-access"]) << key << " has no x-access";
    EXPECT_EQ(op["x-access"].as<std::string>(), access_name(route.access)) << key;
    // A public operation overrides the document's security with none; the others keep it.
    const bool no_security = op["security"] && op["security"].IsSequence() && op["security"].size() == 0;
    EXPECT_EQ(no_security, route.access == Access::kPublic) << key;
    if (route.access != Access::kPublic) {
      EXPECT_TRUE(op["responses"]["401"]) << key << " does not document 401";
    }
    if (route.access == Access::kAdmin) {
      EXPECT_TRUE(op["responses"]["403"]) << key << " does not document 403";
    }
  }
}

TEST_F(OpenApiDocument, EveryOperationIsNamedAndAnswered) {
  std::set<std::string> ids;
  for (const auto& [key, op] : documented_) {
    ASSERT_TRUE(op.node["operationId"]) << key;
    EXPECT_TRUE(ids.insert(op.node["operationId"].as<std::string>()).second) << key << ": duplicate operationId";
    ASSERT_TRUE(op.node["responses"] && op.node["responses"].size() > 0) << key;
    bool success = false;
    for (const auto& r : op.node["responses"]) success |= r.first.as<std::string>().front() == '2';
    EXPECT_TRUE(success) << key << " documents no 2xx answer";
  }
}

TEST_F(OpenApiDocument, PathParametersAreDeclared) {
  static const std::regex param(R"(\{([A-Za-z]+)\})");
  for (const auto& [key, op] : documented_) {
    std::set<std::string> declared;
    for (const auto& list : {op.path_item["parameters"], op.node["parameters"]}) {
      if (!list) continue;
      for (const auto& p : list) {
        auto resolved = resolve(p);
        ASSERT_TRUE(resolved.IsDefined()) << key << ": unresolved parameter";
        if (resolved["in"].as<std::string>() == "path") declared.insert(resolved["name"].as<std::string>());
      }
    }
    std::set<std::string> in_path;
    for (auto it = std::sregex_iterator(key.begin(), key.end(), param); it != std::sregex_iterator(); ++it) {
      in_path.insert((*it)[1]);
    }
    EXPECT_EQ(declared, in_path) << key;
  }
}

TEST_F(OpenApiDocument, QueryParametersAreTheOnesTheRouterAccepts) {
  for (const auto& [key, route] : routed_) {
    auto it = documented_.find(key);
    if (it == documented_.end()) continue;
    std::set<std::string> declared;
    for (const auto& list : {it->second.path_item["parameters"], it->second.node["parameters"]}) {
      if (!list) continue;
      for (const auto& p : list) {
        auto resolved = resolve(p);
        if (resolved.IsDefined() && resolved["in"].as<std::string>() == "query") {
          declared.insert(resolved["name"].as<std::string>());
        }
      }
    }
    EXPECT_EQ(declared, std::set<std::string>(route.query.begin(), route.query.end())) << key;
  }
}

TEST_F(OpenApiDocument, EveryReferenceResolves) {
  std::vector<std::pair<std::string, YAML::Node>> todo{{"", doc_}};
  int refs = 0;
  while (!todo.empty()) {
    auto [where, node] = todo.back();
    todo.pop_back();
    if (node.IsMap()) {
      for (const auto& kv : node) {
        auto key = kv.first.as<std::string>();
        if (key == "$ref") {
          ++refs;
          EXPECT_TRUE(resolve(node).IsDefined()) << where << ": " << kv.second.as<std::string>() << " does not resolve";
        } else {
          todo.emplace_back(where + "/" + key, kv.second);
        }
      }
    } else if (node.IsSequence()) {
      for (std::size_t i = 0; i < node.size(); ++i) todo.emplace_back(where + "/" + std::to_string(i), node[i]);
    }
  }
  EXPECT_GT(refs, 0);
}

TEST_F(OpenApiDocument, RecordSchemasListTheFieldsTheApiAnswers) {
  auto keys = [](const nlohmann::json& j) {
    std::set<std::string> out;
    for (const auto& [k, v] : j.items()) out.insert(k);
    return out;
  };
  EXPECT_EQ(property_names("Group"), keys(to_json(Group{})));
  EXPECT_EQ(property_names("Job"), keys(to_json(Job{})));
  EXPECT_EQ(property_names("JobLog"), keys(to_json(JobLog{})));
  EXPECT_EQ(property_names("ScriptVersion"), keys(to_json(ScriptVersion{})));
  EXPECT_EQ(property_names("User"), keys(to_json(User{})));
  EXPECT_EQ(property_names("ApiToken"), keys(to_json(ApiToken{})));
  EXPECT_EQ(property_names("AuditEntry"), keys(to_json(AuditEntry{})));
  EXPECT_EQ(property_names("NodeStatus"), keys(to_json(NodeStatus{})));
  EXPECT_EQ(property_names("ScanMark"), keys(to_json(ScanMark{})));
  EXPECT_EQ(property_names("Calendar"), keys(to_json(Calendar{})));
  EXPECT_EQ(property_names("Backfill"), keys(to_json(Backfill{})));
  EXPECT_EQ(property_names("BackfillRuns"), keys(to_json(BackfillRuns{})));
}

}  // namespace
}  // namespace cronwheel::admin
