#include "executor/src/run_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;

// 2024-03-09T23:59:59.999Z
constexpr std::int64_t kLastMsOfMarch9 = 1710028799999;
constexpr std::int64_t kDayMs = 24LL * 3600 * 1000;

using testing::TempDir;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_raw(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << bytes;
}

// Every page from line 1 to the end, concatenated; checks each page's bounds on the way.
std::string read_all_pages(const RunLogStore& store, std::int64_t date, std::int64_t id,
                           std::size_t max_bytes, int* pages = nullptr) {
  std::string all;
  int line = 1;
  int count = 0;
  for (;;) {
    LogPage page = store.read(date, id, line, max_bytes);
    EXPECT_TRUE(page.found);
    EXPECT_LE(page.content.size(), max_bytes);
    EXPECT_EQ(page.from_line, line);
    all += page.content;
    ++count;
    if (page.to_line < line) {
      EXPECT_TRUE(page.end_of_file);
      break;
    }
    EXPECT_GT(count, 0);
    line = page.to_line + 1;
    if (count > 100000) {
      ADD_FAILURE() << "paging does not progress";
      break;
    }
  }
  if (pages != nullptr) *pages = count;
  return all;
}

TEST(RunLogStore, PathIsTheUtcDayOfLogDateTime) {
  RunLogStore store("/logs", 30);
  EXPECT_EQ(store.path_for(kLastMsOfMarch9, 42), fs::path("/logs/2024-03-09/42.log"));
  EXPECT_EQ(store.path_for(kLastMsOfMarch9 + 1, 42), fs::path("/logs/2024-03-10/42.log"));
  EXPECT_EQ(RunLogStore::day_name(0), "1970-01-01");
  EXPECT_EQ(RunLogStore::day_name(-1), "1969-12-31");
}

TEST(RunLogStore, OpenCreatesTheDayDirectoryAndAppendsToAnExistingFile) {
  TempDir dir;
  RunLogStore store(dir.path() / "logs", 30);
  store.open(kLastMsOfMarch9, 7)->append("first");
  store.open(kLastMsOfMarch9, 7)->append("second\n");
  EXPECT_EQ(read_file(dir.path() / "logs/2024-03-09/7.log"), "first\nsecond\n");
}

TEST(RunLogStore, ADayDirectoryRemovedSinceTheLastOpenIsMadeAgainPrivate) {
  TempDir dir;
  RunLogStore store(dir.path() / "logs", 30);
  store.open(kLastMsOfMarch9, 7)->append("first");
  fs::remove_all(dir.path() / "logs/2024-03-09");
  store.open(kLastMsOfMarch9, 8)->append("second");
  EXPECT_EQ(read_file(dir.path() / "logs/2024-03-09/8.log"), "second\n");
  EXPECT_EQ(fs::status(dir.path() / "logs/2024-03-09").permissions(), fs::perms::owner_all);
}

TEST(RunLogStore, AppendAddsANewlineOnlyWhenMissing) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  auto writer = store.open(kLastMsOfMarch9, 1);
  writer->append("a");
  writer->append("b\n");
  writer->append("");
  writer->append("c\nd");
  EXPECT_EQ(read_file(store.path_for(kLastMsOfMarch9, 1)), "a\nb\n\nc\nd\n");
}

TEST(RunLogStore, OpenThrowsSystemErrorNamingThePathWhenItCannot) {
  TempDir dir;
  write_raw(dir.path() / "blocked", "a file where a directory should be");
  RunLogStore store(dir.path() / "blocked", 30);
  try {
    store.open(kLastMsOfMarch9, 1);
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find((dir.path() / "blocked").string()), std::string::npos)
        << e.what();
  }
}

TEST(RunLogStore, MissingLogIsNotFound) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  LogPage page = store.read(kLastMsOfMarch9, 404, 1);
  EXPECT_FALSE(page.found);
  EXPECT_EQ(page.from_line, 1);
  EXPECT_EQ(page.to_line, 0);
  EXPECT_EQ(page.content, "");
  EXPECT_FALSE(page.finished);
}

TEST(RunLogStore, ReadReturnsTheLinesFromTheRequestedLineOn) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  auto writer = store.open(kLastMsOfMarch9, 1);
  for (int i = 1; i <= 5; ++i) writer->append("line " + std::to_string(i));

  LogPage all = store.read(kLastMsOfMarch9, 1, 1);
  EXPECT_TRUE(all.found);
  EXPECT_EQ(all.from_line, 1);
  EXPECT_EQ(all.to_line, 5);
  EXPECT_EQ(all.content, "line 1\nline 2\nline 3\nline 4\nline 5\n");
  EXPECT_TRUE(all.end_of_file);

  LogPage tail = store.read(kLastMsOfMarch9, 1, 4);
  EXPECT_EQ(tail.from_line, 4);
  EXPECT_EQ(tail.to_line, 5);
  EXPECT_EQ(tail.content, "line 4\nline 5\n");

  LogPage beyond = store.read(kLastMsOfMarch9, 1, 9);
  EXPECT_TRUE(beyond.found);
  EXPECT_EQ(beyond.from_line, 9);
  EXPECT_EQ(beyond.to_line, 8);
  EXPECT_EQ(beyond.content, "");
  EXPECT_TRUE(beyond.end_of_file);
}

TEST(RunLogStore, LineNumbersBelowOneReadFromTheFirstLine) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  store.open(kLastMsOfMarch9, 1)->append("only");
  for (int from : {0, -5}) {
    LogPage page = store.read(kLastMsOfMarch9, 1, from);
    EXPECT_EQ(page.from_line, 1);
    EXPECT_EQ(page.to_line, 1);
    EXPECT_EQ(page.content, "only\n");
  }
}

TEST(RunLogStore, UnterminatedLastLineIsHeldBackUntilTheRunIsFinished) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  write_raw(store.path_for(kLastMsOfMarch9, 1), "done\nhalf-writ");

  LogPage running = store.read(kLastMsOfMarch9, 1, 1);
  EXPECT_EQ(running.content, "done\n");
  EXPECT_EQ(running.to_line, 1);
  EXPECT_TRUE(running.end_of_file);
  EXPECT_FALSE(running.finished);
  EXPECT_EQ(store.read(kLastMsOfMarch9, 1, 2).to_line, 1);

  ASSERT_TRUE(store.mark_finished(kLastMsOfMarch9, 1));
  LogPage finished = store.read(kLastMsOfMarch9, 1, 1);
  EXPECT_EQ(finished.content, "done\nhalf-writ\n");
  EXPECT_EQ(finished.to_line, 2);
  EXPECT_TRUE(finished.end_of_file);
  EXPECT_TRUE(finished.finished);
  LogPage after = store.read(kLastMsOfMarch9, 1, 3);
  EXPECT_EQ(after.content, "");
  EXPECT_EQ(after.to_line, 2);
}

TEST(RunLogStore, FinishingARunCreatesNoFileAndAnEarlierVersionsMarkerStillCounts) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  store.open(kLastMsOfMarch9, 5)->append("one line");
  const auto day = store.path_for(kLastMsOfMarch9, 5).parent_path();
  auto files = [&] {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(day)) ++n;
    return n;
  };
  ASSERT_EQ(files(), 1U);
  ASSERT_TRUE(store.mark_finished(kLastMsOfMarch9, 5));
  EXPECT_TRUE(store.is_finished(kLastMsOfMarch9, 5));
  EXPECT_EQ(files(), 1U) << "the mark is on the log file itself";
  // The log can still be appended to (a repeated log id), as before.
  EXPECT_NO_THROW(store.open(kLastMsOfMarch9, 5)->append("again"));

  // Written by an earlier version: a marker file beside the log.
  store.open(kLastMsOfMarch9, 6)->append("old");
  write_raw(day / "6.end", "");
  EXPECT_TRUE(RunLogStore(dir.path(), 30).is_finished(kLastMsOfMarch9, 6));
  // A run whose log could not be created is still marked, by the marker file.
  ASSERT_TRUE(store.mark_finished(kLastMsOfMarch9, 7));
  EXPECT_TRUE(store.is_finished(kLastMsOfMarch9, 7));
  EXPECT_TRUE(fs::exists(day / "7.end"));
}

TEST(RunLogStore, AWriterMarksItsLogFinishedThroughItsOpenFileAsTheStoreWould) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  auto writer = store.open(kLastMsOfMarch9, 8);
  writer->append("last line");
  EXPECT_FALSE(store.is_finished(kLastMsOfMarch9, 8));
  ASSERT_TRUE(writer->mark_finished());
  EXPECT_TRUE(store.is_finished(kLastMsOfMarch9, 8));
  EXPECT_TRUE(RunLogStore(dir.path(), 30).is_finished(kLastMsOfMarch9, 8)) << "on disk, for another store";
  const auto path = store.path_for(kLastMsOfMarch9, 8);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write)
      << "only the mark is added to the log's mode";
  EXPECT_FALSE(fs::exists(path.parent_path() / "8.end"));
}

TEST(RunLogStore, FinishedMarkIsOnDiskForAnotherStoreAndPrintedTextCannotForgeIt) {
  TempDir dir;
  {
    RunLogStore store(dir.path(), 30);
    auto writer = store.open(kLastMsOfMarch9, 3);
    writer->append("looks like an end marker: 3.end");
    EXPECT_FALSE(store.is_finished(kLastMsOfMarch9, 3));
    EXPECT_FALSE(store.read(kLastMsOfMarch9, 3, 1).finished);
    ASSERT_TRUE(store.mark_finished(kLastMsOfMarch9, 3));
    ASSERT_TRUE(store.mark_finished(kLastMsOfMarch9, 3));  // idempotent
  }
  RunLogStore restarted(dir.path(), 30);
  LogPage page = restarted.read(kLastMsOfMarch9, 3, 1);
  EXPECT_TRUE(page.finished);
  EXPECT_TRUE(page.end_of_file);
  EXPECT_EQ(page.content, "looks like an end marker: 3.end\n");
  EXPECT_FALSE(restarted.is_finished(kLastMsOfMarch9, 4));
}

TEST(RunLogStore, PagingThroughManyLinesReturnsEveryLineOnceWithinTheByteLimit) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  auto writer = store.open(kLastMsOfMarch9, 1);
  std::string expected;
  for (int i = 1; i <= 20000; ++i) {
    std::string line = "line " + std::to_string(i) + " " + std::string(i % 37, 'x');
    writer->append(line);
    expected += line + "\n";
  }
  int pages = 0;
  // (EXPECT_TRUE: a diff of two half-megabyte strings helps nobody.)
  EXPECT_TRUE(read_all_pages(store, kLastMsOfMarch9, 1, 4096, &pages) == expected);
  EXPECT_GT(pages, static_cast<int>(expected.size() / 4096));
  // The default limit holds about half of this log.
  ASSERT_GT(expected.size(), RunLogStore::kMaxPageBytes);
  LogPage first = store.read(kLastMsOfMarch9, 1, 1);
  EXPECT_LE(first.content.size(), RunLogStore::kMaxPageBytes);
  EXPECT_GT(first.content.size(), RunLogStore::kMaxPageBytes - 100);
  EXPECT_TRUE(expected.compare(0, first.content.size(), first.content) == 0);
  EXPECT_FALSE(first.end_of_file);
  EXPECT_TRUE(read_all_pages(store, kLastMsOfMarch9, 1, RunLogStore::kMaxPageBytes) == expected);
}

TEST(RunLogStore, PagesAreRightWhenTheLogGrowsAndWhenReadingGoesBack) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  auto writer = store.open(kLastMsOfMarch9, 1);
  for (int i = 1; i <= 100; ++i) writer->append("a" + std::to_string(i));

  LogPage first = store.read(kLastMsOfMarch9, 1, 1, 64);
  int next = first.to_line + 1;
  for (int i = 101; i <= 200; ++i) writer->append("a" + std::to_string(i));
  LogPage second = store.read(kLastMsOfMarch9, 1, next, 64);
  EXPECT_EQ(second.content.substr(0, second.content.find('\n')), "a" + std::to_string(next));

  // Back to an earlier line than the remembered position, and to one far ahead of it.
  EXPECT_EQ(store.read(kLastMsOfMarch9, 1, 2, 5).content, "a2\n");
  EXPECT_EQ(store.read(kLastMsOfMarch9, 1, 150, 5).content, "a150\n");
  EXPECT_EQ(store.read(kLastMsOfMarch9, 1, 3, 5).content, "a3\n");

  // A new file under the same name (a directory removed and a log id reused) is read afresh.
  fs::remove_all(store.path_for(kLastMsOfMarch9, 1).parent_path());
  auto again = store.open(kLastMsOfMarch9, 1);
  again->append("b1");
  again->append("b2");
  EXPECT_EQ(store.read(kLastMsOfMarch9, 1, 2).content, "b2\n");
}

TEST(RunLogStore, TooLongLineIsCutAloneAndTheNextPageStartsAtTheFollowingLine) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  auto writer = store.open(kLastMsOfMarch9, 1);
  writer->append("short");
  writer->append(std::string(1000, 'L'));
  writer->append("after");

  LogPage first = store.read(kLastMsOfMarch9, 1, 1, 200);
  EXPECT_EQ(first.content, "short\n");  // the long line does not join a page with others
  EXPECT_EQ(first.to_line, 1);
  EXPECT_FALSE(first.end_of_file);

  LogPage cut = store.read(kLastMsOfMarch9, 1, 2, 200);
  EXPECT_EQ(cut.to_line, 2);
  EXPECT_LE(cut.content.size(), 200u);
  EXPECT_EQ(cut.content.back(), '\n');
  std::size_t kept = cut.content.find_first_not_of('L');
  ASSERT_NE(kept, std::string::npos);
  EXPECT_EQ(cut.content.substr(kept),
            " [line cut: " + std::to_string(1000 - kept) + " bytes not shown]\n");
  EXPECT_FALSE(cut.end_of_file);

  LogPage last = store.read(kLastMsOfMarch9, 1, 3, 200);
  EXPECT_EQ(last.content, "after\n");
  EXPECT_TRUE(last.end_of_file);

  // Pages too small for the note still progress.
  LogPage tiny = store.read(kLastMsOfMarch9, 1, 2, 10);
  EXPECT_EQ(tiny.content, "LLLLLLLLL\n");
  EXPECT_EQ(tiny.to_line, 2);
}

TEST(RunLogStore, CutNeverSplitsAUtf8Character) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  std::string euro = "\xE2\x82\xAC";  // 3 bytes
  std::string line;
  for (int i = 0; i < 100; ++i) line += euro;
  store.open(kLastMsOfMarch9, 1)->append(line);
  for (std::size_t limit = 10; limit < 20; ++limit) {
    LogPage page = store.read(kLastMsOfMarch9, 1, 1, limit);
    ASSERT_LE(page.content.size(), limit);
    std::string text = page.content.substr(0, page.content.size() - 1);
    EXPECT_EQ(text.size() % 3, 0u) << "limit " << limit;
    EXPECT_EQ(text, line.substr(0, text.size()));
  }
}

TEST(RunLogStore, ConcurrentAppendsFromEightThreadsLandWhole) {
  TempDir dir;
  RunLogStore store(dir.path(), 30);
  auto shared = store.open(kLastMsOfMarch9, 1);
  constexpr int kThreads = 8;
  constexpr int kLines = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Half the threads share one writer, the other half open their own: both must hold.
      auto own = store.open(kLastMsOfMarch9, 1);
      RunLogWriter& writer = t % 2 == 0 ? *shared : *own;
      for (int i = 0; i < kLines; ++i) {
        std::string body(static_cast<std::size_t>(1 + (i * 7 + t) % 300), static_cast<char>('a' + t));
        writer.append("t" + std::to_string(t) + " " + std::to_string(i) + " " + body);
      }
    });
  }
  for (auto& thread : threads) thread.join();

  std::ifstream in(store.path_for(kLastMsOfMarch9, 1));
  std::string line;
  std::vector<int> next(kThreads, 0);
  int total = 0;
  while (std::getline(in, line)) {
    ++total;
    std::istringstream fields(line);
    std::string tag, body;
    int i = -1;
    fields >> tag >> i >> body;
    ASSERT_EQ(tag.size(), 2u) << line;
    int t = tag[1] - '0';
    ASSERT_TRUE(t >= 0 && t < kThreads) << line;
    EXPECT_EQ(i, next[t]) << "lines of one thread stay in order";
    next[t] = i + 1;
    EXPECT_EQ(body, std::string(static_cast<std::size_t>(1 + (i * 7 + t) % 300),
                                static_cast<char>('a' + t)))
        << line;
  }
  EXPECT_EQ(total, kThreads * kLines);
}

TEST(RunLogStore, RetentionRemovesOnlyWellFormedDayDirectoriesOlderThanIt) {
  TempDir dir;
  fs::path logs = dir.path() / "logs";
  RunLogStore store(logs, 30);
  // "now" is 2024-03-31: 2024-03-01 is exactly 30 days back and stays.
  std::int64_t now = kLastMsOfMarch9 + 22 * kDayMs;
  ASSERT_EQ(RunLogStore::day_name(now), "2024-03-31");

  store.open(now - 31 * kDayMs, 1)->append("old");     // 2024-02-29
  store.open(now - 400 * kDayMs, 2)->append("older");  // 2023
  store.open(now - 30 * kDayMs, 3)->append("kept");    // 2024-03-01
  store.open(now, 4)->append("today");
  store.mark_finished(now - 31 * kDayMs, 1);
  for (const char* name : {"2024-13-01", "2023-02-30", "2023-1-01", "notes", "gluesource",
                           "2023-01-01x"}) {
    fs::create_directories(logs / name);
    write_raw(logs / name / "keep.txt", "mine");
  }
  write_raw(logs / "2023-01-02", "a regular file named like a day");
  write_raw(logs / "callbacklog.spool", "spooled results");
  fs::path outside = dir.path() / "outside";
  write_raw(outside / "precious.txt", "not the executor's");
  fs::create_directory_symlink(outside, logs / "2023-01-03");

  EXPECT_EQ(store.remove_expired(now), 2);

  EXPECT_FALSE(fs::exists(logs / "2024-02-29"));
  EXPECT_FALSE(fs::exists(store.path_for(now - 400 * kDayMs, 2).parent_path()));
  EXPECT_TRUE(fs::exists(store.path_for(now - 30 * kDayMs, 3)));
  EXPECT_TRUE(fs::exists(store.path_for(now, 4)));
  for (const char* name : {"2024-13-01", "2023-02-30", "2023-1-01", "notes", "gluesource",
                           "2023-01-01x"}) {
    EXPECT_TRUE(fs::exists(logs / name / "keep.txt")) << name;
  }
  EXPECT_TRUE(fs::exists(logs / "2023-01-02"));
  EXPECT_TRUE(fs::exists(logs / "callbacklog.spool"));
  EXPECT_TRUE(fs::is_symlink(logs / "2023-01-03"));
  EXPECT_EQ(read_file(outside / "precious.txt"), "not the executor's");

  EXPECT_EQ(store.remove_expired(now), 0);
}

TEST(RunLogStore, RetentionZeroKeepsEverythingAndAMissingDirectoryIsNoError) {
  TempDir dir;
  RunLogStore keep_all(dir.path(), 0);
  keep_all.open(0, 1)->append("1970");
  EXPECT_EQ(keep_all.remove_expired(kLastMsOfMarch9), 0);
  EXPECT_TRUE(fs::exists(keep_all.path_for(0, 1)));

  RunLogStore missing(dir.path() / "never-created", 1);
  EXPECT_EQ(missing.remove_expired(kLastMsOfMarch9), 0);
}

// ---------------------------------------------------------------------------------------------
// Privacy, size cap, the range of a run's time

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(RunLogStore, LogsAndTheirDayDirectoriesAreTheExecutorUsersAlone) {
  TempDir dir;
  const mode_t old_umask = ::umask(0);  // the modes must not depend on the umask
  RunLogStore store(dir.path() / "logs", 30);
  store.open(kLastMsOfMarch9, 1)->append("secret output");
  store.mark_finished(kLastMsOfMarch9, 1);
  ::umask(old_umask);
  EXPECT_EQ(mode_of(dir.path() / "logs" / "2024-03-09"), 0700u);
  EXPECT_EQ(mode_of(store.path_for(kLastMsOfMarch9, 1)), 0600u | S_ISVTX);  // the finished mark
}

TEST(RunLogStore, DayDirectoriesLeftOpenByAnEarlierVersionAreMadePrivate) {
  TempDir dir;
  const fs::path logs = dir.path() / "logs";
  fs::create_directories(logs / "2024-03-09");
  fs::create_directories(logs / "not-a-day");
  write_raw(logs / "2024-03-09" / "1.log", "old\n");
  ::chmod((logs / "2024-03-09").c_str(), 0755);
  ::chmod((logs / "not-a-day").c_str(), 0755);
  RunLogStore store(logs, 30);
  EXPECT_EQ(store.make_day_directories_private(), 0);
  EXPECT_EQ(mode_of(logs / "2024-03-09"), 0700u);
  EXPECT_EQ(mode_of(logs / "not-a-day"), 0755u) << "not the store's";
  EXPECT_EQ(read_file(logs / "2024-03-09" / "1.log"), "old\n");
}

TEST(RunLogStore, ALogStopsAtItsCapWithOneLineSayingSoAndClosingLinesStillGoIn) {
  TempDir dir;
  RunLogStore store(dir.path(), 30, 100);
  auto log = store.open(kLastMsOfMarch9, 1);
  log->append(std::string(59, 'a'));  // 60 bytes with its newline
  log->append(std::string(39, 'b'));  // 100: exactly the cap
  EXPECT_EQ(log->truncated_at(), std::nullopt);
  log->append("c");                   // would pass the cap
  log->append("d");
  EXPECT_EQ(log->truncated_at(), std::optional<std::size_t>(100));
  log->append_closing("the end");
  log->append("e");
  log.reset();
  EXPECT_EQ(read_file(store.path_for(kLastMsOfMarch9, 1)),
            std::string(59, 'a') + "\n" + std::string(39, 'b') + "\n" +
                "----------- log truncated at 100 bytes (max-run-log-bytes): the rest of this run's "
                "output is dropped\n"
                "the end\n");
}

TEST(RunLogStore, WhatALogHoldsAlreadyCountsTowardItsCap) {
  TempDir dir;
  RunLogStore store(dir.path(), 30, 100);
  store.open(kLastMsOfMarch9, 1)->append(std::string(89, 'a'));
  auto again = store.open(kLastMsOfMarch9, 1);
  again->append(std::string(9, 'b'));  // 90 + 10: 100
  EXPECT_EQ(again->truncated_at(), std::nullopt);
  again->append("c");
  EXPECT_EQ(again->truncated_at(), std::optional<std::size_t>(100));
  // A single line larger than the cap is not written in part.
  auto other = store.open(kLastMsOfMarch9, 2);
  other->append(std::string(200, 'x'));
  EXPECT_EQ(other->truncated_at(), std::optional<std::size_t>(100));
  other.reset();
  EXPECT_EQ(read_file(store.path_for(kLastMsOfMarch9, 2)).find("xx"), std::string::npos);
}

TEST(RunLogStore, ARunsTimeMustLieBetween2000AndADayPastTheClock) {
  constexpr std::int64_t kNow = 1'710'028'799'999;  // 2024-03-09
  constexpr std::int64_t kDay = 86'400'000;
  struct Case {
    std::int64_t log_date_time;
    bool accepted;
  };
  const Case cases[] = {
      {kNow, true},
      {RunLogStore::kMinLogDateTimeMs, true},      // 2000-01-01T00:00:00Z
      {RunLogStore::kMinLogDateTimeMs - 1, false},  // 1999
      {kNow + kDay, true},
      {kNow + kDay + 1, false},
      {0, false},
      {-1, false},
      {-279'000'000'000'000, false},  // year -6872: a directory -6872-...
      {253'402'300'800'000, false},   // year 10000
      {INT64_MAX, false},
      {INT64_MIN, false},
  };
  for (const auto& c : cases) {
    auto problem = RunLogStore::log_date_time_problem(c.log_date_time, kNow);
    EXPECT_EQ(!problem.has_value(), c.accepted) << c.log_date_time << ": " << problem.value_or("");
  }
  EXPECT_EQ(RunLogStore::log_date_time_problem(253'402'300'800'000, kNow).value_or(""),
            "is 253402300800000 (year 10000): a run's time (epoch milliseconds) must lie between "
            "2000-01-01 and one day past this executor's clock (1710028799999)");
  EXPECT_EQ(RunLogStore::log_date_time_problem(INT64_MAX, INT64_MAX - 5), std::nullopt)
      << "no overflow near the end of time";
}

}  // namespace
}  // namespace cronwheel::executor
