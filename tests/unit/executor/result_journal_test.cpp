#include "executor/src/result_journal.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/fake_clock.h"
#include "tests/support/temp_dir.h"

// A real directory per test, and a fake clock (it names the files). A journal object that goes
// away with results unacknowledged leaves its files exactly as a killed process does (every append
// is a write(2) already made; closing only releases the locks), so "the process died" is the
// object going out of scope.
namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using common::protocol::HandleCallbackParam;
using testing::FakeClock;
using testing::TempDir;

HandleCallbackParam make_result(std::int64_t log_id) {
  HandleCallbackParam r;
  r.log_id = log_id;
  r.log_date_time = 1700000000000 + log_id;
  r.handle_code = 200;
  r.handle_msg = "done \"" + std::to_string(log_id) + "\"\n\t";
  return r;
}

std::vector<std::int64_t> log_ids(const std::vector<HandleCallbackParam>& results) {
  std::vector<std::int64_t> ids;
  for (const auto& r : results) ids.push_back(r.log_id);
  return ids;
}

std::vector<fs::path> journal_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".journal") files.push_back(entry.path());
  }
  return files;
}

std::uintmax_t journal_bytes(const fs::path& dir) {
  std::uintmax_t total = 0;
  for (const auto& f : journal_files(dir)) total += fs::file_size(f);
  return total;
}

TEST(ResultJournalTest, WhatADeadProcessDidNotAcknowledgeIsItsOrphanInOrder) {
  TempDir dir;
  FakeClock clock;
  {
    ResultJournal dead({dir.path()}, clock);
    std::vector<std::uint64_t> seqs;
    for (int id = 1; id <= 6; ++id) seqs.push_back(dead.append(make_result(id)));
    EXPECT_EQ(seqs, (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
    dead.acknowledge({seqs[0], seqs[1], seqs[3]});
    EXPECT_EQ(dead.unacknowledged(), 3U);
  }
  ResultJournal next({dir.path()}, clock);
  auto orphans = next.orphans();
  ASSERT_EQ(orphans.size(), 1U);
  EXPECT_EQ(log_ids(orphans[0].results), (std::vector<std::int64_t>{3, 5, 6}));
  EXPECT_EQ(orphans[0].results[0], make_result(3));  // whole, message escapes included
  EXPECT_TRUE(next.remove(orphans[0]));
  EXPECT_TRUE(journal_files(dir.path()).empty());
}

TEST(ResultJournalTest, FilesAndTheDirectoryItCreatesAreTheExecutorUsersAlone) {
  TempDir root;
  FakeClock clock;
  const mode_t old_umask = ::umask(0);  // the modes must not depend on the umask
  ResultJournal journal({root.path() / "callbacklog"}, clock);
  journal.append(make_result(1));
  ::umask(old_umask);
  struct stat st {};
  ASSERT_EQ(::stat((root.path() / "callbacklog").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  auto files = journal_files(root.path() / "callbacklog");
  ASSERT_EQ(files.size(), 1U);
  ASSERT_EQ(::stat(files[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(ResultJournalTest, ALiveJournalIsNoOrphanNotEvenToItself) {
  TempDir dir;
  FakeClock clock;
  ResultJournal live({dir.path()}, clock);
  live.append(make_result(1));
  ResultJournal other({dir.path()}, clock);
  EXPECT_TRUE(other.orphans().empty());
  EXPECT_TRUE(live.orphans().empty());
  EXPECT_EQ(journal_files(dir.path()).size(), 1U);
}

TEST(ResultJournalTest, ACleanCloseWithEverythingAcknowledgedLeavesNothing) {
  TempDir dir;
  FakeClock clock;
  ResultJournal journal({dir.path()}, clock);
  auto a = journal.append(make_result(1));
  auto b = journal.append(make_result(2));
  journal.acknowledge({a, b, b, 0, 999});  // repeats, 0 and unknown numbers are ignored
  EXPECT_EQ(journal.unacknowledged(), 0U);
  journal.close();
  EXPECT_TRUE(journal_files(dir.path()).empty());
  EXPECT_EQ(journal.append(make_result(3)), 0U);  // closed
}

TEST(ResultJournalTest, StaysSmallWhileResultsAreAcknowledged) {
  TempDir dir;
  FakeClock clock;
  ResultJournal journal({dir.path(), /*truncate_bytes=*/4096, /*segment_bytes=*/16384}, clock);
  // The first result stays unacknowledged for a while: the journal moves on to new files and
  // drops the old ones once it is acknowledged.
  auto first = journal.append(make_result(0));
  for (int id = 1; id <= 5000; ++id) journal.acknowledge({journal.append(make_result(id))});
  EXPECT_GT(journal_files(dir.path()).size(), 1U);
  journal.acknowledge({first});
  for (int id = 5001; id <= 10000; ++id) journal.acknowledge({journal.append(make_result(id))});
  EXPECT_EQ(journal_files(dir.path()).size(), 1U);
  EXPECT_LE(journal_bytes(dir.path()), 16384U + 4096U);
  EXPECT_EQ(journal.unacknowledged(), 0U);
}

TEST(ResultJournalTest, ResultsOfRotatedFilesAreStillFoundAfterADeath) {
  TempDir dir;
  FakeClock clock;
  {
    ResultJournal dead({dir.path(), 4096, 4096}, clock);
    for (int id = 1; id <= 300; ++id) {
      auto seq = dead.append(make_result(id));
      if (id % 3 != 0) dead.acknowledge({seq});  // every third one is still unacknowledged
    }
    EXPECT_GT(journal_files(dir.path()).size(), 1U);
  }
  ResultJournal next({dir.path()}, clock);
  auto orphans = next.orphans();
  ASSERT_EQ(orphans.size(), 1U);
  std::vector<std::int64_t> expected;
  for (int id = 3; id <= 300; id += 3) expected.push_back(id);
  EXPECT_EQ(log_ids(orphans[0].results), expected);
}

TEST(ResultJournalTest, DamagedOrTornLinesAreSkippedAndHideNothing) {
  TempDir dir;
  FakeClock clock;
  std::string name;
  {
    ResultJournal dead({dir.path()}, clock);
    dead.append(make_result(1));
    dead.append(make_result(2));
    name = journal_files(dir.path()).at(0).string();
  }
  std::string content;
  {
    std::ifstream in(name, std::ios::binary);
    content.assign(std::istreambuf_iterator<char>(in), {});
  }
  // A bit flipped in the first result's message, a forged acknowledgement of result 2 with a
  // wrong checksum, a line of zeros (a power loss), a result cut short by a crash.
  auto flipped = content;
  flipped[flipped.find("done")] = 'D';
  auto second_line = content.substr(content.find('\n') + 1);
  std::ofstream out(name, std::ios::binary | std::ios::trunc);
  out << flipped.substr(0, flipped.find('\n') + 1) << "a 2\t00000000\n"
      << std::string(40, '\0') << "\n"
      << second_line << second_line.substr(0, 20);
  out.close();

  ResultJournal next({dir.path()}, clock);
  auto orphans = next.orphans();
  ASSERT_EQ(orphans.size(), 1U);
  EXPECT_EQ(log_ids(orphans[0].results), (std::vector<std::int64_t>{2}));
}

TEST(ResultJournalTest, FilesAreNamedAfterTheClocksTimeAtTheFirstAppend) {
  TempDir dir;
  FakeClock clock(1'700'000'000'123);
  ResultJournal journal({dir.path()}, clock);
  EXPECT_TRUE(journal_files(dir.path()).empty()) << "nothing before the first append";
  clock.advance(std::chrono::milliseconds(5));
  journal.append(make_result(1));
  clock.advance(std::chrono::milliseconds(5));
  journal.append(make_result(2));
  auto files = journal_files(dir.path());
  ASSERT_EQ(files.size(), 1U);
  const std::string name = files[0].filename().string();
  EXPECT_TRUE(name.starts_with("results-0001700000000128-" + std::to_string(::getpid()) + "-")) << name;
  EXPECT_TRUE(name.ends_with("-0.journal")) << name;
}

TEST(ResultJournalTest, FilesThatAreNotJournalsAreLeftAlone) {
  TempDir dir;
  FakeClock clock;
  std::ofstream(dir.path() / "callback-1.spool") << "[]\n";
  std::ofstream(dir.path() / "results-x.journal") << "garbage\n";  // no file number
  ResultJournal journal({dir.path()}, clock);
  EXPECT_TRUE(journal.orphans().empty());
  EXPECT_TRUE(fs::exists(dir.path() / "callback-1.spool"));
  EXPECT_TRUE(fs::exists(dir.path() / "results-x.journal"));
}

}  // namespace
}  // namespace cronwheel::executor
