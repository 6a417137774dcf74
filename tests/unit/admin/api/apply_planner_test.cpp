#include "admin/api/apply_planner.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/http/http_error.h"
#include "common/jobs_file/jobs_file.h"

namespace cronwheel::admin {
namespace {

using json = nlohmann::json;

constexpr std::int64_t kNow = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

Principal admin_user() {
  Principal p;
  p.user.id = 1;
  p.user.username = "root";
  p.user.role = "admin";
  return p;
}

Principal normal_user(std::vector<std::int64_t> groups) {
  Principal p;
  p.user.id = 2;
  p.user.username = "dev";
  p.user.role = "normal";
  p.user.groups = std::move(groups);
  return p;
}

// A server with two groups: billing (1) and reports (2), and what the tests add.
struct Server {
  JobsSnapshot s;

  Server() {
    s.groups.push_back(Group{1, "billing", "Billing", 0, {}, std::nullopt, 0, 0});
    s.groups.push_back(Group{2, "reports", "Reports", 1, {"http://10.0.0.5:9999/"}, std::nullopt, 0, 0});
  }

  Job& add_job(std::int64_t id, std::int64_t group, const std::string& name) {
    Job job;
    job.id = id;
    job.job_group = group;
    job.name = name;
    job.job_desc = "Job " + name;
    job.executor_handler = "handler";
    s.jobs.push_back(job);
    return s.jobs.back();
  }

  // A workflow with one node per (key, job id), edges as given; version 3, stopped.
  Workflow& add_workflow(std::int64_t id, std::int64_t group, const std::string& name,
                         const std::vector<std::pair<std::string, std::int64_t>>& nodes,
                         const std::vector<WorkflowEdge>& edges = {}) {
    Workflow w;
    w.id = id;
    w.job_group = group;
    w.name = name;
    w.version = 3;
    for (const auto& [key, job] : nodes) w.graph.nodes.push_back(WorkflowNode{key, job, "", false, NodeFailurePolicy::kFail});
    w.graph.edges = edges;
    s.workflows.push_back(w);
    return s.workflows.back();
  }

  // A calendar (UTC, every day a business day, no dates), version 4.
  Calendar& add_calendar(std::int64_t id, const std::string& name) {
    Calendar c;
    c.id = id;
    c.name = name;
    c.version = 4;
    s.calendars.push_back(c);
    return s.calendars.back();
  }

  // Identities follow the whole jobs (children included) and workflows once the test set them.
  const JobsSnapshot& snapshot() {
    s.identities.clear();
    for (const auto& job : s.jobs) {
      s.identities.push_back({job.id, job.job_group, job.name, job.child_job_ids,
                              job.executor_route_strategy == RouteStrategy::kShardingBroadcast, job.calendar.calendar_id});
    }
    s.workflow_identities.clear();
    for (const auto& w : s.workflows) {
      WorkflowIdentity identity{w.id, w.job_group, w.name, {}, w.calendar.calendar_id};
      for (const auto& n : w.graph.nodes) identity.job_ids.push_back(n.job_id);
      s.workflow_identities.push_back(identity);
    }
    return s;
  }
};

json file(const std::string& yaml) { return common::jobs_file::parse_yaml(yaml, "test.yaml", {}).document; }

// The HttpError plan_apply throws for `document`; fails the test when it throws none.
common::http::ErrorInfo refusal(const json& document, const JobsSnapshot& snapshot, const Principal& who, bool prune = false) {
  try {
    plan_apply(document, snapshot, who, prune, kNow);
  } catch (const common::http::HttpError& e) {
    return e.info();
  }
  ADD_FAILURE() << "the plan was not refused";
  return {};
}

const json* job_report(const ApplyPlan& plan, const std::string& name) {
  for (const auto& j : plan.report["jobs"]) {
    if (j["name"] == name) return &j;
  }
  return nullptr;
}

TEST(ApplyPlanner, CreatesGroupsAndJobsTheServerLacks) {
  Server server;
  const auto plan = plan_apply(file(R"(groups:
  - appName: payments
    title: Payments
    addressType: manual
    addressList: [http://10.0.0.9:9999/]
    jobs:
      settle:
        jobDesc: Settle
        executorHandler: settle
        childJobs: [notify, billing/none-yet]
      notify:
        jobDesc: Notify
        executorHandler: notify
  - appName: billing
    jobs:
      none-yet:
        jobDesc: Created by the same file
        executorHandler: x
)"),
                               server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.create_groups.size(), 1u);
  EXPECT_EQ(plan.create_groups[0].app_name, "payments");
  EXPECT_EQ(plan.create_groups[0].address_type, 1);
  ASSERT_EQ(plan.create_jobs.size(), 3u);
  EXPECT_EQ(plan.create_jobs[0].job.job_group, 0) << "its group is new: the store resolves it by app name";
  EXPECT_EQ(plan.create_jobs[0].app_name, "payments");
  const auto& settle = plan.create_jobs[0].job.name == "settle" ? plan.create_jobs[0] : plan.create_jobs[1];
  EXPECT_EQ(settle.children, (std::vector<JobRef>{{"payments", "notify"}, {"billing", "none-yet"}}));
  EXPECT_EQ(plan.create_jobs[2].job.job_group, 1);
  EXPECT_EQ(plan.report["summary"], json::parse(R"({"create":4,"update":1,"unchanged":0,"delete":0})"));
  EXPECT_EQ(plan.report["groups"][1]["action"], "update") << "billing's title becomes its app name, as the file leaves it out";
  EXPECT_TRUE(plan.report["changed"].get<bool>());
}

TEST(ApplyPlanner, AnExportAppliedBackChangesNothing) {
  Server server;
  auto& a = server.add_job(10, 1, "nightly");
  a.schedule_type = ScheduleType::kCron;
  a.schedule_conf = "0 0 2 * * ?";
  a.timezone = "Europe/Berlin";
  a.trigger_status = 1;
  a.trigger_next_time = kNow + 3'600'000;
  a.child_job_ids = {11, 20};
  a.executor_timeout = 60;
  auto& b = server.add_job(11, 1, "reconcile");
  b.glue_type = GlueType::kGlueShell;
  b.glue_source = "#!/bin/sh\necho hi\n";
  b.glue_remark = "first";
  b.executor_handler = "";
  server.add_job(20, 2, "weekly");
  server.s.channels.push_back(AlarmChannel{7, "ops", AlarmChannelKind::kWebhook, "https://hooks.example/x", "", {}, {10, 20}, 0, 0});

  const auto exported = export_document(server.snapshot(), {}, admin_user());
  ASSERT_NO_THROW(common::jobs_file::check_json(exported)) << exported.dump(2);
  EXPECT_EQ(exported["groups"][0]["jobs"]["nightly"]["childJobs"], json::parse(R"(["reconcile","reports/weekly"])"));
  EXPECT_EQ(exported["groups"][0]["jobs"]["nightly"]["alarmChannels"], json::parse(R"(["ops"])"));
  EXPECT_FALSE(exported["groups"][0]["jobs"]["nightly"].contains("misfireStrategy")) << "defaults are left out";
  // Through YAML, as the CLI and the console carry it.
  const auto reread = common::jobs_file::parse_yaml(common::jobs_file::to_yaml(exported), "export.yaml", {}).document;
  const auto plan = plan_apply(reread, server.snapshot(), admin_user(), true, kNow);
  EXPECT_TRUE(plan.empty()) << plan.report.dump(2);
  EXPECT_FALSE(plan.report["changed"].get<bool>());
  EXPECT_EQ(plan.report["summary"]["unchanged"], 5);
}

TEST(ApplyPlanner, ReportsEachChangedFieldFromAndTo) {
  Server server;
  auto& a = server.add_job(10, 1, "nightly");
  a.executor_param = "--old";
  const auto plan = plan_apply(file(R"(groups:
  - appName: billing
    title: Billing
    jobs:
      nightly:
        jobDesc: Job nightly
        executorHandler: handler
        executorParam: --new
        executorTimeout: 30
)"),
                               server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.update_jobs.size(), 1u);
  EXPECT_EQ(plan.update_jobs[0].job.id, 10);
  EXPECT_EQ(plan.update_jobs[0].job.executor_param, "--new");
  EXPECT_EQ((*job_report(plan, "nightly"))["changes"],
            json::parse(R"([{"field":"executorParam","from":"--old","to":"--new"},
                            {"field":"executorTimeout","from":0,"to":30}])"));
  EXPECT_EQ(plan.report["groups"][0]["action"], "unchanged");
}

TEST(ApplyPlanner, RunningStartsFromTheScheduleAndStoppedStops) {
  Server server;
  auto& stopped = server.add_job(10, 1, "stopped");
  stopped.schedule_type = ScheduleType::kFixRate;
  stopped.schedule_conf = "60";
  auto& running = server.add_job(11, 1, "running");
  running.schedule_type = ScheduleType::kFixRate;
  running.schedule_conf = "60";
  running.trigger_status = 1;
  running.trigger_next_time = kNow + 12'345;
  auto& rescheduled = server.add_job(12, 1, "rescheduled");
  rescheduled.schedule_type = ScheduleType::kFixRate;
  rescheduled.schedule_conf = "60";
  rescheduled.trigger_status = 1;
  rescheduled.trigger_next_time = kNow + 12'345;
  auto& to_stop = server.add_job(13, 1, "to-stop");
  to_stop.trigger_status = 1;
  to_stop.schedule_type = ScheduleType::kFixRate;
  to_stop.schedule_conf = "60";
  to_stop.trigger_next_time = kNow + 5;
  const auto plan = plan_apply(file(R"(groups:
  - appName: billing
    title: Billing
    jobs:
      stopped: {jobDesc: Job stopped, executorHandler: handler, scheduleType: FIX_RATE, scheduleConf: "60", running: true}
      running: {jobDesc: Job running, executorHandler: handler, scheduleType: FIX_RATE, scheduleConf: "60", running: true}
      rescheduled: {jobDesc: Job rescheduled, executorHandler: handler, scheduleType: FIX_RATE, scheduleConf: "120", running: true}
      to-stop: {jobDesc: Job to-stop, executorHandler: handler, scheduleType: FIX_RATE, scheduleConf: "60"}
)"),
                               server.snapshot(), admin_user(), false, kNow);
  std::map<std::string, Job> updated;
  for (const auto& p : plan.update_jobs) updated[p.job.name] = p.job;
  ASSERT_EQ(updated.size(), 3u) << "the running job with the same schedule is unchanged";
  EXPECT_EQ(updated["stopped"].trigger_status, 1);
  EXPECT_GT(updated["stopped"].trigger_next_time, kNow + 5'000) << "from now past the pre-read window";
  EXPECT_EQ(updated["rescheduled"].trigger_status, 1);
  EXPECT_NE(updated["rescheduled"].trigger_next_time, kNow + 12'345);
  EXPECT_EQ(updated["to-stop"].trigger_status, 0);
  EXPECT_EQ(updated["to-stop"].trigger_next_time, 0);

  // A job with nothing to schedule cannot be running.
  const auto info = refusal(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      x:\n        jobDesc: x\n"
                                 "        executorHandler: h\n        running: true\n"),
                            server.snapshot(), admin_user());
  EXPECT_EQ(info.status, 400);
  EXPECT_EQ(info.field, "groups[billing].jobs[x].scheduleType");
  EXPECT_EQ(info.message.rfind("groups[billing].jobs[x].scheduleType: NONE never fires", 0), 0u) << info.message;
}

TEST(ApplyPlanner, PruneDeletesOnlyTheFileGroupsJobsItDoesNotName) {
  Server server;
  server.add_job(10, 1, "kept");
  server.add_job(11, 1, "gone");
  server.add_job(20, 2, "other-group");
  const auto document = file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      kept: {jobDesc: Job kept, executorHandler: handler}\n");
  EXPECT_TRUE(plan_apply(document, server.snapshot(), admin_user(), false, kNow).delete_jobs.empty());
  const auto plan = plan_apply(document, server.snapshot(), admin_user(), true, kNow);
  EXPECT_EQ(plan.delete_jobs, (std::vector<std::int64_t>{11}));
  EXPECT_EQ((*job_report(plan, "gone"))["action"], "delete");
}

TEST(ApplyPlanner, ChildrenMustExistAndNotCloseACycle) {
  Server server;
  auto& a = server.add_job(10, 1, "a");
  a.child_job_ids = {20};
  auto& outside = server.add_job(20, 2, "outside");
  outside.child_job_ids = {11};  // reports/outside → billing/b
  server.add_job(11, 1, "b");

  auto info = refusal(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      b:\n        jobDesc: x\n"
                           "        executorHandler: h\n        childJobs: [missing]\n"),
                      server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "groups[billing].jobs[b].childJobs[0]");
  EXPECT_NE(info.message.find("billing/missing does not exist"), std::string::npos) << info.message;

  // b → a, while a → reports/outside → b on the server.
  info = refusal(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      b:\n        jobDesc: x\n"
                      "        executorHandler: h\n        childJobs: [a]\n"),
                 server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "groups[billing].jobs[b].childJobs");
  EXPECT_NE(info.message.find("billing/b → billing/a → reports/outside → billing/b"), std::string::npos) << info.message;

  // A cycle among jobs the file creates.
  info = refusal(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n"
                      "      x: {jobDesc: x, executorHandler: h, childJobs: [y]}\n"
                      "      y: {jobDesc: y, executorHandler: h, childJobs: [x]}\n"),
                 server.snapshot(), admin_user());
  EXPECT_NE(info.message.find("would make a cycle of child jobs"), std::string::npos) << info.message;

  info = refusal(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n"
                      "      x: {jobDesc: x, executorHandler: h, childJobs: [x]}\n"),
                 server.snapshot(), admin_user());
  EXPECT_NE(info.message.find("cannot be its own child"), std::string::npos) << info.message;
}

TEST(ApplyPlanner, ProblemsOfAJobNameItsPath) {
  Server server;
  const auto info = refusal(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      x:\n        jobDesc: x\n"
                                 "        executorHandler: h\n        scheduleType: CRON\n        scheduleConf: \"0 61 * * * ?\"\n"),
                            server.snapshot(), admin_user());
  EXPECT_EQ(info.status, 400);
  EXPECT_EQ(info.field, "groups[billing].jobs[x].scheduleConf");
  EXPECT_EQ(info.message.rfind("groups[billing].jobs[x].scheduleConf: ", 0), 0u) << info.message;
}

TEST(ApplyPlanner, NormalUsersApplyOnlyWithinTheirGroups) {
  Server server;
  server.add_job(10, 1, "a");
  server.s.channels.push_back(AlarmChannel{7, "ops", AlarmChannelKind::kWebhook, "https://hooks.example/x", "", {}, {}, 0, 0});
  const auto mine = normal_user({1});

  auto info = refusal(file("groups:\n  - appName: reports\n    title: Reports\n    addressType: manual\n"
                           "    addressList: [http://10.0.0.5:9999/]\n"),
                      server.snapshot(), mine);
  EXPECT_EQ(info.status, 403);
  EXPECT_NE(info.message.find("groups[reports]: reports is not one of your groups"), std::string::npos) << info.message;

  info = refusal(file("groups:\n  - appName: newgroup\n"), server.snapshot(), mine);
  EXPECT_EQ(info.status, 403);

  info = refusal(file("groups:\n  - appName: billing\n    title: Renamed\n"), server.snapshot(), mine);
  EXPECT_EQ(info.status, 403);
  EXPECT_NE(info.message.find("admin role"), std::string::npos);

  info = refusal(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      a:\n        jobDesc: Job a\n"
                      "        executorHandler: handler\n        alarmChannels: [ops]\n"),
                 server.snapshot(), mine);
  EXPECT_EQ(info.status, 403);
  EXPECT_NE(info.message.find("alarmChannels"), std::string::npos);

  // A child in a group the user cannot see does not exist for them.
  server.add_job(20, 2, "theirs");
  info = refusal(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      a:\n        jobDesc: Job a\n"
                      "        executorHandler: handler\n        childJobs: [reports/theirs]\n"),
                 server.snapshot(), mine);
  EXPECT_EQ(info.status, 400);

  const auto plan = plan_apply(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      a:\n"
                                    "        jobDesc: Changed\n        executorHandler: handler\n"),
                               server.snapshot(), mine, false, kNow);
  EXPECT_EQ(plan.update_jobs.size(), 1u);
}

TEST(ApplyPlanner, ChannelsTakeExactlyTheFileJobsThatNameThem) {
  Server server;
  server.add_job(10, 1, "a");
  server.add_job(11, 1, "b");
  server.add_job(20, 2, "elsewhere");
  server.s.channels.push_back(AlarmChannel{7, "ops", AlarmChannelKind::kWebhook, "https://hooks.example/x", "", {}, {11, 20}, 0, 0});
  const auto plan = plan_apply(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n"
                                    "      a: {jobDesc: Job a, executorHandler: handler, alarmChannels: [ops]}\n"
                                    "      b: {jobDesc: Job b, executorHandler: handler}\n"
                                    "      c: {jobDesc: Job c, executorHandler: handler, alarmChannels: [ops]}\n"),
                               server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.channel_jobs.size(), 1u);
  EXPECT_EQ(plan.channel_jobs[0].kept, (std::vector<std::int64_t>{20})) << "another group's job stays on it";
  EXPECT_EQ(plan.channel_jobs[0].named, (std::vector<JobRef>{{"billing", "a"}, {"billing", "c"}}));
  EXPECT_EQ((*job_report(plan, "b"))["changes"], json::parse(R"([{"field":"alarmChannels","from":["ops"],"to":[]}])"));

  const auto info = refusal(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n"
                                 "      a: {jobDesc: Job a, executorHandler: handler, alarmChannels: [nope]}\n"),
                            server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "groups[billing].jobs[a].alarmChannels");
}

TEST(ApplyPlanner, AChangedScriptIsSavedAsAVersion) {
  Server server;
  auto& job = server.add_job(10, 1, "script");
  job.glue_type = GlueType::kGlueShell;
  job.glue_source = "echo one\n";
  job.executor_handler = "";
  const auto plan = plan_apply(file("groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      script:\n"
                                    "        jobDesc: Job script\n        glueType: GLUE_SHELL\n        glueSource: \"echo two\\n\"\n"
                                    "        glueRemark: second\n"),
                               server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.update_jobs.size(), 1u);
  EXPECT_TRUE(plan.update_jobs[0].script_changed);
  EXPECT_EQ(plan.update_jobs[0].job.glue_source, "echo two\n");
}

TEST(ApplyPlanner, ExportNamesOnlyGroupsTheCallerMaySee) {
  Server server;
  EXPECT_EQ(export_document(server.snapshot(), {}, normal_user({2}))["groups"].size(), 1u);
  try {
    export_document(server.snapshot(), {"billing"}, normal_user({2}));
    FAIL() << "billing is not the user's";
  } catch (const common::http::HttpError& e) {
    EXPECT_EQ(e.info().status, 400);
    EXPECT_EQ(e.info().field, "appName");
  }
}

}  // namespace
}  // namespace cronwheel::admin

namespace cronwheel::admin {
namespace {

User a_user(std::int64_t id, const std::string& name, const std::string& role, std::vector<std::int64_t> groups = {}) {
  User u;
  u.id = id;
  u.username = name;
  u.role = role;
  u.password_hash = "$argon2id$...";
  u.groups = std::move(groups);
  return u;
}

TEST(ApplyPlannerUsers, CreatesUnknownUsersWithoutPasswordAndSetsRolesAndGroups) {
  Server server;
  server.s.users = {a_user(1, "root", "admin"), a_user(5, "Alice", "normal", {1})};
  const auto plan = plan_apply(file("groups:\n  - appName: payments\nusers:\n"
                                    "  - {username: bob, groups: [payments, billing]}\n"
                                    "  - {username: alice, role: normal, groups: [billing]}\n"
                                    "  - {username: ALICE2, role: admin}\n"),
                               server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.users.size(), 2u) << "alice is unchanged: usernames match in any case";
  EXPECT_EQ(plan.users[0].user.id, 0);
  EXPECT_EQ(plan.users[0].user.username, "bob");
  EXPECT_EQ(plan.users[0].group_names, (std::vector<std::string>{"billing", "payments"})) << "payments is created by the file";
  EXPECT_EQ(plan.report["users"][1]["action"], "unchanged");
  EXPECT_EQ(plan.report["users"][2]["action"], "create");

  const auto changed = plan_apply(file("groups: []\nusers:\n  - {username: alice, role: admin, groups: []}\n"),
                                  server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(changed.users.size(), 1u);
  EXPECT_EQ(changed.users[0].user.id, 5);
  EXPECT_EQ(changed.users[0].user.password_hash, "$argon2id$...") << "the password is left alone";
  EXPECT_EQ(changed.report["users"][0]["changes"],
            json::parse(R"([{"field":"role","from":"normal","to":"admin"},{"field":"groups","from":["billing"],"to":[]}])"));
}

TEST(ApplyPlannerUsers, RefusesWhatUsersMayNotDo) {
  Server server;
  server.s.users = {a_user(1, "root", "admin"), a_user(2, "dev", "normal", {1})};
  auto info = refusal(file("groups: []\nusers:\n  - {username: eve}\n"), server.snapshot(), normal_user({1}));
  EXPECT_EQ(info.status, 403);
  info = refusal(file("groups: []\nusers:\n  - {username: root, role: normal}\n"), server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "users[root].role") << "an admin cannot demote themselves";
  Principal other_admin = admin_user();
  other_admin.user.id = 99;
  info = refusal(file("groups: []\nusers:\n  - {username: root, role: normal}\n"), server.snapshot(), other_admin);
  EXPECT_EQ(info.status, 409) << "no admin would be left";
  info = refusal(file("groups: []\nusers:\n  - {username: x, groups: [nowhere]}\n"), server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "users[x].groups");
  info = refusal(file("groups: []\nusers:\n  - {username: \"bad name\"}\n"), server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "users[bad name].username");
}

// ---- workflows ----------------------------------------------------------------------------

const json* workflow_report(const ApplyPlan& plan, const std::string& name) {
  for (const auto& w : plan.report["workflows"]) {
    if (w["name"] == name) return &w;
  }
  return nullptr;
}

// billing's jobs extract (10) and load (11), reports' weekly (20), each in the file as on the
// server; `workflows` follows them under billing.
std::string with_jobs(const std::string& workflows) {
  return "groups:\n  - appName: billing\n    title: Billing\n    jobs:\n"
         "      extract: {jobDesc: Job extract, executorHandler: handler}\n"
         "      load: {jobDesc: Job load, executorHandler: handler}\n"
         "    workflows:\n" + workflows;
}

Server server_with_jobs() {
  Server server;
  server.add_job(10, 1, "extract");
  server.add_job(11, 1, "load");
  server.add_job(20, 2, "weekly");
  return server;
}

TEST(ApplyPlannerWorkflows, CreatesAWorkflowWhoseNodesRunJobsByNameNewOnesIncluded) {
  Server server;
  server.add_job(20, 2, "weekly");
  const auto plan = plan_apply(file(R"(groups:
  - appName: payments
    jobs:
      settle: {jobDesc: Settle, executorHandler: settle}
    workflows:
      month-end:
        description: Settle, then report
        scheduleType: CRON
        scheduleConf: "0 0 3 1 * ?"
        params: [{name: month, default: current}]
        nodes:
          settle:
            job: settle
            params: "--month=${params.month}"
          report:
            job: reports/weekly
            after: [settle]
            onFailure: CONTINUE
        running: true
)"),
                               server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.create_workflows.size(), 1u);
  const auto& created = plan.create_workflows[0];
  EXPECT_EQ(created.app_name, "payments");
  EXPECT_EQ(created.workflow.job_group, 0) << "its group is new: the store resolves it by app name";
  EXPECT_EQ(created.workflow.name, "month-end");
  EXPECT_EQ(created.node_jobs, (std::vector<JobRef>{{"reports", "weekly"}, {"payments", "settle"}})) << "nodes in key order";
  ASSERT_EQ(created.workflow.graph.nodes.size(), 2u);
  EXPECT_EQ(created.workflow.graph.nodes[0].job_id, 20) << "an existing job's id is known";
  EXPECT_EQ(created.workflow.graph.nodes[0].on_failure, NodeFailurePolicy::kContinue);
  EXPECT_EQ(created.workflow.graph.nodes[1].job_id, 0) << "a job the file creates has no id yet";
  EXPECT_EQ(created.workflow.graph.nodes[1].params, "--month=${params.month}");
  EXPECT_EQ(created.workflow.graph.edges, (std::vector<WorkflowEdge>{{"settle", "report"}}));
  EXPECT_EQ(created.workflow.trigger_status, 1);
  EXPECT_GT(created.workflow.trigger_next_time, kNow);
  const json* report = workflow_report(plan, "month-end");
  ASSERT_NE(report, nullptr);
  EXPECT_EQ((*report)["action"], "create");
  EXPECT_EQ((*report)["changes"].size(), 7u) << (*report)["changes"].dump(2);
  EXPECT_EQ((*report)["changes"][4], json::parse(R"({"field":"nodes[report]",
      "to":{"job":"reports/weekly","after":["settle"],"onFailure":"CONTINUE"}})"));
  EXPECT_EQ(plan.report["summary"]["create"], 3) << "the group, its job and its workflow";
}

TEST(ApplyPlannerWorkflows, AnExportedWorkflowAppliedBackIsUnchanged) {
  Server server = server_with_jobs();
  // Made in the console: nodes and edges in the order they were drawn.
  auto& w = server.add_workflow(5, 1, "etl", {{"load", 11}, {"extract", 10}, {"report", 20}},
                                {{"load", "report"}, {"extract", "load"}, {"extract", "report"}});
  w.graph.nodes[0].params = "${nodes.extract.output}";
  w.graph.nodes[0].params_set = true;
  w.graph.nodes[2].params_set = true;  // an empty template: no parameter at all
  w.graph.on_failure_running = RunningOnFailure::kKill;
  w.params = {WorkflowParam{"day", "", true, ""}, WorkflowParam{"region", "", false, "where"}};
  w.schedule_type = ScheduleType::kFixRate;
  w.schedule_conf = "3600";
  w.params[1].has_default = true;
  w.trigger_status = 1;
  w.trigger_next_time = kNow + 1000;

  const auto exported = export_document(server.snapshot(), {"billing"}, admin_user());
  ASSERT_NO_THROW(common::jobs_file::check_json(exported)) << exported.dump(2);
  EXPECT_EQ(exported["groups"][0]["workflows"]["etl"], json::parse(R"({
      "scheduleType": "FIX_RATE", "scheduleConf": "3600", "onFailureRunning": "KILL",
      "params": [{"name": "day", "default": ""}, {"name": "region", "default": "", "description": "where"}],
      "nodes": {"extract": {"job": "extract"},
                "load": {"job": "load", "after": ["extract"], "params": "${nodes.extract.output}"},
                "report": {"job": "reports/weekly", "after": ["extract", "load"], "params": ""}},
      "running": true})"));
  const auto reread = common::jobs_file::parse_yaml(common::jobs_file::to_yaml(exported), "export.yaml", {}).document;
  const auto plan = plan_apply(reread, server.snapshot(), admin_user(), true, kNow);
  EXPECT_TRUE(plan.empty()) << plan.report.dump(2);
  EXPECT_EQ((*workflow_report(plan, "etl"))["action"], "unchanged");
  EXPECT_EQ((*workflow_report(plan, "etl"))["id"], 5);
}

TEST(ApplyPlannerWorkflows, AnUpdateReportsFieldsAndNodesOneByOneAndKeepsTheVersionItRead) {
  Server server = server_with_jobs();
  auto& w = server.add_workflow(5, 1, "etl", {{"extract", 10}, {"load", 11}, {"gone", 20}},
                                {{"extract", "load"}, {"extract", "gone"}});
  w.timeout_seconds = 60;
  const auto plan = plan_apply(file(with_jobs(R"(      etl:
        timeout: 120
        nodes:
          extract: {job: extract, params: "--all"}
          load: {job: load, after: [extract]}
          notify: {job: load, after: [load]}
)")),
                               server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.update_workflows.size(), 1u);
  const auto& updated = plan.update_workflows[0];
  EXPECT_TRUE(updated.fields_changed);
  EXPECT_EQ(updated.workflow.id, 5);
  EXPECT_EQ(updated.workflow.version, 3) << "the store writes it only while the row still has it";
  EXPECT_EQ(updated.workflow.timeout_seconds, 120);
  EXPECT_EQ(updated.workflow.graph.edges, (std::vector<WorkflowEdge>{{"extract", "load"}, {"load", "notify"}}));
  EXPECT_EQ((*workflow_report(plan, "etl"))["changes"], json::parse(R"([
      {"field": "timeout", "from": 60, "to": 120},
      {"field": "nodes[extract]", "from": {"job": "extract", "after": [], "onFailure": "FAIL"},
                                  "to": {"job": "extract", "after": [], "onFailure": "FAIL", "params": "--all"}},
      {"field": "nodes[gone]", "from": {"job": "reports/weekly", "after": ["extract"], "onFailure": "FAIL"}},
      {"field": "nodes[notify]", "to": {"job": "load", "after": ["load"], "onFailure": "FAIL"}}])"));
}

TEST(ApplyPlannerWorkflows, RunningFollowsTheFileAndAloneKeepsTheVersion) {
  struct Case {
    const char* name;
    int stored_status;
    const char* file_schedule;  // the file's schedule keys
    bool file_running;
    bool planned;         // an update is planned
    bool fields_changed;  // ... beyond running
    int status;           // what it sets
    bool next_anew;       // its next time computed from now (else kept, or 0 when stopped)
  };
  const Case cases[] = {
      {"started", 0, "scheduleType: FIX_RATE, scheduleConf: \"60\"", true, true, false, 1, true},
      {"kept running", 1, "scheduleType: FIX_RATE, scheduleConf: \"60\"", true, false, false, 1, false},
      {"rescheduled", 1, "scheduleType: FIX_RATE, scheduleConf: \"120\"", true, true, true, 1, true},
      {"stopped", 1, "scheduleType: FIX_RATE, scheduleConf: \"60\"", false, true, false, 0, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Server server = server_with_jobs();
    auto& w = server.add_workflow(5, 1, "etl", {{"a", 10}});
    w.schedule_type = ScheduleType::kFixRate;
    w.schedule_conf = "60";
    w.trigger_status = c.stored_status;
    w.trigger_next_time = c.stored_status == 1 ? kNow + 12'345 : 0;
    const auto plan = plan_apply(file(with_jobs("      etl:\n        " + std::string("{") + c.file_schedule +
                                                ", running: " + (c.file_running ? "true" : "false") +
                                                ", nodes: {a: {job: extract}}}\n")),
                                 server.snapshot(), admin_user(), false, kNow);
    ASSERT_EQ(plan.update_workflows.size(), c.planned ? 1u : 0u) << plan.report.dump(2);
    if (!c.planned) continue;
    const auto& u = plan.update_workflows[0].workflow;
    EXPECT_EQ(plan.update_workflows[0].fields_changed, c.fields_changed);
    EXPECT_EQ(u.trigger_status, c.status);
    if (c.next_anew) {
      EXPECT_GT(u.trigger_next_time, kNow + 5'000) << "from now past the pre-read window";
    } else {
      EXPECT_EQ(u.trigger_next_time, c.status == 1 ? kNow + 12'345 : 0);
    }
  }

  // A workflow without a schedule runs when triggered, never by itself.
  const auto info = refusal(file(with_jobs("      etl: {running: true, nodes: {a: {job: extract}}}\n")),
                            server_with_jobs().snapshot(), admin_user());
  EXPECT_EQ(info.status, 400);
  EXPECT_EQ(info.field, "groups[billing].workflows[etl].running");
}

TEST(ApplyPlannerWorkflows, PruneDeletesTheWorkflowsTheFileLeavesOutUnlessARunWaitsOrRuns) {
  Server server = server_with_jobs();
  server.add_workflow(5, 1, "kept", {{"a", 10}});
  server.add_workflow(6, 1, "gone", {{"a", 10}});
  server.add_workflow(7, 2, "elsewhere", {{"a", 20}});
  const auto document = file(with_jobs("      kept: {nodes: {a: {job: extract}}}\n"));

  EXPECT_TRUE(plan_apply(document, server.snapshot(), admin_user(), false, kNow).delete_workflows.empty());
  auto plan = plan_apply(document, server.snapshot(), admin_user(), true, kNow);
  EXPECT_EQ(plan.delete_workflows, (std::vector<std::int64_t>{6})) << "only the file's groups' workflows";
  EXPECT_EQ((*workflow_report(plan, "gone"))["action"], "delete");
  EXPECT_FALSE(plan.refusal.has_value());
  EXPECT_EQ(plan.report["summary"]["delete"], 1);

  server.s.active_runs[6] = 42;
  plan = plan_apply(document, server.snapshot(), admin_user(), true, kNow);
  ASSERT_TRUE(plan.refusal.has_value()) << "the plan can be shown, not applied";
  EXPECT_EQ(plan.refusal->field, "groups[billing]");
  EXPECT_NE(plan.refusal->message.find("workflow billing/gone"), std::string::npos) << plan.refusal->message;
  EXPECT_NE(plan.refusal->message.find("run 42 is waiting or running"), std::string::npos) << plan.refusal->message;
  EXPECT_NE((*workflow_report(plan, "gone"))["blocked"].get<std::string>().find("run 42"), std::string::npos);
  EXPECT_EQ(plan.report["refused"], plan.refusal->message);

  server.s.active_runs = {{5, 43}};
  EXPECT_FALSE(plan_apply(document, server.snapshot(), admin_user(), true, kNow).refusal.has_value())
      << "a running workflow the file keeps is no obstacle";
}

TEST(ApplyPlannerWorkflows, ANodeRunsAJobThatExistsIsVisibleStaysAndRunsOnOneExecutor) {
  struct Case {
    const char* name;
    const char* node_job;
    const char* file_jobs;  // jobs added to billing's in the file
    Principal who;
    bool prune;
    const char* message;  // what the refusal says; nullptr: planned
  };
  const Case cases[] = {
      {"same group", "load", "", admin_user(), false, nullptr},
      {"other group", "reports/weekly", "", admin_user(), false, nullptr},
      {"created by the file", "fresh", "      fresh: {jobDesc: Fresh, executorHandler: h}\n", admin_user(), false, nullptr},
      {"unknown", "nowhere", "", admin_user(), false, "job billing/nowhere does not exist (nor is it in the file)"},
      {"unknown group", "nogroup/x", "", admin_user(), false, "job nogroup/x does not exist"},
      {"invisible", "reports/weekly", "", normal_user({1}), false, "job reports/weekly does not exist"},
      {"visible", "reports/weekly", "", normal_user({1, 2}), false, nullptr},
      {"pruned", "old", "", admin_user(), true, "job billing/old is not in the file, so --prune deletes it"},
      {"kept without prune", "old", "", admin_user(), false, nullptr},
      {"broadcast on the server", "reports/spread", "", admin_user(), false, "SHARDING_BROADCAST"},
      {"broadcast in the file", "spread",
       "      spread: {jobDesc: S, executorHandler: h, executorRouteStrategy: SHARDING_BROADCAST}\n", admin_user(), false,
       "SHARDING_BROADCAST"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Server server = server_with_jobs();
    server.add_job(12, 1, "old");
    server.add_job(21, 2, "spread").executor_route_strategy = RouteStrategy::kShardingBroadcast;
    std::string text = with_jobs("      etl: {nodes: {a: {job: " + std::string(c.node_job) + "}}}\n");
    text.insert(text.find("    workflows:"), c.file_jobs);
    const auto document = file(text);
    if (c.message == nullptr) {
      const auto plan = plan_apply(document, server.snapshot(), c.who, c.prune, kNow);
      EXPECT_EQ(plan.create_workflows.size(), 1u);
      continue;
    }
    const auto info = refusal(document, server.snapshot(), c.who, c.prune);
    EXPECT_EQ(info.status, 400);
    EXPECT_EQ(info.field, "groups[billing].workflows[etl].nodes[a].job");
    EXPECT_NE(info.message.find(c.message), std::string::npos) << info.message;
  }
}

TEST(ApplyPlannerWorkflows, ACycleIsToldByTheAfterEntriesThatCloseItWithTheirLines) {
  const std::string text = with_jobs(R"(      etl:
        nodes:
          a:
            job: extract
            after: [c]
          b:
            job: load
            after: [a]
          c:
            job: load
            after: [b]
)");
  const auto parsed = common::jobs_file::parse_yaml(text, "etl.yaml", {});
  const LineOf line_of = [&](const std::string& path) {
    const auto at = common::jobs_file::locate(parsed, path);
    return at ? at->line : 0;
  };
  try {
    plan_apply(parsed.document, server_with_jobs().snapshot(), admin_user(), false, kNow, line_of);
    FAIL() << "a cycle is refused";
  } catch (const common::http::HttpError& e) {
    EXPECT_EQ(e.info().status, 400);
    EXPECT_EQ(e.info().field, "groups[billing].workflows[etl].nodes[b].after[0]") << "the first edge of the cycle";
    EXPECT_EQ(e.info().message,
              "groups[billing].workflows[etl].nodes[b].after[0]: the nodes' after lists form a cycle: a \u2192 b \u2192 c \u2192 a: "
              "b after a (line 15), c after b (line 18), a after c (line 12)");
  }
  // Sent as JSON, without lines: the same edges, told by name.
  const auto info = refusal(parsed.document, server_with_jobs().snapshot(), admin_user());
  EXPECT_NE(info.message.find("b after a, c after b, a after c"), std::string::npos) << info.message;
}

TEST(ApplyPlannerWorkflows, ProblemsOfAWorkflowNameTheirPathInTheFile) {
  struct Case {
    const char* workflow;
    const char* field;
    const char* message;
  };
  const Case cases[] = {
      {"      etl:\n        nodes:\n          a: {job: extract, params: '${nodes.b.output}'}\n          b: {job: load, after: [a]}\n",
       "groups[billing].workflows[etl].nodes[a].params", "node b is not upstream of it"},
      {"      etl:\n        nodes:\n          a: {job: extract, params: '${params.day}'}\n",
       "groups[billing].workflows[etl].nodes[a].params", "the workflow has no parameter day"},
      {"      etl:\n        scheduleType: CRON\n        scheduleConf: '0 0 1 * * ?'\n        params: [{name: day}]\n"
       "        nodes: {a: {job: extract}}\n",
       "groups[billing].workflows[etl].params[0]", "needs a default"},
      {"      etl: {scheduleType: CRON, scheduleConf: '0 61 * * * ?', nodes: {a: {job: extract}}}\n",
       "groups[billing].workflows[etl].scheduleConf", "61"},
      {"      etl: {timezone: Mars/Base, nodes: {a: {job: extract}}}\n", "groups[billing].workflows[etl].timezone", "Mars/Base"},
      {"      etl: {maxParallel: 101, nodes: {a: {job: extract}}}\n", "groups[billing].workflows[etl].maxParallel", "100"},
      {"      etl: {timeout: 604801, nodes: {a: {job: extract}}}\n", "groups[billing].workflows[etl].timeout", "604800"},
      {"      etl: {alarmEmail: not-an-address, nodes: {a: {job: extract}}}\n", "groups[billing].workflows[etl].alarmEmail",
       "not-an-address"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.workflow);
    const auto info = refusal(file(with_jobs(c.workflow)), server_with_jobs().snapshot(), admin_user());
    EXPECT_EQ(info.status, 400);
    EXPECT_EQ(info.field, c.field);
    EXPECT_EQ(info.message.rfind(std::string(c.field) + ": ", 0), 0u) << info.message;
    EXPECT_NE(info.message.find(c.message), std::string::npos) << info.message;
  }
}

TEST(ApplyPlannerWorkflows, NormalUsersManageTheWorkflowsOfTheirGroupsOnly) {
  Server server = server_with_jobs();
  server.add_workflow(7, 2, "theirs", {{"a", 20}});
  const auto mine = normal_user({1});
  auto plan = plan_apply(file(with_jobs("      etl: {nodes: {a: {job: extract}}}\n")), server.snapshot(), mine, true, kNow);
  EXPECT_EQ(plan.create_workflows.size(), 1u);
  EXPECT_TRUE(plan.delete_workflows.empty()) << "another group's workflow is never the file's";

  const auto info = refusal(file("groups:\n  - appName: reports\n    title: Reports\n    addressType: manual\n"
                                 "    addressList: [http://10.0.0.5:9999/]\n    workflows:\n"
                                 "      theirs: {nodes: {a: {job: weekly}}}\n"),
                            server.snapshot(), mine);
  EXPECT_EQ(info.status, 403);
}

TEST(ApplyPlannerWorkflows, PruneKeepsAJobThatAWorkflowOutsideTheFileRuns) {
  Server server = server_with_jobs();
  server.add_job(12, 1, "old");
  server.add_workflow(7, 2, "weekly-flow", {{"a", 20}, {"b", 12}}, {{"a", "b"}});
  const auto document = file(with_jobs("      etl: {nodes: {a: {job: extract}}}\n"));
  const auto info = refusal(document, server.snapshot(), admin_user(), /*prune=*/true);
  EXPECT_EQ(info.status, 409);
  EXPECT_EQ(info.field, "groups[billing]");
  EXPECT_NE(info.message.find("job billing/old, which workflow reports/weekly-flow runs"), std::string::npos) << info.message;

  // A workflow of the file's group that the file leaves out goes with it.
  server.s.workflows.back().job_group = 1;
  const auto plan = plan_apply(document, server.snapshot(), admin_user(), true, kNow);
  EXPECT_EQ(plan.delete_workflows, (std::vector<std::int64_t>{7}));
  EXPECT_EQ(plan.delete_jobs, (std::vector<std::int64_t>{12}));
}

// ---- calendars and DST policies -------------------------------------------------------------

constexpr std::int64_t kHour = 3'600'000;

CalendarDate date_of(int year, int month, int day, const std::string& name, bool included = false,
                     const std::string& source = "", const std::string& uid = "") {
  CalendarDate d;
  d.day = {year, month, day, name};
  d.included = included;
  d.source = source;
  d.source_uid = uid;
  return d;
}

const json* calendar_report(const ApplyPlan& plan, const std::string& name) {
  for (const auto& c : plan.report["calendars"]) {
    if (c["name"] == name) return &c;
  }
  return nullptr;
}

// kNow is 08:00 on New Year's Day in Shanghai: a job at 10:00 there goes by the holiday.
const char* const kCalendarFile = R"(calendars:
  - name: cn-holidays
    timezone: Asia/Shanghai
    excludedDates:
      - {date: "2026-01-01", name: New Year}
groups:
  - appName: billing
    title: Billing
    jobs:
      daily:
        jobDesc: Daily at 10
        scheduleType: CRON
        scheduleConf: "0 0 10 * * ?"
        timezone: Asia/Shanghai
        executorHandler: h
        calendar: cn-holidays
        running: true
    workflows:
      etl:
        scheduleType: CRON
        scheduleConf: "0 0 11 * * ?"
        timezone: Asia/Shanghai
        calendar: cn-holidays
        calendarMode: only
        nodes: {a: {job: daily}}
        running: true
)";

TEST(ApplyPlannerCalendars, CreatesTheFilesCalendarsAndItsJobsAndWorkflowsFireByThem) {
  Server server;
  const auto plan = plan_apply(file(kCalendarFile), server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.create_calendars.size(), 1u);
  const Calendar& created = plan.create_calendars[0];
  EXPECT_EQ(created.name, "cn-holidays");
  EXPECT_EQ(created.time_zone, "Asia/Shanghai");
  EXPECT_FALSE(created.business_days.has_value()) << "every day, as the file leaves businessDays out";
  ASSERT_EQ(created.dates.size(), 1u);
  EXPECT_EQ(created.dates[0].day.name, "New Year");
  EXPECT_EQ(created.dates[0].source, "") << "entered by hand";

  ASSERT_EQ(plan.create_jobs.size(), 1u);
  EXPECT_EQ(plan.create_jobs[0].calendar, "cn-holidays") << "by name: the store resolves the calendar it creates";
  EXPECT_EQ(plan.create_jobs[0].job.calendar.mode, common::CalendarMode::kSkip);
  EXPECT_EQ(plan.create_jobs[0].job.trigger_next_time, kNow + 26 * kHour)
      << "2026-01-02 10:00 in Shanghai: the holiday's 10:00 is skipped";
  ASSERT_EQ(plan.create_workflows.size(), 1u);
  EXPECT_EQ(plan.create_workflows[0].calendar, "cn-holidays");
  EXPECT_EQ(plan.create_workflows[0].workflow.calendar.mode, common::CalendarMode::kOnly);
  EXPECT_EQ(plan.create_workflows[0].workflow.trigger_next_time, kNow + 27 * kHour);

  const json* report = calendar_report(plan, "cn-holidays");
  ASSERT_NE(report, nullptr) << plan.report.dump(2);
  EXPECT_EQ((*report)["action"], "create");
  EXPECT_EQ((*report)["changes"], json::parse(R"([{"field":"timezone","to":"Asia/Shanghai"},
      {"field":"businessDays","to":"every day"},{"field":"excludedDates","to":1}])"));
  EXPECT_EQ((*job_report(plan, "daily"))["changes"][4], json::parse(R"({"field":"calendar","to":"cn-holidays"})"))
      << (*job_report(plan, "daily"))["changes"].dump();
  EXPECT_EQ(plan.report["summary"], json::parse(R"({"create":3,"update":0,"unchanged":1,"delete":0})"));
}

// The server's cn-holidays as an export writes it, with one date imported from an .ics file.
Calendar& add_cn_holidays(Server& server) {
  auto& c = server.add_calendar(7, "cn-holidays");
  c.time_zone = "Asia/Shanghai";
  c.business_days = std::array<bool, 7>{true, true, true, true, true, false, false};
  c.dates = {date_of(0, 1, 1, "New Year"), date_of(2026, 9, 27, "Make-up day", true),
             date_of(2026, 10, 1, "National Day", false, "ics", "uid-1")};
  c.excluded_times = {{12 * 3600, 13 * 3600}};
  return c;
}

const char* const kCnHolidays = R"(calendars:
  - name: cn-holidays
    timezone: Asia/Shanghai
    businessDays: [MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY]
    excludedDates:
      - {date: "2026-10-01", name: National Day}
      - {date: "--01-01", name: New Year}
    includedDates:
      - {date: "2026-09-27", name: Make-up day}
    excludedTimes:
      - {start: "12:00", end: "13:00"}
groups: []
)";

TEST(ApplyPlannerCalendars, ACalendarIsComparedWithoutSourcesOrderOrSecondsAndADateThatChangesIsDrift) {
  Server server;
  add_cn_holidays(server);
  auto plan = plan_apply(file(kCnHolidays), server.snapshot(), admin_user(), false, kNow);
  EXPECT_TRUE(plan.empty()) << plan.report.dump(2);
  EXPECT_EQ((*calendar_report(plan, "cn-holidays"))["action"], "unchanged");
  EXPECT_EQ((*calendar_report(plan, "cn-holidays"))["id"], 7);

  std::string changed = kCnHolidays;
  changed.replace(changed.find("National Day"), 12, "Golden Week");
  changed.replace(changed.find("    businessDays: [MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY]\n"), 65, "");
  changed.insert(changed.find("    includedDates:"), "      - {date: \"2026-10-02\"}\n");
  plan = plan_apply(file(changed), server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.update_calendars.size(), 1u) << plan.report.dump(2);
  const Calendar& updated = plan.update_calendars[0];
  EXPECT_EQ(updated.id, 7);
  EXPECT_EQ(updated.version, 4) << "the version read, which the store's write is guarded by";
  EXPECT_FALSE(updated.business_days.has_value());
  ASSERT_EQ(updated.dates.size(), 4u);
  EXPECT_EQ(updated.dates[2].day.name, "Golden Week");
  EXPECT_EQ(updated.dates[2].source, "ics") << "renamed by hand, still its import's";
  EXPECT_EQ(updated.dates[2].source_uid, "uid-1");
  EXPECT_EQ(updated.dates[3].day.day, 2);
  EXPECT_EQ(updated.dates[3].source, "");
  const json* report = calendar_report(plan, "cn-holidays");
  EXPECT_EQ((*report)["action"], "update");
  EXPECT_EQ((*report)["changes"], json::parse(R"([
      {"field":"businessDays","from":["MONDAY","TUESDAY","WEDNESDAY","THURSDAY","FRIDAY"],"to":"every day"},
      {"field":"excludedDates[2026-10-01]","from":"National Day","to":"Golden Week"},
      {"field":"excludedDates[2026-10-02]","to":""}])"));
  EXPECT_EQ(plan.report["summary"]["update"], 1);
}

TEST(ApplyPlannerCalendars, ProblemsOfACalendarOrOfTheCalendarAJobNamesAreAtTheirPath) {
  Server server;
  const std::string head = "calendars:\n  - name: cn\n";
  auto info = refusal(file(head + "    excludedDates:\n      - {date: \"2026-01-05\"}\n      - {date: \"2026-02-30\"}\ngroups: []\n"),
                      server.snapshot(), admin_user());
  EXPECT_EQ(info.status, 400);
  EXPECT_EQ(info.field, "calendars[cn].excludedDates[1]");
  EXPECT_EQ(info.message.rfind("calendars[cn].excludedDates[1]: ", 0), 0u) << info.message;
  info = refusal(file(head + "    timezone: Mars/Base\ngroups: []\n"), server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "calendars[cn].timezone");
  info = refusal(file(head + "    excludedDates:\n      - {date: \"2026-01-05\", name: \"a\\u0007bell\"}\ngroups: []\n"),
                 server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "calendars[cn].excludedDates[0].name");

  const std::string job = "groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      x:\n        jobDesc: x\n"
                          "        executorHandler: h\n        scheduleType: CRON\n        scheduleConf: \"0 0 10 ? * SUN\"\n"
                          "        running: true\n";
  info = refusal(file(job + "        calendar: missing\n"), server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "groups[billing].jobs[x].calendar");
  EXPECT_NE(info.message.find("no calendar is named 'missing'"), std::string::npos) << info.message;
  // Sundays at 10 on Mondays only: never.
  info = refusal(file("calendars:\n  - {name: mondays, businessDays: [MONDAY]}\n" + job +
                      "        calendar: mondays\n        calendarMode: only\n"),
                 server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "groups[billing].jobs[x].calendar");
  EXPECT_NE(info.message.find("calendar mondays lets no fire through within ten years"), std::string::npos) << info.message;
}

TEST(ApplyPlannerCalendars, OnlyAdminsCreateOrChangeCalendarsAndEveryoneNamesThem) {
  Server server;
  add_cn_holidays(server);
  const std::string job =
      "  - appName: billing\n    title: Billing\n    jobs:\n      x: {jobDesc: x, executorHandler: h, calendar: cn-holidays}\n";
  std::string unchanged = kCnHolidays;
  unchanged.replace(unchanged.find("groups: []\n"), 11, "groups:\n" + job);
  const auto plan = plan_apply(file(unchanged), server.snapshot(), normal_user({1}), false, kNow);
  ASSERT_EQ(plan.create_jobs.size(), 1u);
  EXPECT_EQ(plan.create_jobs[0].calendar, "cn-holidays");

  std::string changed = unchanged;
  changed.replace(changed.find("National Day"), 12, "Golden Week");
  auto info = refusal(file(changed), server.snapshot(), normal_user({1}));
  EXPECT_EQ(info.status, 403);
  EXPECT_EQ(info.message, "calendars[cn-holidays]: changing a calendar needs the admin role");
  info = refusal(file("calendars:\n  - name: new-one\ngroups: []\n"), server.snapshot(), normal_user({1}));
  EXPECT_EQ(info.status, 403);
  EXPECT_EQ(info.message, "calendars[new-one]: creating a calendar needs the admin role");
}

TEST(ApplyPlannerCalendars, ARunningJobComesSoonerWhenItsCalendarNoLongerExcludesADay) {
  Server server;
  auto& c = server.add_calendar(7, "holidays");
  c.dates = {date_of(2026, 1, 1, "New Year")};
  auto& daily = server.add_job(10, 1, "daily");
  daily.schedule_type = ScheduleType::kCron;
  daily.schedule_conf = "0 0 10 * * ?";
  daily.calendar.calendar_id = 7;
  daily.trigger_status = 1;
  daily.trigger_next_time = kNow + 34 * kHour;  // 2026-01-02 10:00 UTC, past the holiday
  const std::string job = "groups:\n  - appName: billing\n    title: Billing\n    jobs:\n"
                          "      daily: {jobDesc: Job daily, executorHandler: handler, scheduleType: CRON, "
                          "scheduleConf: \"0 0 10 * * ?\", calendar: holidays, running: true}\n";
  auto plan = plan_apply(file("calendars:\n  - name: holidays\n" + job), server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.update_jobs.size(), 1u) << plan.report.dump(2);
  EXPECT_EQ(plan.update_jobs[0].job.trigger_next_time, kNow + 10 * kHour) << "the day it no longer excludes";
  EXPECT_EQ((*job_report(plan, "daily"))["action"], "unchanged") << "its own fields are the file's";

  // A calendar that now excludes more leaves it alone: the scan skips what it excludes.
  plan = plan_apply(file("calendars:\n  - name: holidays\n    excludedDates:\n      - {date: \"2026-01-01\"}\n"
                         "      - {date: \"2026-01-02\"}\n" + job),
                    server.snapshot(), admin_user(), false, kNow);
  EXPECT_EQ(plan.update_calendars.size(), 1u);
  EXPECT_TRUE(plan.update_jobs.empty()) << plan.report.dump(2);
}

TEST(ApplyPlannerCalendars, PruneDeletesACalendarTheFileDropsOnlyOnceNothingNamesIt) {
  Server server;
  server.add_calendar(7, "old");
  server.add_calendar(8, "shared");
  server.add_calendar(9, "unused");
  server.add_job(10, 1, "a").calendar.calendar_id = 7;
  server.add_job(11, 1, "b").calendar.calendar_id = 8;
  server.add_job(20, 2, "other").calendar.calendar_id = 8;
  const std::string jobs = "groups:\n  - appName: billing\n    title: Billing\n    jobs:\n"
                           "      a: {jobDesc: Job a, executorHandler: handler}\n"
                           "      b: {jobDesc: Job b, executorHandler: handler}\n";
  EXPECT_TRUE(plan_apply(file(jobs), server.snapshot(), admin_user(), false, kNow).delete_calendars.empty())
      << "without --prune no calendar goes";
  auto plan = plan_apply(file(jobs), server.snapshot(), admin_user(), true, kNow);
  EXPECT_EQ(plan.delete_calendars, (std::vector<std::int64_t>{7})) << "shared is still reports/other's; unused was not the file's";
  EXPECT_EQ((*calendar_report(plan, "old"))["action"], "delete");
  EXPECT_EQ(plan.report["summary"]["delete"], 1);
  // Listed in the file, it stays; named by a job of the file, it stays; a normal user's plan
  // leaves calendars alone.
  EXPECT_TRUE(plan_apply(file("calendars:\n  - name: old\n" + jobs), server.snapshot(), admin_user(), true, kNow)
                  .delete_calendars.empty());
  std::string naming = jobs;
  naming.replace(naming.find("{jobDesc: Job b,"), 16, "{jobDesc: Job b, calendar: old,");
  EXPECT_TRUE(plan_apply(file(naming), server.snapshot(), admin_user(), true, kNow).delete_calendars.empty());
  EXPECT_TRUE(plan_apply(file(jobs), server.snapshot(), normal_user({1}), true, kNow).delete_calendars.empty());
  // A job --prune deletes names it no more.
  server.s.jobs.pop_back();
  server.add_job(12, 1, "pruned").calendar.calendar_id = 8;
  server.s.jobs[1].calendar.calendar_id = 0;
  plan = plan_apply(file(jobs), server.snapshot(), admin_user(), true, kNow);
  EXPECT_EQ(plan.delete_jobs, (std::vector<std::int64_t>{12}));
  EXPECT_EQ(plan.delete_calendars, (std::vector<std::int64_t>{7, 8}));
}

TEST(ApplyPlannerCalendars, AnExportWithCalendarsAndDstPoliciesAppliedBackChangesNothing) {
  Server server;
  add_cn_holidays(server);
  server.add_calendar(8, "not-named");
  auto& nightly = server.add_job(10, 1, "nightly");
  nightly.schedule_type = ScheduleType::kCron;
  nightly.schedule_conf = "0 30 2 * * ?";
  nightly.timezone = "Europe/Berlin";
  nightly.dst = {common::DstGap::kFireAfter, common::DstRepeat::kBoth};
  nightly.calendar = {7, common::CalendarMode::kOnly};
  nightly.trigger_status = 1;
  nightly.trigger_next_time = kNow + kHour;
  auto& w = server.add_workflow(5, 1, "etl", {{"a", 10}});
  w.calendar.calendar_id = 7;

  const auto exported = export_document(server.snapshot(), {"billing"}, admin_user());
  ASSERT_NO_THROW(common::jobs_file::check_json(exported)) << exported.dump(2);
  EXPECT_EQ(exported["calendars"], json::parse(R"([{"name": "cn-holidays", "timezone": "Asia/Shanghai",
      "businessDays": ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"],
      "excludedDates": [{"date": "--01-01", "name": "New Year"}, {"date": "2026-10-01", "name": "National Day"}],
      "includedDates": [{"date": "2026-09-27", "name": "Make-up day"}],
      "excludedTimes": [{"start": "12:00:00", "end": "13:00:00"}]}])"))
      << "the calendars named, whole, without the dates' sources";
  const json& entry = exported["groups"][0]["jobs"]["nightly"];
  EXPECT_EQ(entry["calendar"], "cn-holidays");
  EXPECT_EQ(entry["calendarMode"], "only");
  EXPECT_EQ(entry["dstGap"], "fire_after");
  EXPECT_EQ(entry["dstRepeat"], "both");
  EXPECT_EQ(exported["groups"][0]["workflows"]["etl"]["calendar"], "cn-holidays");
  EXPECT_FALSE(exported["groups"][0]["workflows"]["etl"].contains("calendarMode")) << "skip is the default";

  const auto reread = common::jobs_file::parse_yaml(common::jobs_file::to_yaml(exported), "export.yaml", {}).document;
  const auto plan = plan_apply(reread, server.snapshot(), admin_user(), true, kNow);
  EXPECT_TRUE(plan.empty()) << plan.report.dump(2);
  EXPECT_EQ(plan.report["summary"]["unchanged"], 4) << "the calendar, the group, the job, the workflow";
}

TEST(ApplyPlannerDst, TheFilesDstPolicyIsDriftAndReschedulesARunningJob) {
  Server server;
  auto& nightly = server.add_job(10, 1, "nightly");
  nightly.schedule_type = ScheduleType::kCron;
  nightly.schedule_conf = "0 30 2 * * ?";
  nightly.timezone = "Europe/Berlin";
  nightly.dst.gap = common::DstGap::kFireAfter;
  nightly.trigger_status = 1;
  nightly.trigger_next_time = kNow + 123;
  const std::string head = "groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      nightly:\n        jobDesc: Job nightly\n"
                           "        executorHandler: handler\n        scheduleType: CRON\n        scheduleConf: \"0 30 2 * * ?\"\n"
                           "        timezone: Europe/Berlin\n        running: true\n";
  auto plan = plan_apply(file(head + "        dstGap: fire_after\n"), server.snapshot(), admin_user(), false, kNow);
  EXPECT_TRUE(plan.empty()) << plan.report.dump(2);

  plan = plan_apply(file(head + "        dstRepeat: both\n"), server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.update_jobs.size(), 1u);
  EXPECT_EQ(plan.update_jobs[0].job.dst, (common::DstPolicy{common::DstGap::kSkip, common::DstRepeat::kBoth}));
  EXPECT_EQ((*job_report(plan, "nightly"))["changes"], json::parse(R"([{"field":"dstGap","from":"fire_after","to":"skip"},
      {"field":"dstRepeat","from":"once","to":"both"}])"));
  EXPECT_NE(plan.update_jobs[0].job.trigger_next_time, kNow + 123) << "a change of policy is a change of schedule";
  EXPECT_GT(plan.update_jobs[0].job.trigger_next_time, kNow);

  // Held to the API's rule too, in a document that did not pass the format's checks.
  const auto info = refusal(json::parse(R"({"groups":[{"appName":"billing","jobs":{"x":{"jobDesc":"x",
      "executorHandler":"h","scheduleType":"FIX_RATE","scheduleConf":"60","dstGap":"fire_after"}}}]})"),
                            server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "groups[billing].jobs[x].dstGap");
}

// ---- retries with back-off, concurrency limits and priorities

// billing's nightly job, as a file describes it before the fields of these tests.
const std::string kLimitsHead = "groups:\n  - appName: billing\n    title: Billing\n    jobs:\n      nightly:\n"
                                "        jobDesc: Job nightly\n        executorHandler: handler\n";

TEST(ApplyPlannerLimits, RetriesLimitsAndPrioritiesAreDriftAndThePlanWritesThem) {
  Server server;
  server.add_job(10, 1, "nightly");
  auto plan = plan_apply(file("groups:\n  - appName: billing\n    title: Billing\n    maxRunning: 5\n    jobs:\n      nightly:\n"
                              "        jobDesc: Job nightly\n        executorHandler: handler\n"
                              "        retryInterval: 10\n        retryBackoff: exponential\n        retryMultiplier: 1.5\n"
                              "        retryMaxInterval: 600\n        retryJitter: 10\n        maxConcurrent: 2\n        priority: -7\n"),
                         server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.update_jobs.size(), 1u) << plan.report.dump(2);
  const Job& job = plan.update_jobs[0].job;
  EXPECT_EQ(job.retry, (RetryPolicy{RetryBackoff::kExponential, 1.5, 600, 10}));
  EXPECT_EQ(job.max_concurrent, 2);
  EXPECT_EQ(job.priority, -7);
  EXPECT_EQ((*job_report(plan, "nightly"))["changes"], json::parse(R"([{"field":"retryInterval","from":0,"to":10},
      {"field":"retryBackoff","from":"fixed","to":"exponential"}, {"field":"retryMultiplier","to":1.5},
      {"field":"retryMaxInterval","to":600}, {"field":"retryJitter","from":0,"to":10},
      {"field":"maxConcurrent","from":0,"to":2}, {"field":"priority","from":0,"to":-7}])"));
  ASSERT_EQ(plan.update_groups.size(), 1u);
  EXPECT_EQ(plan.update_groups[0].max_running, 5);
  EXPECT_EQ(plan.report["groups"][0]["changes"], json::parse(R"([{"field":"maxRunning","from":0,"to":5}])"));

  // Left out, each is its default again: the file describes the job and the group whole.
  auto& nightly = server.s.jobs[0];
  nightly.retry = RetryPolicy{RetryBackoff::kExponential, 3.0, 60, 50};
  nightly.max_concurrent = 4;
  nightly.priority = 9;
  server.s.groups[0].max_running = 8;
  plan = plan_apply(file(kLimitsHead), server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.update_jobs.size(), 1u);
  // A fixed back-off has no multiplier or ceiling: the stored ones stay, for when it is
  // exponential again, as the console keeps them.
  EXPECT_EQ(plan.update_jobs[0].job.retry, (RetryPolicy{RetryBackoff::kFixed, 3.0, 60, 0}));
  EXPECT_EQ((*job_report(plan, "nightly"))["changes"], json::parse(R"([
      {"field":"retryBackoff","from":"exponential","to":"fixed"}, {"field":"retryMultiplier","from":3},
      {"field":"retryMaxInterval","from":60}, {"field":"retryJitter","from":50,"to":0},
      {"field":"maxConcurrent","from":4,"to":0}, {"field":"priority","from":9,"to":0}])"));
  EXPECT_EQ(plan.update_jobs[0].job.max_concurrent, 0);
  EXPECT_EQ(plan.update_jobs[0].job.priority, 0);
  ASSERT_EQ(plan.update_groups.size(), 1u);
  EXPECT_EQ(plan.update_groups[0].max_running, 0);
  EXPECT_EQ(plan.report["groups"][0]["changes"], json::parse(R"([{"field":"maxRunning","from":8,"to":0}])"));
}

TEST(ApplyPlannerLimits, AFixedBackOffLeavesTheStoredMultiplierAndCeilingAlone) {
  // The console keeps an exponential back-off's multiplier and ceiling under a fixed one, for when
  // it is chosen again; they make no retry wait otherwise, and a file cannot give them.
  Server server;
  auto& nightly = server.add_job(10, 1, "nightly");
  nightly.retry = RetryPolicy{RetryBackoff::kFixed, 3.0, 120, 0};
  auto plan = plan_apply(file(kLimitsHead), server.snapshot(), admin_user(), false, kNow);
  EXPECT_TRUE(plan.empty()) << plan.report.dump(2);

  plan = plan_apply(file(kLimitsHead + "        author: ops\n"), server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.update_jobs.size(), 1u);
  EXPECT_EQ(plan.update_jobs[0].job.retry, (RetryPolicy{RetryBackoff::kFixed, 3.0, 120, 0})) << "written as they are";

  // Chosen again, the file's exponential back-off is compared with the stored one.
  nightly.retry.backoff = RetryBackoff::kExponential;
  plan = plan_apply(file(kLimitsHead + "        retryBackoff: exponential\n        retryMultiplier: 3\n        retryMaxInterval: 120\n"),
                    server.snapshot(), admin_user(), false, kNow);
  EXPECT_TRUE(plan.empty()) << plan.report.dump(2);
  plan = plan_apply(file(kLimitsHead + "        retryBackoff: exponential\n"), server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.update_jobs.size(), 1u);
  EXPECT_EQ(plan.update_jobs[0].job.retry, (RetryPolicy{RetryBackoff::kExponential, 2.0, 0, 0}));
  EXPECT_EQ((*job_report(plan, "nightly"))["changes"], json::parse(R"([{"field":"retryMultiplier","from":3,"to":2},
      {"field":"retryMaxInterval","from":120,"to":0}])"));
}

TEST(ApplyPlannerLimits, NewGroupsAndJobsTakeTheFilesLimitsAndRetries) {
  Server server;
  const auto plan = plan_apply(file("groups:\n  - appName: payments\n    maxRunning: 3\n    jobs:\n      settle:\n"
                                    "        jobDesc: Settle\n        executorHandler: settle\n        retryBackoff: exponential\n"
                                    "        retryMultiplier: 4\n        maxConcurrent: 1\n        priority: 1000\n"),
                               server.snapshot(), admin_user(), false, kNow);
  ASSERT_EQ(plan.create_groups.size(), 1u);
  EXPECT_EQ(plan.create_groups[0].max_running, 3);
  EXPECT_NE(std::find(plan.report["groups"][0]["changes"].begin(), plan.report["groups"][0]["changes"].end(),
                      json::parse(R"({"field":"maxRunning","to":3})")),
            plan.report["groups"][0]["changes"].end())
      << plan.report.dump(2);
  ASSERT_EQ(plan.create_jobs.size(), 1u);
  EXPECT_EQ(plan.create_jobs[0].job.retry, (RetryPolicy{RetryBackoff::kExponential, 4.0, 0, 0}));
  EXPECT_EQ(plan.create_jobs[0].job.max_concurrent, 1);
  EXPECT_EQ(plan.create_jobs[0].job.priority, 1000);
  const auto& changes = (*job_report(plan, "settle"))["changes"];
  for (const char* field : {"retryBackoff", "retryMultiplier", "maxConcurrent", "priority"}) {
    EXPECT_TRUE(std::any_of(changes.begin(), changes.end(), [&](const json& c) { return c["field"] == field; }))
        << field << " " << changes.dump();
  }
  for (const char* field : {"retryMaxInterval", "retryJitter"}) {
    EXPECT_FALSE(std::any_of(changes.begin(), changes.end(), [&](const json& c) { return c["field"] == field; }))
        << field << " is its default";
  }
}

TEST(ApplyPlannerLimits, AValueTheApiRefusesIsAtItsPath) {
  // Documents that did not pass the format's checks are held to the API's.
  Server server;
  auto info = refusal(json::parse(R"({"groups":[{"appName":"billing","jobs":{"x":{"jobDesc":"x",
      "executorHandler":"h","priority":5000}}}]})"),
                      server.snapshot(), admin_user());
  EXPECT_EQ(info.status, 400);
  EXPECT_EQ(info.field, "groups[billing].jobs[x].priority");
  info = refusal(json::parse(R"({"groups":[{"appName":"billing","jobs":{"x":{"jobDesc":"x",
      "executorHandler":"h","retryBackoff":"exponential","retryMultiplier":0.5}}}]})"),
                 server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "groups[billing].jobs[x].retryMultiplier");
  info = refusal(json::parse(R"({"groups":[{"appName":"billing","maxRunning":10001}]})"), server.snapshot(), admin_user());
  EXPECT_EQ(info.field, "groups[billing].maxRunning");
  EXPECT_NE(info.message.find("groups[billing].maxRunning"), std::string::npos) << info.message;
}

TEST(ApplyPlannerLimits, AnExportWithRetriesLimitsAndPrioritiesAppliedBackChangesNothing) {
  Server server;
  server.s.groups[0].max_running = 4;
  auto& nightly = server.add_job(10, 1, "nightly");
  nightly.retry = RetryPolicy{RetryBackoff::kExponential, 2.5, 600, 10};
  nightly.max_concurrent = 3;
  nightly.priority = -4;
  auto& hourly = server.add_job(11, 1, "hourly");
  hourly.retry = RetryPolicy{RetryBackoff::kFixed, 3.0, 120, 5};
  auto& plain = server.add_job(12, 1, "plain");
  plain.retry = RetryPolicy{RetryBackoff::kExponential, 2.0, 0, 0};

  const auto exported = export_document(server.snapshot(), {"billing"}, admin_user());
  ASSERT_NO_THROW(common::jobs_file::check_json(exported)) << exported.dump(2);
  const json& group = exported["groups"][0];
  EXPECT_EQ(group["maxRunning"], 4);
  EXPECT_EQ(group["jobs"]["nightly"]["retryBackoff"], "exponential");
  EXPECT_EQ(group["jobs"]["nightly"]["retryMultiplier"], 2.5);
  EXPECT_EQ(group["jobs"]["nightly"]["retryMaxInterval"], 600);
  EXPECT_EQ(group["jobs"]["nightly"]["retryJitter"], 10);
  EXPECT_EQ(group["jobs"]["nightly"]["maxConcurrent"], 3);
  EXPECT_EQ(group["jobs"]["nightly"]["priority"], -4);
  EXPECT_EQ(group["jobs"]["hourly"], json::parse(R"({"jobDesc":"Job hourly","executorHandler":"handler","retryJitter":5})"))
      << "a fixed back-off's kept multiplier and ceiling are not written";
  EXPECT_EQ(group["jobs"]["plain"], json::parse(R"({"jobDesc":"Job plain","executorHandler":"handler",
      "retryBackoff":"exponential"})"))
      << "the defaults are left out";

  const auto reread = common::jobs_file::parse_yaml(common::jobs_file::to_yaml(exported), "export.yaml", {}).document;
  const auto plan = plan_apply(reread, server.snapshot(), admin_user(), true, kNow);
  EXPECT_TRUE(plan.empty()) << plan.report.dump(2);
  EXPECT_EQ(plan.report["summary"]["unchanged"], 4) << "the group and its three jobs";
}

}  // namespace
}  // namespace cronwheel::admin
