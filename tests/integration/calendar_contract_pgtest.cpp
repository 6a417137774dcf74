// PgCalendarStore under the calendar contract suite its fake also passes
// (tests/support/calendar_contract_tests.h), beside the job and workflow stores whose rows name
// calendars.

#include <gtest/gtest.h>

#include <future>
#include <string>

#include <pqxx/pqxx>

#include "admin/pg/database.h"
#include "admin/pg/pg_calendar_store.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_workflow_store.h"
#include "tests/support/calendar_contract_tests.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_clock.h"
#include "tests/support/migrated_database.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {
namespace {

class PgCalendarFixture {
 public:
  PgCalendarFixture()
      : migrated_(migrate_schema(db_)),
        database_(pool_options(db_, 4), &prepare),
        stores_(database_, clock_),
        workflows_(database_, clock_),
        calendars_(database_, clock_) {
    clock_.set_wall_ms(calendar_contract::kNow);
  }
  static void prepare(pqxx::connection& c) {
    admin::PgStores::prepare(c);
    admin::PgWorkflowStore::prepare(c);
    admin::PgCalendarStore::prepare(c);
  }

  admin::CalendarStore& calendars() { return calendars_; }
  admin::Stores stores() { return stores_.stores(); }
  admin::WorkflowStore& workflows() { return workflows_; }
  FakeClock& clock() { return clock_; }

  admin::Database& database() { return database_; }
  std::int64_t count(const std::string& sql) {
    return database_.read([&](pqxx::read_transaction& tx) { return tx.exec1(sql)[0].as<std::int64_t>(); });
  }
  // What a refused statement says; "" when it was not refused.
  std::string refused(const std::string& sql) {
    try {
      database_.transact([&](pqxx::work& tx) { tx.exec(sql); });
    } catch (const pqxx::sql_error& e) {
      return e.what();
    }
    return "";
  }

 private:
  TestDatabase db_;
  bool migrated_;
  FakeClock clock_;
  admin::Database database_;
  admin::PgStores stores_;
  admin::PgWorkflowStore workflows_;
  admin::PgCalendarStore calendars_;
};

}  // namespace

namespace calendar_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Pg, CalendarContract, PgCalendarFixture);
}  // namespace calendar_contract

namespace {

using calendar_contract::kOperator;

// Beyond the suite: what the schema holds whoever writes, and the row lock remove relies on.
class PgCalendarTest : public ::testing::Test {
 protected:
  admin::Calendar calendar(const std::string& name) {
    admin::Calendar c;
    c.name = name;
    c.dates = {calendar_contract::excluded(2026, 10, 1, "National Day")};
    c.excluded_times = {{0, 3600}};
    return f_.calendars().create(c, kOperator);
  }
  admin::Job job(const std::string& name, std::int64_t calendar_id) {
    admin::Group g;
    g.app_name = "billing";
    g.title = "Billing";
    if (!group_) group_ = f_.stores().groups.create(g, kOperator).id;
    admin::Job j;
    j.job_group = group_;
    j.name = name;
    j.job_desc = name;
    j.executor_handler = "echo";
    j.calendar.calendar_id = calendar_id;
    return f_.stores().jobs.create(j, kOperator);
  }

  PgCalendarFixture f_;
  std::int64_t group_ = 0;
};

TEST_F(PgCalendarTest, TheSchemaKeepsACalendarAJobOrWorkflowNamesAndDeletesTheDaysOfOneItDeletes) {
  const auto named = calendar("named");
  job("nightly", named.id);
  EXPECT_NE(f_.refused("DELETE FROM calendar WHERE id = " + std::to_string(named.id)), "");
  EXPECT_NE(f_.refused("UPDATE job_info SET calendar_mode = 'NEVER'"), "");
  EXPECT_NE(f_.refused("INSERT INTO calendar (name, business_days) VALUES ('bits', 128)"), "");
  EXPECT_NE(f_.refused("INSERT INTO calendar_date (calendar_id, year, month, day) VALUES (" + std::to_string(named.id) +
                       ", 2026, 10, 1)"),
            "")
      << "a day once";

  const auto unused = calendar("unused");
  EXPECT_EQ(f_.refused("DELETE FROM calendar WHERE id = " + std::to_string(unused.id)), "");
  EXPECT_EQ(f_.count("SELECT count(*) FROM calendar_date WHERE calendar_id = " + std::to_string(unused.id)), 0);
  EXPECT_EQ(f_.count("SELECT count(*) FROM calendar_time WHERE calendar_id = " + std::to_string(unused.id)), 0);
  EXPECT_EQ(f_.count("SELECT count(*) FROM calendar_date WHERE calendar_id = " + std::to_string(named.id)), 1);
}

// A job given the calendar in a transaction not yet committed holds the calendar's row (its
// foreign key's lock): remove waits for it, then sees the job and refuses.
TEST_F(PgCalendarTest, ARemoveWaitsForAJobBeingGivenTheCalendarAndThenRefuses) {
  const auto c = calendar("cn-holidays");
  const auto j = job("nightly", 0);
  std::future<void> removing;
  f_.database().transact([&](pqxx::work& tx) {
    tx.exec_params("UPDATE job_info SET calendar_id = $1 WHERE id = $2", c.id, j.id);
    removing = std::async(std::launch::async, [&] { f_.calendars().remove(c.id, kOperator); });
    EXPECT_TRUE(eventually([&] {
      return f_.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                      "AND datname = current_database()") > 0;
    })) << "remove did not wait for the job's transaction";
  });
  try {
    removing.get();
    FAIL() << "a calendar a job names was removed";
  } catch (const admin::Conflict& e) {
    EXPECT_EQ(e.field(), "id");
    EXPECT_NE(std::string(e.what()).find("job billing/nightly"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(f_.calendars().get(c.id).has_value());
}

}  // namespace

}  // namespace cronwheel::testing
