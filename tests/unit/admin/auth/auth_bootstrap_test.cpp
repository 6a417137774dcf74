#include <gtest/gtest.h>

#include "admin/auth/bootstrap_admin.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::admin {
namespace {

class BootstrapAdminTest : public ::testing::Test {
 protected:
  cronwheel::testing::FakeClock clock_;
  cronwheel::testing::FakeStores fakes_{clock_};
  PasswordHasher passwords_{{PasswordHasher::Strength::kMinimum, 1}};
};

TEST_F(BootstrapAdminTest, CreatesAdminWithTheConfiguredPassword) {
  auto result = bootstrap_admin(fakes_.users(), passwords_, "configured-secret");
  EXPECT_TRUE(result.created);
  EXPECT_FALSE(result.generated_password);
  EXPECT_TRUE(result.password.empty());
  auto admin = fakes_.users().find_by_username("admin");
  ASSERT_TRUE(admin);
  EXPECT_TRUE(admin->is_admin());
  EXPECT_TRUE(passwords_.verify(admin->password_hash, "configured-secret"));

  AuditStore::Filter all;
  auto audit = fakes_.audit().list(all);
  ASSERT_EQ(audit.items.size(), 1u);
  EXPECT_EQ(audit.items[0].action, "user.create");
  EXPECT_EQ(audit.items[0].username, "system");
}

TEST_F(BootstrapAdminTest, DrawsARandomPasswordWhenNoneIsConfigured) {
  auto result = bootstrap_admin(fakes_.users(), passwords_, "");
  EXPECT_TRUE(result.created);
  EXPECT_TRUE(result.generated_password);
  EXPECT_GE(result.password.size(), 20u);
  auto admin = fakes_.users().find_by_username("admin");
  ASSERT_TRUE(admin);
  EXPECT_TRUE(passwords_.verify(admin->password_hash, result.password));

  cronwheel::testing::FakeStores other(clock_);
  EXPECT_NE(bootstrap_admin(other.users(), passwords_, "").password, result.password);
}

TEST_F(BootstrapAdminTest, LeavesAnInstallationWithUsersAlone) {
  ASSERT_TRUE(bootstrap_admin(fakes_.users(), passwords_, "first-password").created);
  auto again = bootstrap_admin(fakes_.users(), passwords_, "second-password");
  EXPECT_FALSE(again.created);
  EXPECT_EQ(fakes_.users().count(), 1);
  EXPECT_TRUE(passwords_.verify(fakes_.users().find_by_username("admin")->password_hash, "first-password"));
}

TEST_F(BootstrapAdminTest, AnotherNodeCreatingAdminFirstIsNoError) {
  // Simulates the race: the user appears between count() and create().
  struct Racing : UserStore {
    explicit Racing(UserStore& real) : real_(real) {}
    Page<User> list(const PageRequest& p) override { return real_.list(p); }
    std::optional<User> get(std::int64_t id) override { return real_.get(id); }
    std::optional<User> find_by_username(std::string_view n) override { return real_.find_by_username(n); }
    std::int64_t count() override { return 0; }
    User create(const User& u, const Actor& a) override { return real_.create(u, a); }
    User update(const User& u, const Actor& a) override { return real_.update(u, a); }
    void remove(std::int64_t id, const Actor& a) override { real_.remove(id, a); }
    void set_password(std::int64_t id, const std::string& h, const std::string& k, const Actor& a) override {
      real_.set_password(id, h, k, a);
    }
    UserStore& real_;
  } racing(fakes_.users());
  ASSERT_TRUE(bootstrap_admin(fakes_.users(), passwords_, "node-one-password").created);
  auto second = bootstrap_admin(racing, passwords_, "");
  EXPECT_FALSE(second.created);
  EXPECT_TRUE(second.password.empty());  // nothing printed for a user that was not created
}

TEST_F(BootstrapAdminTest, RefusesAShortConfiguredPassword) {
  EXPECT_THROW(bootstrap_admin(fakes_.users(), passwords_, "short"), std::invalid_argument);
  EXPECT_EQ(fakes_.users().count(), 0);
}

}  // namespace
}  // namespace cronwheel::admin
