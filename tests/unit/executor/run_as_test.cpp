// Looking up the user scripts run as, and checking at start-up that this process can run
// processes as that user. Switching to another user needs root: those tests skip otherwise.
#include "executor/src/run_as.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

std::string refusal(const std::string& name) {
  try {
    find_user(name);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(FindUserTest, FindsAUserByNameOrByNumericUid) {
  const RunAsUser root = find_user("root");
  EXPECT_EQ(root.name, "root");
  EXPECT_EQ(root.uid, 0u);
  EXPECT_EQ(root.gid, 0u);
  EXPECT_FALSE(root.home.empty());
  EXPECT_EQ(find_user("0").name, "root");
}

TEST(FindUserTest, UnknownUserIsRefusedWithAOneLineReason) {
  EXPECT_EQ(refusal("no-such-user-cronwheel"), "no user 'no-such-user-cronwheel' on this machine");
  EXPECT_EQ(refusal("4000000000"), "no user '4000000000' on this machine");
  EXPECT_EQ(refusal(""), "the user name is empty");
  const std::string with_newline = refusal("bad\nname");
  EXPECT_EQ(with_newline.find('\n'), std::string::npos) << with_newline;
  EXPECT_EQ(refusal(std::string("root\0x", 6)), "'root?x' is not a user name");
}

TEST(FindUserTest, ThisProcesssOwnUserNeedsNoSwitchAndNoPrivilege) {
  const passwd* self = ::getpwuid(::geteuid());
  if (self == nullptr) GTEST_SKIP() << "this process's uid has no user database entry";
  const RunAsUser user = find_user(self->pw_name);
  EXPECT_EQ(user.uid, ::geteuid());
  if (!user.is_this_process) {
    GTEST_SKIP() << "this process's groups differ from the user database's for " << user.name;
  }
  EXPECT_EQ(run_as_problem(user), std::nullopt);
}

TEST(RunAsProblemTest, RootCanRunProcessesAsAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "switching to another user needs root";
  const RunAsUser nobody = find_user("nobody");
  EXPECT_FALSE(nobody.is_this_process);
  EXPECT_EQ(run_as_problem(nobody), std::nullopt);
}

TEST(RunAsProblemTest, ADirectoryTheUserCannotOpenIsNamed) {
  if (::geteuid() != 0) GTEST_SKIP() << "switching to another user needs root";
  const RunAsUser nobody = find_user("nobody");
  std::string pattern = (fs::temp_directory_path() / "cronwheel-run-as-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  ::chmod(dir.c_str(), 0700);  // root's only
  auto problem = run_as_problem(nobody, dir);
  ::chmod(dir.c_str(), 0755);
  auto open_now = run_as_problem(nobody, dir);
  fs::remove_all(dir);
  ASSERT_TRUE(problem.has_value());
  EXPECT_TRUE(contains(*problem, "user nobody cannot open the script directory " + dir.string()))
      << *problem;
  EXPECT_TRUE(contains(*problem, "Permission denied")) << *problem;
  EXPECT_EQ(open_now, std::nullopt);
}

TEST(RunAsProblemTest, WithoutPrivilegeSwitchingIsRefusedSayingWhatIsNeeded) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may switch to any user; run as another user";
  const RunAsUser root = find_user("root");
  auto problem = run_as_problem(root);
  ASSERT_TRUE(problem.has_value());
  EXPECT_TRUE(contains(*problem, "this process may not switch to user root")) << *problem;
  EXPECT_TRUE(contains(*problem, "CAP_SETUID")) << *problem;
}

}  // namespace
}  // namespace cronwheel::executor
