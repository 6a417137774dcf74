#include "executor/src/callback_spool.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/protocol/messages.h"
#include "tests/support/fake_clock.h"
#include "tests/support/temp_dir.h"

// The spool files alone: a real directory per test, a fake clock (it names the files), no network.
namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using common::protocol::CallbackBatch;
using common::protocol::HandleCallbackParam;
using Results = CallbackSpool::Results;

HandleCallbackParam spooled_result(std::int64_t log_id) {
  HandleCallbackParam r;
  r.log_id = log_id;
  r.log_date_time = 1'700'000'000'000 + log_id;
  r.handle_code = 200;
  return r;
}

Results results_between(std::int64_t first, std::int64_t last) {
  Results results;
  for (auto id = first; id <= last; ++id) results.push_back(spooled_result(id));
  return results;
}

std::string line_of(const Results& results) {
  return common::protocol::to_json_string(CallbackBatch{results}) + "\n";
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

std::optional<Results> read_back(CallbackSpool& spool, const std::string& name) {
  bool gone = false;
  auto fd = spool.lock(name, gone);
  if (!fd) return std::nullopt;
  return spool.read(*fd, name);
}

TEST(CallbackSpoolTest, WritesOneCallbackBodyPerLineAndReadsItBack) {
  testing::TempDir dir;
  testing::FakeClock clock;
  CallbackSpool spool(dir.path(), 100, clock);
  const auto written = results_between(1, 250);
  auto name = spool.write(written);
  ASSERT_TRUE(name);
  EXPECT_TRUE(name->starts_with(CallbackSpool::kFilePrefix));
  EXPECT_TRUE(name->ends_with(CallbackSpool::kFileSuffix));
  EXPECT_EQ(spool.total(), 250U);

  EXPECT_EQ(read_text(dir.path() / *name), line_of(results_between(1, 100)) +
                                               line_of(results_between(101, 200)) +
                                               line_of(results_between(201, 250)));
  EXPECT_EQ(spool.list(), std::vector<std::string>{*name});
  EXPECT_EQ(read_back(spool, *name), written);
}

TEST(CallbackSpoolTest, CreatesItsDirectoryWhenWritingIntoAMissingOne) {
  testing::TempDir root;
  testing::FakeClock clock;
  CallbackSpool spool(root.path() / "logs" / "callbacks", 100, clock);
  ASSERT_TRUE(spool.write(results_between(1, 1)));
  EXPECT_EQ(spool.list().size(), 1U);
}

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(CallbackSpoolTest, FilesAndTheirDirectoryAreTheExecutorUsersAlone) {
  testing::TempDir root;
  testing::FakeClock clock;
  const mode_t old_umask = ::umask(0);  // the modes must not depend on the umask
  CallbackSpool spool(root.path() / "callbacklog", 100, clock);
  auto name = spool.write(results_between(1, 1));
  ::umask(old_umask);
  ASSERT_TRUE(name);
  EXPECT_EQ(mode_of(root.path() / "callbacklog"), 0700u);
  EXPECT_EQ(mode_of(root.path() / "callbacklog" / *name), 0600u);
}

TEST(CallbackSpoolTest, CreateDirMakesADirectoryLeftOpenByAnEarlierVersionPrivate) {
  testing::TempDir root;
  testing::FakeClock clock;
  fs::create_directories(root.path() / "callbacklog");
  ::chmod((root.path() / "callbacklog").c_str(), 0755);
  CallbackSpool spool(root.path() / "callbacklog", 100, clock);
  spool.create_dir();
  EXPECT_EQ(mode_of(root.path() / "callbacklog"), 0700u);
}

TEST(CallbackSpoolTest, ListsOnlySpoolFilesOldestFirst) {
  testing::TempDir dir;
  testing::FakeClock clock;
  write_text(dir.path() / "callback-0000000000000002-1-0-0.spool", line_of(results_between(2, 2)));
  write_text(dir.path() / "callback-0000000000000001-1-0-0.spool", line_of(results_between(1, 1)));
  write_text(dir.path() / "notes.txt", "keep me");
  write_text(dir.path() / "callback-.spool", "");  // nothing between prefix and suffix
  CallbackSpool spool(dir.path(), 100, clock);
  EXPECT_EQ(spool.list(), (std::vector<std::string>{"callback-0000000000000001-1-0-0.spool",
                                                    "callback-0000000000000002-1-0-0.spool"}));
}

TEST(CallbackSpoolTest, NamesFilesAfterTheClocksTimeSoTheyListOldestFirst) {
  testing::TempDir dir;
  testing::FakeClock clock(1'700'000'000'000);
  CallbackSpool spool(dir.path(), 100, clock);
  auto first = spool.write(results_between(1, 1));
  clock.advance(std::chrono::milliseconds(1));
  auto second = spool.write(results_between(2, 2));
  ASSERT_TRUE(first && second);
  const std::string pid = std::to_string(::getpid());
  EXPECT_TRUE(first->starts_with("callback-0001700000000000-" + pid + "-")) << *first;
  EXPECT_TRUE(second->starts_with("callback-0001700000000001-" + pid + "-")) << *second;
  EXPECT_EQ(spool.list(), (std::vector<std::string>{*first, *second}));
}

TEST(CallbackSpoolTest, FilesWrittenInTheSameMillisecondListInTheOrderTheyWereWritten) {
  testing::TempDir dir;
  testing::FakeClock clock;  // never moves: every name carries the same time
  CallbackSpool spool(dir.path(), 100, clock);
  std::vector<std::string> written;
  for (std::int64_t id = 1; id <= 12; ++id) {  // past the ninth and the tenth
    auto name = spool.write(results_between(id, id));
    ASSERT_TRUE(name);
    written.push_back(*name);
  }
  EXPECT_EQ(spool.list(), written);
}

TEST(CallbackSpoolTest, SkipsUnreadableLinesAndKeepsTheRest) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const std::string name = "callback-0000000000000001-1-0-0.spool";
  // Written by a process that crashed in the middle of its last line.
  write_text(dir.path() / name, line_of(results_between(1, 1)) + "not json at all\n" +
                                    line_of(results_between(2, 3)) + "{\"logId\":4}\n" + "\n" +
                                    "[{\"logId\":5,\"logDateTim\":17000000");
  CallbackSpool spool(dir.path(), 100, clock);
  EXPECT_EQ(read_back(spool, name), results_between(1, 3));
  EXPECT_EQ(spool.total(), 3U);
}

TEST(CallbackSpoolTest, AcceptsALastLineWithoutItsNewlineWhenItIsComplete) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const std::string name = "callback-0000000000000001-1-0-0.spool";
  std::string content = line_of(results_between(1, 2));
  content.pop_back();
  write_text(dir.path() / name, content);
  CallbackSpool spool(dir.path(), 100, clock);
  EXPECT_EQ(read_back(spool, name), results_between(1, 2));
}

TEST(CallbackSpoolTest, AFileLockedByAnotherSenderIsLeftToIt) {
  testing::TempDir dir;
  testing::FakeClock clock;
  const std::string name = "callback-0000000000000001-1-0-0.spool";
  write_text(dir.path() / name, line_of(results_between(7, 7)));
  int other = ::open((dir.path() / name).c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(other, 0);
  ASSERT_EQ(::flock(other, LOCK_EX), 0);

  CallbackSpool spool(dir.path(), 100, clock);
  bool gone = true;
  EXPECT_FALSE(spool.lock(name, gone));
  EXPECT_FALSE(gone);
  spool.recount();
  EXPECT_EQ(spool.total(), 0U);  // not this spool's to count

  ::close(other);
  EXPECT_EQ(read_back(spool, name), results_between(7, 7));
}

TEST(CallbackSpoolTest, AMissingFileIsGone) {
  testing::TempDir dir;
  testing::FakeClock clock;
  CallbackSpool spool(dir.path(), 100, clock);
  bool gone = false;
  EXPECT_FALSE(spool.lock("callback-0000000000000001-1-0-0.spool", gone));
  EXPECT_TRUE(gone);
}

TEST(CallbackSpoolTest, RemovingAFileForgetsItsCount) {
  testing::TempDir dir;
  testing::FakeClock clock;
  CallbackSpool spool(dir.path(), 100, clock);
  auto first = spool.write(results_between(1, 3));
  auto second = spool.write(results_between(4, 5));
  ASSERT_TRUE(first && second);
  EXPECT_EQ(spool.total(), 5U);
  EXPECT_TRUE(spool.remove(*first));
  EXPECT_FALSE(fs::exists(dir.path() / *first));
  EXPECT_FALSE(spool.counted(*first));
  EXPECT_EQ(spool.total(), 2U);
  EXPECT_TRUE(spool.remove(*first));  // already gone counts as removed
}

TEST(CallbackSpoolTest, RecountCountsWhatIsOnDiskAndKeepOnlyForgetsTheRest) {
  testing::TempDir dir;
  testing::FakeClock clock;
  {
    CallbackSpool earlier(dir.path(), 100, clock);
    ASSERT_TRUE(earlier.write(results_between(1, 4)));
    ASSERT_TRUE(earlier.write(results_between(5, 6)));
  }
  CallbackSpool spool(dir.path(), 100, clock);
  EXPECT_EQ(spool.total(), 0U);
  spool.recount();
  EXPECT_EQ(spool.total(), 6U);

  auto names = spool.list();
  ASSERT_EQ(names.size(), 2U);
  fs::remove(dir.path() / names[0]);  // taken over and delivered by another sender
  spool.keep_only(spool.list());
  EXPECT_EQ(spool.total(), 2U);
}

}  // namespace
}  // namespace cronwheel::executor
