// PgApplyStore with the real planner on a fresh PostgreSQL database: what an apply writes, that
// it writes all or nothing, that two applies never interleave, and that an export applied back
// changes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <thread>

#include <pqxx/pqxx>

#include "admin/api/apply_planner.h"
#include "admin/pg/database.h"
#include "admin/pg/pg_alarm_store.h"
#include "admin/pg/pg_apply_store.h"
#include "admin/pg/pg_calendar_store.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_workflow_store.h"
#include "common/http/http_error.h"
#include "common/jobs_file/jobs_file.h"
#include "tests/support/fake_clock.h"
#include "tests/support/migrated_database.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {
namespace {

using json = nlohmann::json;

constexpr std::int64_t kNow = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
const admin::Actor kOperator{std::nullopt, "operator", "127.0.0.1"};

admin::Principal admin_principal() {
  admin::Principal p;
  p.user.role = "admin";
  return p;
}

class ApplyFixture : public ::testing::Test {
 protected:
  ApplyFixture()
      : migrated_(migrate_schema(db_)),
        database_(pool_options(db_, 4), &prepare),
        stores_(database_, clock_),
        store_(database_, clock_),
        workflows_(database_, clock_),
        calendars_(database_, clock_) {}

  static void prepare(pqxx::connection& c) {
    admin::PgStores::prepare(c);
    admin::PgAlarmStore::prepare(c);
    admin::PgApplyStore::prepare(c);
    admin::PgWorkflowStore::prepare(c);
    admin::PgCalendarStore::prepare(c);
  }

  admin::ApplyOutcome apply(const std::string& yaml, bool dry_run = false, bool prune = false) {
    const auto document = common::jobs_file::parse_yaml(yaml, "test.yaml", {}).document;
    return store_.apply(
        admin::app_names_of(document),
        [&](const admin::JobsSnapshot& s) { return admin::plan_apply(document, s, admin_principal(), prune, kNow); },
        dry_run, kOperator);
  }

  std::int64_t count(const std::string& sql) {
    return database_.read([&](pqxx::read_transaction& tx) { return tx.exec1(sql)[0].as<std::int64_t>(); });
  }
  std::string text(const std::string& sql) {
    return database_.read([&](pqxx::read_transaction& tx) { return tx.exec1(sql)[0].as<std::string>(); });
  }

  TestDatabase db_;
  bool migrated_;
  FakeClock clock_{kNow};
  admin::Database database_;
  admin::PgStores stores_;
  admin::PgApplyStore store_;
  admin::PgWorkflowStore workflows_;  // reads what an apply wrote as the API and the runner do
  admin::PgCalendarStore calendars_;  // the same for calendars
};

const std::string kFile = R"(groups:
  - appName: billing
    title: Billing
    jobs:
      nightly:
        jobDesc: Nightly invoices
        scheduleType: CRON
        scheduleConf: "0 0 2 * * ?"
        timezone: Europe/Berlin
        executorHandler: invoiceJob
        childJobs: [reconcile, reports/weekly]
        running: true
      reconcile:
        jobDesc: Reconcile
        glueType: GLUE_SHELL
        glueSource: "echo three\n"
        glueRemark: third
        glueHistory:
          - {createdAt: 1700000000000, glueSource: "echo one\n", glueRemark: first}
          - {createdAt: 1700000100000, glueSource: "echo two\n", glueRemark: second}
  - appName: reports
    title: Reports
    addressType: manual
    addressList: [http://10.0.0.5:9999/]
    jobs:
      weekly:
        jobDesc: Weekly report
        executorHandler: weekly
)";

TEST_F(ApplyFixture, CreatesGroupsJobsChildrenAndHistoryWithOneAuditEntry) {
  const auto outcome = apply(kFile);
  ASSERT_TRUE(outcome.audit_id.has_value());
  EXPECT_EQ(count("SELECT count(*) FROM job_group"), 2);
  EXPECT_EQ(count("SELECT count(*) FROM job_info"), 3);
  const auto nightly = outcome.created_jobs.at({"billing", "nightly"});
  const auto reconcile = outcome.created_jobs.at({"billing", "reconcile"});
  const auto weekly = outcome.created_jobs.at({"reports", "weekly"});
  EXPECT_EQ(text("SELECT child_job_ids::text FROM job_info WHERE id = " + std::to_string(nightly)),
            "{" + std::to_string(reconcile) + "," + std::to_string(weekly) + "}");
  EXPECT_EQ(count("SELECT trigger_status FROM job_schedule WHERE job_id = " + std::to_string(nightly)), 1);
  EXPECT_GT(count("SELECT trigger_next_time FROM job_schedule WHERE job_id = " + std::to_string(nightly)), kNow);
  // The history, oldest first, then the source the job has.
  const auto versions = stores_.scripts().versions(reconcile);  // newest first
  ASSERT_EQ(versions.size(), 3u);
  EXPECT_EQ(versions[2].glue_source, "echo one\n");
  EXPECT_EQ(versions[2].created_at, 1700000000000);
  EXPECT_EQ(versions[1].glue_remark, "second");
  EXPECT_EQ(versions[0].glue_source, "echo three\n");
  EXPECT_EQ(count("SELECT count(*) FROM audit_log"), 1) << "one entry for the whole apply";
  EXPECT_EQ(text("SELECT action || ' ' || (after->'summary'->>'create') FROM audit_log"), "apply 5");
}

// A file that stops a running job stops it as POST jobs/{id}/stop does: its fires decided and not
// yet sent are cancelled with the stop (JobStore::set_trigger_status); a changed job keeps them.
TEST_F(ApplyFixture, AFileThatStopsARunningJobCancelsItsDecidedFires) {
  const auto nightly = apply(kFile).created_jobs.at({"billing", "nightly"});
  auto decide = [&](std::int64_t at) {
    return database_.transact([&](pqxx::work& tx) {
      return tx.exec_params1("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node)"
                             " SELECT job_group, id, 'pending', 'SCHEDULE', $2, 'node-1' FROM job_info WHERE id = $1"
                             " RETURNING id",
                             nightly, at)[0]
          .as<std::int64_t>();
    });
  };
  const auto kept = decide(kNow + 60'000);
  std::string changed = kFile;
  changed.replace(changed.find("Nightly invoices"), 16, "Nightly invoices, changed");
  const auto change = apply(changed);
  EXPECT_EQ(text("SELECT state FROM job_log WHERE id = " + std::to_string(kept)), "pending");
  EXPECT_EQ(change.changed_jobs, std::vector<std::int64_t>{nightly}) << "its held runs are sent again as it is now";
  EXPECT_TRUE(change.stopped_jobs.empty());

  std::string stopped = changed;
  stopped.replace(stopped.find("        running: true\n"), 22, "        running: false\n");
  EXPECT_TRUE(apply(stopped, /*dry_run=*/true).stopped_jobs.empty()) << "a dry run writes nothing";
  const auto stop = apply(stopped);
  EXPECT_EQ(stop.stopped_jobs, std::vector<std::int64_t>{nightly}) << "its held runs are cancelled";
  EXPECT_TRUE(stop.changed_jobs.empty());
  EXPECT_EQ(count("SELECT trigger_status FROM job_schedule WHERE job_id = " + std::to_string(nightly)), 0);
  EXPECT_EQ(text("SELECT state || ' ' || trigger_msg FROM job_log WHERE id = " + std::to_string(kept)),
            "cancelled Cancelled: job stopped by " + kOperator.username + " before its instant");
}

TEST_F(ApplyFixture, DryRunAndASecondApplyChangeNothing) {
  EXPECT_TRUE(apply(kFile, /*dry_run=*/true).plan.report["changed"].get<bool>());
  EXPECT_EQ(count("SELECT count(*) FROM job_info"), 0);
  apply(kFile);
  const auto audited = count("SELECT count(*) FROM audit_log");
  const auto again = apply(kFile);
  EXPECT_FALSE(again.plan.report["changed"].get<bool>()) << again.plan.report.dump(2);
  EXPECT_FALSE(again.audit_id.has_value());
  EXPECT_EQ(count("SELECT count(*) FROM audit_log"), audited);
}

TEST_F(ApplyFixture, AnExportAppliedBackIsANoOp) {
  apply(kFile);
  database_.transact([](pqxx::work& tx) {
    tx.exec("INSERT INTO alarm_channel (name, kind, target, jobs) SELECT 'ops', 'email', 'ops@example.com', "
            "ARRAY[id] FROM job_info WHERE name = 'weekly'");
  });
  const auto exported = admin::export_document(store_.snapshot({}), {}, admin_principal());
  EXPECT_EQ(exported["groups"][1]["jobs"]["weekly"]["alarmChannels"], json::parse(R"(["ops"])"));
  const auto outcome = apply(common::jobs_file::to_yaml(exported), false, /*prune=*/true);
  EXPECT_FALSE(outcome.plan.report["changed"].get<bool>()) << outcome.plan.report.dump(2);
}

TEST_F(ApplyFixture, AJobsDstPolicyIsTheFilesAndAnExportAppliedBackKeepsIt) {
  std::string with_policy = kFile;
  with_policy.insert(with_policy.find("        executorHandler: invoiceJob"), "        dstGap: fire_after\n        dstRepeat: both\n");
  const auto nightly = apply(with_policy).created_jobs.at({"billing", "nightly"});
  const std::string id = std::to_string(nightly);
  EXPECT_EQ(text("SELECT dst_gap || ' ' || dst_repeat FROM job_info WHERE id = " + id), "FIRE_AFTER BOTH");

  const auto exported = admin::export_document(store_.snapshot({"billing"}), {"billing"}, admin_principal());
  EXPECT_EQ(exported["groups"][0]["jobs"]["nightly"]["dstGap"], "fire_after");
  EXPECT_FALSE(apply(common::jobs_file::to_yaml(exported)).plan.report["changed"].get<bool>());

  // Left out, it is the default again, as any key a file leaves out.
  const auto outcome = apply(kFile);
  EXPECT_EQ(outcome.plan.update_jobs.size(), 1u) << outcome.plan.report.dump(2);
  EXPECT_EQ(text("SELECT dst_gap || ' ' || dst_repeat FROM job_info WHERE id = " + id), "SKIP ONCE");
}

TEST_F(ApplyFixture, RetriesLimitsAndPrioritiesAreWrittenAndAnExportAppliedBackKeepsThem) {
  std::string with_limits = kFile;
  with_limits.insert(with_limits.find("        executorHandler: invoiceJob"),
                     "        retryBackoff: exponential\n        retryMultiplier: 1.5\n        retryMaxInterval: 600\n"
                     "        retryJitter: 10\n        maxConcurrent: 2\n        priority: -3\n");
  with_limits.insert(with_limits.find("    jobs:\n      nightly:"), "    maxRunning: 4\n");
  const auto nightly = apply(with_limits).created_jobs.at({"billing", "nightly"});
  const std::string id = std::to_string(nightly);
  const std::string columns = "SELECT concat_ws(' ', retry_backoff, retry_multiplier, retry_max_interval, retry_jitter, "
                              "max_concurrent, priority) FROM job_info WHERE id = " + id;
  const std::string group_limit = "SELECT max_running FROM job_group WHERE app_name = 'billing'";
  EXPECT_EQ(text(columns), "EXPONENTIAL 1.5 600 10 2 -3");
  EXPECT_EQ(count(group_limit), 4);

  // Changed by the file: written by the update, the group's limit too.
  std::string changed = with_limits;
  changed.replace(changed.find("retryMultiplier: 1.5"), 20, "retryMultiplier: 2.5");
  changed.replace(changed.find("priority: -3"), 12, "priority: 70");
  changed.replace(changed.find("maxRunning: 4"), 13, "maxRunning: 9");
  const auto outcome = apply(changed);
  EXPECT_EQ(outcome.plan.update_jobs.size(), 1u) << outcome.plan.report.dump(2);
  EXPECT_EQ(outcome.plan.update_groups.size(), 1u) << outcome.plan.report.dump(2);
  EXPECT_EQ(text(columns), "EXPONENTIAL 2.5 600 10 2 70");
  EXPECT_EQ(count(group_limit), 9);

  // apply → export → apply changes nothing.
  const auto exported = admin::export_document(store_.snapshot({"billing"}), {"billing"}, admin_principal());
  EXPECT_EQ(exported["groups"][0]["maxRunning"], 9);
  EXPECT_EQ(exported["groups"][0]["jobs"]["nightly"]["retryMultiplier"], 2.5);
  EXPECT_EQ(exported["groups"][0]["jobs"]["nightly"]["priority"], 70);
  EXPECT_FALSE(apply(common::jobs_file::to_yaml(exported)).plan.report["changed"].get<bool>());

  // Left out, each is its default again; a fixed back-off keeps the stored multiplier and ceiling.
  apply(kFile);
  EXPECT_EQ(text(columns), "FIXED 2.5 600 0 0 0");
  EXPECT_EQ(count(group_limit), 0);
  const auto again = admin::export_document(store_.snapshot({"billing"}), {"billing"}, admin_principal());
  EXPECT_FALSE(again["groups"][0]["jobs"]["nightly"].contains("retryMultiplier")) << again.dump(2);
  EXPECT_FALSE(again["groups"][0].contains("maxRunning")) << again.dump(2);
  EXPECT_FALSE(apply(common::jobs_file::to_yaml(again)).plan.report["changed"].get<bool>());
}

TEST_F(ApplyFixture, AFailureHalfWayLeavesEverythingAsItWas) {
  apply(kFile);
  const auto audited = count("SELECT count(*) FROM audit_log");
  // A job named like one created behind the planner's back: the insert fails after the group
  // was already created and a job updated.
  const auto document = common::jobs_file::parse_yaml(R"(groups:
  - appName: newgroup
    jobs:
      first: {jobDesc: First, executorHandler: h}
  - appName: billing
    title: Billing renamed
    jobs:
      clash: {jobDesc: Clash, executorHandler: h}
)",
                                                      "t.yaml", {})
                            .document;
  EXPECT_THROW(store_.apply(
                   admin::app_names_of(document),
                   [&](const admin::JobsSnapshot& s) {
                     auto plan = admin::plan_apply(document, s, admin_principal(), false, kNow);
                     // What a concurrent POST jobs would have done between the read and the write.
                     database_.transact([](pqxx::work& tx) {
                       tx.exec("INSERT INTO job_info (job_group, job_desc, executor_handler, name) "
                               "SELECT id, 'x', 'h', 'clash' FROM job_group WHERE app_name = 'reports'");
                     });
                     plan.create_jobs.back().app_name = "reports";  // and it lands in the group that has it
                     plan.create_jobs.back().job.job_group =
                         s.groups[s.groups[0].app_name == "reports" ? 0 : 1].id;
                     return plan;
                   },
                   false, kOperator),
               std::exception);
  EXPECT_EQ(count("SELECT count(*) FROM job_group WHERE app_name = 'newgroup'"), 0);
  EXPECT_EQ(text("SELECT title FROM job_group WHERE app_name = 'billing'"), "Billing");
  EXPECT_EQ(count("SELECT count(*) FROM audit_log"), audited);
}

TEST_F(ApplyFixture, AProblemInTheFileWritesNothing) {
  std::string bad = kFile;
  bad.replace(bad.find("0 0 2 * * ?"), 11, "0 0 25 * * ?");
  EXPECT_THROW(apply(bad), common::http::HttpError);
  EXPECT_EQ(count("SELECT count(*) FROM job_group"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM audit_log"), 0);
}

TEST_F(ApplyFixture, TwoAppliesNeverInterleave) {
  std::promise<void> first_planned;
  std::promise<void> let_first_go;
  auto first_go = let_first_go.get_future().share();
  const auto first_doc = common::jobs_file::parse_yaml("groups:\n  - appName: billing\n    jobs:\n      a: {jobDesc: A, executorHandler: h}\n",
                                                       "a.yaml", {})
                             .document;
  auto first = std::async(std::launch::async, [&] {
    auto outcome = store_.apply({"billing"},
                                [&](const admin::JobsSnapshot& s) {
                                  auto plan = admin::plan_apply(first_doc, s, admin_principal(), false, kNow);
                                  first_planned.set_value();
                                  first_go.wait();
                                  return plan;
                                },
                                false, kOperator);
    return outcome;
  });
  first_planned.get_future().wait();
  // The second reads the server only once the first committed: it sees job a and updates it.
  const auto second_doc = common::jobs_file::parse_yaml("groups:\n  - appName: billing\n    jobs:\n      a: {jobDesc: A2, executorHandler: h}\n",
                                                        "b.yaml", {})
                              .document;
  auto second = std::async(std::launch::async, [&] {
    return store_.apply({"billing"},
                        [&](const admin::JobsSnapshot& s) {
                          // What it read holds the first's commit (a flag the first thread set after
                          // its apply returned could still be unset here: the commit comes first).
                          const bool sees_a = std::any_of(s.jobs.begin(), s.jobs.end(),
                                                          [](const admin::Job& j) { return j.name == "a"; });
                          EXPECT_TRUE(sees_a) << "the second apply read before the first committed";
                          return admin::plan_apply(second_doc, s, admin_principal(), false, kNow);
                        },
                        false, kOperator);
  });
  EXPECT_EQ(second.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout) << "it waits for the first";
  let_first_go.set_value();
  first.get();
  const auto outcome = second.get();
  ASSERT_EQ(outcome.plan.update_jobs.size(), 1u);
  EXPECT_EQ(text("SELECT job_desc FROM job_info WHERE name = 'a'"), "A2");
  EXPECT_EQ(count("SELECT count(*) FROM job_info"), 1);
}

TEST_F(ApplyFixture, PruneDeletesAndChannelsFollowTheFile) {
  apply(kFile);
  // A run of the job about to be pruned that its executor holds for its instant (lead dispatch),
  // and one that ran long ago.
  const auto held = database_.transact([](pqxx::work& tx) {
    tx.exec("INSERT INTO alarm_channel (name, kind, target, jobs) SELECT 'ops', 'email', 'ops@example.com', "
            "array_agg(id ORDER BY id) FROM job_info");
    tx.exec("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address,"
            " trigger_time) SELECT job_group, id, 'succeeded', 'SCHEDULE', 1700000000000, 'node-1', 'http://10.0.0.1:9999/',"
            " now() - interval '1 day' FROM job_info WHERE name = 'reconcile'");
    return tx.exec("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address,"
                   " trigger_time) SELECT job_group, id, 'triggered', 'SCHEDULE', (extract(epoch FROM now()) * 1000)::bigint"
                   " + 2500, 'node-1', 'http://10.0.0.1:9999/', now() + interval '3 seconds' FROM job_info"
                   " WHERE name = 'reconcile' RETURNING id")[0][0]
        .as<std::int64_t>();
  });
  const auto outcome = apply(R"(groups:
  - appName: billing
    title: Billing
    jobs:
      nightly:
        jobDesc: Nightly invoices
        scheduleType: CRON
        scheduleConf: "0 0 2 * * ?"
        timezone: Europe/Berlin
        executorHandler: invoiceJob
        childJobs: [reports/weekly]
        running: true
)",
                             false, /*prune=*/true);
  EXPECT_EQ(outcome.plan.delete_jobs.size(), 1u);
  EXPECT_EQ(count("SELECT count(*) FROM job_info WHERE name = 'reconcile'"), 0);
  ASSERT_EQ(outcome.deleted_held_runs.size(), 1u) << "to be dropped by its executor";
  EXPECT_EQ(outcome.deleted_held_runs[0].id, held);
  EXPECT_EQ(outcome.deleted_held_runs[0].executor_address, "http://10.0.0.1:9999/");
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE id = " + std::to_string(held)), 0) << "gone with its job";
  // ops keeps reports/weekly (outside the file's groups), loses nightly (the file names none).
  EXPECT_EQ(text("SELECT jobs::text FROM alarm_channel"),
            "{" + std::to_string(count("SELECT id FROM job_info WHERE name = 'weekly'")) + "}");
}

TEST_F(ApplyFixture, UsersComeWithoutPasswordsAndTheirGroups) {
  admin::User root;
  root.username = "root";
  root.role = "admin";
  root.password_hash = "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaA";
  stores_.users().create(root, kOperator);
  const auto outcome = apply(kFile + "users:\n  - {username: alice, groups: [billing, reports]}\n  - {username: Root, role: admin}\n");
  ASSERT_TRUE(outcome.audit_id);
  const auto alice = stores_.users().find_by_username("alice");
  ASSERT_TRUE(alice);
  EXPECT_TRUE(alice->password_hash.empty());
  EXPECT_EQ(alice->groups.size(), 2u);
  EXPECT_EQ(count("SELECT count(*) FROM app_user"), 2) << "Root is root";
  // Demoting the only admin is refused, and nothing of the file is written.
  EXPECT_THROW(store_.apply({}, [&](const admin::JobsSnapshot& s) {
    auto plan = admin::plan_apply(json::parse(R"({"groups":[]})"), s, admin_principal(), false, kNow);
    admin::PlannedUser demoted{*stores_.users().find_by_username("root"), {}};
    demoted.user.role = "normal";
    plan.users.push_back(demoted);
    return plan;
  }, false, kOperator), admin::Conflict);
  EXPECT_EQ(text("SELECT role FROM app_user WHERE username = 'root'"), "admin");
}

// ---- workflows ----------------------------------------------------------------------------

// kFile with a workflow in billing running three jobs by name: two the same file creates, one
// of another group.
std::string with_billing_workflows(const std::string& workflows) {
  std::string file = kFile;
  return file.insert(file.find("  - appName: reports"), workflows);
}
const std::string kWorkflowFile = with_billing_workflows(R"(    workflows:
      month-end:
        description: Invoice, reconcile, report
        scheduleType: CRON
        scheduleConf: "0 0 3 1 * ?"
        timezone: Europe/Berlin
        params: [{name: month, default: current}]
        nodes:
          invoice:
            job: nightly
            params: "--month=${params.month}"
          reconcile:
            job: reconcile
            after: [invoice]
          report:
            job: reports/weekly
            after: [invoice, reconcile]
            onFailure: CONTINUE
        running: true
)");

TEST_F(ApplyFixture, CreatesJobsAndAWorkflowNamingThemInOneTransaction) {
  const auto outcome = apply(kWorkflowFile);
  const auto id = outcome.created_workflows.at({"billing", "month-end"});
  const auto w = workflows_.get(id);
  ASSERT_TRUE(w.has_value()) << "the workflow store reads what the apply wrote";
  EXPECT_EQ(w->job_group, count("SELECT id FROM job_group WHERE app_name = 'billing'"));
  EXPECT_EQ(w->description, "Invoice, reconcile, report");
  EXPECT_EQ(w->version, 1);
  EXPECT_EQ(w->trigger_status, 1);
  EXPECT_GT(w->trigger_next_time, kNow);
  ASSERT_EQ(w->graph.nodes.size(), 3u);
  EXPECT_EQ(w->graph.nodes[0].key, "invoice");
  EXPECT_EQ(w->graph.nodes[0].job_id, outcome.created_jobs.at({"billing", "nightly"}));
  EXPECT_EQ(w->graph.nodes[0].params, "--month=${params.month}");
  EXPECT_EQ(w->graph.nodes[1].job_id, outcome.created_jobs.at({"billing", "reconcile"}));
  EXPECT_EQ(w->graph.nodes[2].job_id, outcome.created_jobs.at({"reports", "weekly"}));
  EXPECT_EQ(w->graph.nodes[2].on_failure, admin::NodeFailurePolicy::kContinue);
  EXPECT_EQ(w->graph.edges, (std::vector<admin::WorkflowEdge>{{"invoice", "reconcile"}, {"invoice", "report"}, {"reconcile", "report"}}));
  ASSERT_EQ(w->params.size(), 1u);
  EXPECT_EQ(w->params[0].default_value, "current");
  EXPECT_EQ(count("SELECT count(*) FROM workflow_job WHERE workflow_id = " + std::to_string(id)), 3)
      << "its jobs are recorded: none can be deleted while it runs them";
  EXPECT_EQ(count("SELECT count(*) FROM audit_log"), 1) << "the apply's one entry, no workflow.create beside it";
  EXPECT_EQ(text("SELECT after->'workflows'->0->>'action' FROM audit_log"), "create");
  EXPECT_THROW(stores_.jobs().remove(outcome.created_jobs.at({"reports", "weekly"}), kOperator), std::exception)
      << "a job the workflow runs cannot be deleted";
}

TEST_F(ApplyFixture, AWorkflowReappliedOrExportedAndAppliedBackIsUnchanged) {
  apply(kWorkflowFile);
  const auto audited = count("SELECT count(*) FROM audit_log");
  auto again = apply(kWorkflowFile);
  EXPECT_FALSE(again.plan.report["changed"].get<bool>()) << again.plan.report.dump(2);
  const auto exported = admin::export_document(store_.snapshot({}), {}, admin_principal());
  EXPECT_EQ(exported["groups"][0]["workflows"]["month-end"]["nodes"]["report"]["after"], json::parse(R"(["invoice","reconcile"])"));
  again = apply(common::jobs_file::to_yaml(exported), false, /*prune=*/true);
  EXPECT_FALSE(again.plan.report["changed"].get<bool>()) << again.plan.report.dump(2);
  EXPECT_EQ(count("SELECT count(*) FROM audit_log"), audited);
}

TEST_F(ApplyFixture, AnUpdateBumpsTheVersionAndKeepsTheWorkflowsJobsInStep) {
  const auto id = apply(kWorkflowFile).created_workflows.at({"billing", "month-end"});
  std::string changed = kWorkflowFile;
  // report leaves the workflow; reconcile runs after nothing but the invoice, with a template.
  const auto report = changed.find("          report:");
  changed.erase(report, changed.find("        running: true", report) - report);
  changed.replace(changed.find("            after: [invoice]\n"), 29, "            after: [invoice]\n            params: x\n");
  auto outcome = apply(changed);
  ASSERT_EQ(outcome.plan.update_workflows.size(), 1u) << outcome.plan.report.dump(2);
  EXPECT_EQ(outcome.plan.report["summary"]["update"], 1) << "the workflow alone: " << outcome.plan.report.dump(2);
  auto w = workflows_.get(id);
  EXPECT_EQ(w->version, 2);
  EXPECT_EQ(w->graph.nodes.size(), 2u);
  EXPECT_EQ(w->graph.nodes[1].params, "x");
  EXPECT_EQ(count("SELECT count(*) FROM workflow_job WHERE workflow_id = " + std::to_string(id)), 2);

  // Stopping it alone keeps its version, as POST workflows/{id}/stop does.
  changed.replace(changed.find("        running: true", changed.find("month-end")), 21, "        running: false");
  outcome = apply(changed);
  ASSERT_EQ(outcome.plan.update_workflows.size(), 1u);
  EXPECT_EQ(outcome.plan.report["summary"]["update"], 1) << outcome.plan.report.dump(2);
  w = workflows_.get(id);
  EXPECT_EQ(w->version, 2);
  EXPECT_EQ(w->trigger_status, 0);
  EXPECT_EQ(w->trigger_next_time, 0);
}

TEST_F(ApplyFixture, PruneDeletesAWorkflowButNotWhileARunWaitsOrRuns) {
  const auto created = apply(kWorkflowFile);
  const auto id = created.created_workflows.at({"billing", "month-end"});
  admin::WorkflowStore::TriggerRequest trigger;
  trigger.workflow_id = id;
  trigger.params_json = R"({"month":"current"})";
  trigger.now = kNow;
  trigger.node_id = "node-a";
  trigger.actor = kOperator;
  const auto run = workflows_.trigger(trigger).runs.at(0);
  ASSERT_EQ(run.state, admin::WorkflowRunState::kRunning);

  // Without the workflow, and without the jobs it runs in billing.
  const std::string without = R"(groups:
  - appName: billing
    title: Billing
)";
  const auto audited = count("SELECT count(*) FROM audit_log");
  const auto shown = apply(without, /*dry_run=*/true, /*prune=*/true);
  EXPECT_NE(shown.plan.report["refused"].get<std::string>().find("run " + std::to_string(run.id) + " is waiting or running"),
            std::string::npos)
      << shown.plan.report.dump(2);
  try {
    apply(without, false, /*prune=*/true);
    FAIL() << "a workflow whose run is running is not deleted";
  } catch (const admin::Conflict& e) {
    EXPECT_EQ(e.field(), "groups[billing]");
  }
  EXPECT_EQ(count("SELECT count(*) FROM workflow"), 1);
  EXPECT_EQ(count("SELECT count(*) FROM job_info"), 3);
  EXPECT_EQ(count("SELECT count(*) FROM audit_log"), audited);

  workflows_.cancel(run.id, kNow + 1, "node-a", kOperator);
  const auto outcome = apply(without, false, /*prune=*/true);
  EXPECT_EQ(outcome.plan.delete_workflows, (std::vector<std::int64_t>{id}));
  EXPECT_EQ(count("SELECT count(*) FROM workflow"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM job_info"), 1) << "the jobs it ran are deleted after it: reports/weekly is left";
  EXPECT_EQ(count("SELECT count(*) FROM workflow_run"), 0) << "its runs with it";
}

// ---- calendars ----------------------------------------------------------------------------

constexpr std::int64_t kHour = 3'600'000;

// A calendar and, in billing, a job and a workflow naming it: at 10:00 and 11:00 UTC every day
// but the holiday (kNow is New Year's Day, 00:00 UTC).
const std::string kCalendarFile = R"(calendars:
  - name: holidays
    description: Company holidays
    excludedDates:
      - {date: "2026-01-01", name: New Year}
      - {date: "2026-05-01", name: Labour Day}
    excludedTimes:
      - {start: "12:00", end: "13:00"}
groups:
  - appName: billing
    title: Billing
    jobs:
      daily:
        jobDesc: Daily at 10
        scheduleType: CRON
        scheduleConf: "0 0 10 * * ?"
        executorHandler: daily
        calendar: holidays
        running: true
    workflows:
      etl:
        scheduleType: CRON
        scheduleConf: "0 0 11 * * ?"
        calendar: holidays
        calendarMode: only
        nodes: {a: {job: daily}}
        running: true
)";

TEST_F(ApplyFixture, AFileCreatesACalendarAndTheJobAndWorkflowNamingItInOneTransaction) {
  const auto outcome = apply(kCalendarFile);
  const auto calendar_id = outcome.created_calendars.at("holidays");
  const auto calendar = calendars_.get(calendar_id);
  ASSERT_TRUE(calendar.has_value()) << "the calendar store reads what the apply wrote";
  EXPECT_EQ(calendar->description, "Company holidays");
  EXPECT_EQ(calendar->version, 1);
  ASSERT_EQ(calendar->dates.size(), 2u);
  EXPECT_EQ(calendar->dates[1].day.name, "Labour Day");
  ASSERT_EQ(calendar->excluded_times.size(), 1u);
  EXPECT_EQ(calendar->excluded_times[0].end_s, 13 * 3600);

  const auto job = stores_.jobs().get(outcome.created_jobs.at({"billing", "daily"}));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->calendar, (admin::CalendarUse{calendar_id, common::CalendarMode::kSkip}));
  EXPECT_EQ(job->trigger_next_time, kNow + 34 * kHour) << "2026-01-02 10:00: the holiday's fire is skipped";
  const auto workflow = workflows_.get(outcome.created_workflows.at({"billing", "etl"}));
  ASSERT_TRUE(workflow.has_value());
  EXPECT_EQ(workflow->calendar, (admin::CalendarUse{calendar_id, common::CalendarMode::kOnly}));
  EXPECT_EQ(workflow->trigger_next_time, kNow + 35 * kHour);
  EXPECT_EQ(count("SELECT count(*) FROM audit_log"), 1) << "the apply's one entry, no calendar.create beside it";
  EXPECT_EQ(text("SELECT after->'calendars'->0->>'action' FROM audit_log"), "create");

  // Applied again, or exported and applied back: nothing changes.
  EXPECT_FALSE(apply(kCalendarFile).plan.report["changed"].get<bool>());
  const auto exported = admin::export_document(store_.snapshot({}), {}, admin_principal());
  ASSERT_EQ(exported["calendars"].size(), 1u);
  const auto again = apply(common::jobs_file::to_yaml(exported), false, /*prune=*/true);
  EXPECT_FALSE(again.plan.report["changed"].get<bool>()) << again.plan.report.dump(2);
  EXPECT_EQ(count("SELECT count(*) FROM audit_log"), 1);
  EXPECT_THROW(calendars_.remove(calendar_id, kOperator), admin::Conflict) << "a calendar in use stays";
}

TEST_F(ApplyFixture, AChangedHolidayIsWrittenUnderTheVersionReadAndKeepsItsImportsSource) {
  const auto calendar_id = apply(kCalendarFile).created_calendars.at("holidays");
  // An .ics import brings one more holiday, with its source.
  admin::CalendarDate imported;
  imported.day = {2026, 10, 1, "National Day"};
  imported.source_uid = "uid-1";
  calendars_.replace_imported(calendar_id, "ics", {imported}, 1, kOperator);
  const auto audited = count("SELECT count(*) FROM audit_log");

  // The file renames it (and, to the file, it is now a date like the others).
  std::string changed = kCalendarFile;
  changed.insert(changed.find("    excludedTimes:"), "      - {date: \"2026-10-01\", name: Golden Week}\n");
  const auto outcome = apply(changed);
  ASSERT_EQ(outcome.plan.update_calendars.size(), 1u) << outcome.plan.report.dump(2);
  EXPECT_EQ(outcome.plan.report["calendars"][0]["changes"],
            json::parse(R"([{"field":"excludedDates[2026-10-01]","from":"National Day","to":"Golden Week"}])"));
  auto calendar = calendars_.get(calendar_id);
  EXPECT_EQ(calendar->version, 3);
  ASSERT_EQ(calendar->dates.size(), 3u);
  EXPECT_EQ(calendar->dates[2].day.name, "Golden Week");
  EXPECT_EQ(calendar->dates[2].source, "ics") << "a later import of its source still replaces it";
  EXPECT_EQ(calendar->dates[2].source_uid, "uid-1");
  EXPECT_EQ(count("SELECT count(*) FROM audit_log"), audited + 1);

  // A plan written over a version the calendar no longer has is refused, and writes nothing.
  std::string renamed = changed;
  renamed.replace(renamed.find("Company holidays"), 16, "Holidays of the company");
  const auto document = common::jobs_file::parse_yaml(renamed, "t.yaml", {}).document;
  try {
    store_.apply(
        admin::app_names_of(document),
        [&](const admin::JobsSnapshot& s) {
          auto plan = admin::plan_apply(document, s, admin_principal(), false, kNow);
          plan.update_calendars.at(0).version -= 1;
          return plan;
        },
        false, kOperator);
    FAIL() << "a stale version was written over";
  } catch (const admin::Conflict& e) {
    EXPECT_EQ(e.field(), "version");
  }
  calendar = calendars_.get(calendar_id);
  EXPECT_EQ(calendar->description, "Company holidays");
  EXPECT_EQ(calendar->version, 3);
  EXPECT_EQ(count("SELECT count(*) FROM audit_log"), audited + 1);
}

TEST_F(ApplyFixture, PruneDeletesACalendarOnceTheFilesJobsStopNamingIt) {
  const auto calendar_id = apply(kCalendarFile).created_calendars.at("holidays");
  // The file without the calendar: its job and workflow name none any more.
  const std::string without = R"(groups:
  - appName: billing
    title: Billing
    jobs:
      daily:
        jobDesc: Daily at 10
        scheduleType: CRON
        scheduleConf: "0 0 10 * * ?"
        executorHandler: daily
        running: true
)";
  auto outcome = apply(without);
  EXPECT_EQ(count("SELECT count(*) FROM calendar"), 1) << "without --prune it stays";
  EXPECT_EQ(count("SELECT count(*) FROM job_info WHERE calendar_id IS NOT NULL"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM workflow WHERE calendar_id IS NOT NULL"), 1) << "etl is not in the file";

  outcome = apply(without, false, /*prune=*/true);
  EXPECT_EQ(outcome.plan.delete_workflows.size(), 1u);
  EXPECT_EQ(outcome.plan.delete_calendars, (std::vector<std::int64_t>{calendar_id}));
  EXPECT_EQ(count("SELECT count(*) FROM calendar"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM calendar_date"), 0) << "its dates with it";

  // One that a job of another group names stays.
  apply(kFile);
  apply(kCalendarFile);
  database_.transact([](pqxx::work& tx) {
    tx.exec("UPDATE job_info SET calendar_id = (SELECT id FROM calendar) WHERE name = 'weekly'");  // in reports
  });
  outcome = apply(without, false, /*prune=*/true);
  EXPECT_EQ(outcome.plan.delete_jobs.size(), 2u) << "billing's nightly and reconcile";
  EXPECT_TRUE(outcome.plan.delete_calendars.empty());
  EXPECT_EQ(count("SELECT count(*) FROM calendar"), 1);
}

}  // namespace
}  // namespace cronwheel::testing
