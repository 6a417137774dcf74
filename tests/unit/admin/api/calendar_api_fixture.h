#pragma once

// What the calendars' API tests share (calendars_api_test.cpp, calendar_use_api_test.cpp): a
// ResourceApiTest whose jobs and workflows routes read calendars from a FakeCalendarStore, a group
// of the fixture's own with a normal user "alice" in it, and jobs that name a calendar.

#include <string>

#include "admin/api/workflows_api.h"
#include "tests/support/fake_calendar_store.h"
#include "tests/support/fake_workflow_store.h"
#include "tests/unit/admin/api/resource_api_fixture.h"

namespace cronwheel::admin {

class CalendarApiFixture : public ResourceApiTest {
 protected:
  explicit CalendarApiFixture(std::string group_name) : group_name_(std::move(group_name)) {}

  void configure(ResourceOptions& options) override { options.calendars = &calendars_; }

  void add_more_routes(ApiRouter& router) override {
    WorkflowRoutes flows;
    flows.store = &workflows_;
    flows.node_id = "node-under-test";
    flows.calendars = &calendars_;
    add_workflow_routes(router, stores_, flows, clock_);
  }

  void SetUp() override {
    ResourceApiTest::SetUp();
    group_ = add_group(group_name_);
    add_user("alice", "normal", {group_.id});
  }

  // A job of the fixture's group, CRON in UTC, naming `calendar` in `mode`; answers its id.
  std::int64_t job_with(std::int64_t calendar_id, const std::string& cron, const std::string& mode = "SKIP") {
    auto created = post("jobs", {{"jobGroup", group_.id},
                                 {"jobDesc", "with a calendar"},
                                 {"scheduleType", "CRON"},
                                 {"scheduleConf", cron},
                                 {"executorHandler", "h"},
                                 {"calendarId", calendar_id},
                                 {"calendarMode", mode}});
    EXPECT_EQ(created.status, 201) << created.text;
    return created.body.value("id", std::int64_t{0});
  }

  testing::FakeWorkflowStore workflows_{stores_.jobs, clock_};
  testing::FakeCalendarStore calendars_{fake_, &workflows_};
  Group group_;

 private:
  std::string group_name_;
};

}  // namespace cronwheel::admin
