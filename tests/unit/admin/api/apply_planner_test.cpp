#include "admin/api/apply_planner.h"

#include <gtest/gtest.h>

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

  // Identities follow the whole jobs (children included) once the test set them.
  const JobsSnapshot& snapshot() {
    s.identities.clear();
    for (const auto& job : s.jobs) s.identities.push_back({job.id, job.job_group, job.name, job.child_job_ids});
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

}  // namespace
}  // namespace cronwheel::admin
