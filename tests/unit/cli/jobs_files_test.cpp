// Jobs files on disk as `cronwheel apply` finds and reads them (directories walked, script files
// read relative to their YAML file and kept inside the directory given), and as `export` and
// `import` write them.

#include "cli/jobs_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_error.h"
#include "tests/support/temp_dir.h"

namespace cronwheel::cli {
namespace {

namespace fs = std::filesystem;
namespace jobs_file = common::jobs_file;
using nlohmann::json;

class JobsFilesTest : public ::testing::Test {
 protected:
  fs::path write(const fs::path& relative, const std::string& text) {
    const fs::path path = dir_.path() / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::string at(const std::string& relative) const { return (dir_.path() / relative).string(); }

  std::vector<std::string> found(const std::vector<std::string>& arguments) {
    std::vector<std::string> files;
    for (const auto& source : jobs_file_sources(arguments)) files.push_back(source.file.lexically_relative(dir_.path()).string());
    return files;
  }

  // The message of the CliError `body` throws.
  template <typename Body>
  static std::string failure(Body body) {
    try {
      body();
    } catch (const CliError& e) {
      EXPECT_EQ(e.status(), kExitFailed);
      return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
  }

  // The problem `read_jobs_files` finds in the sources of `arguments`.
  jobs_file::Problem problem(const std::vector<std::string>& arguments) {
    try {
      read_jobs_files(jobs_file_sources(arguments));
    } catch (const jobs_file::JobsFileError& e) {
      return e.problem();
    }
    ADD_FAILURE() << "no problem";
    return {};
  }

  testing::TempDir dir_{"cronwheel-jobs-files-test"};
};

std::string script_job_file(const std::string& app, const std::string& script_file) {
  return "groups:\n"
         "  - appName: " + app + "\n"
         "    jobs:\n"
         "      run:\n"
         "        jobDesc: Runs a script\n"
         "        glueType: GLUE_SHELL\n"
         "        scriptFile: " + script_file + "\n";
}

// ---- which files

TEST_F(JobsFilesTest, ADirectoryYieldsItsYamlFilesRecursivelySortedWithoutHiddenOnes) {
  write("jobs/b.yaml", "");
  write("jobs/a.yml", "");
  write("jobs/sub/c.yaml", "");
  write("jobs/README.md", "");
  write("jobs/.draft.yaml", "");
  write("jobs/.git/config.yaml", "");
  write("jobs/scripts/run.sh", "");
  EXPECT_EQ(found({at("jobs")}), (std::vector<std::string>{"jobs/a.yml", "jobs/b.yaml", "jobs/sub/c.yaml"}));
}

TEST_F(JobsFilesTest, ScriptsOfADirectoryStayInsideItAndOfAFileInsideItsOwnDirectory) {
  write("jobs/sub/x.yaml", "");
  write("single/one.txt", "");
  const auto sources = jobs_file_sources({at("jobs"), at("single/one.txt")});
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[0].root, fs::path(at("jobs")));
  EXPECT_EQ(sources[1].file, fs::path(at("single/one.txt")));  // a file named is read, whatever its name
  EXPECT_EQ(sources[1].root, fs::path(at("single")));
}

TEST_F(JobsFilesTest, AFileReachedTwiceIsReadOnce) {
  write("jobs/a.yaml", "");
  EXPECT_EQ(found({at("jobs/a.yaml"), at("jobs"), at("jobs/../jobs/a.yaml")}), (std::vector<std::string>{"jobs/a.yaml"}));
}

TEST_F(JobsFilesTest, WhatCannotBeReadIsAnErrorNamingIt) {
  write("empty/notes.txt", "");
  EXPECT_EQ(failure([&] { jobs_file_sources({at("missing.yaml")}); }), at("missing.yaml") + ": no such file or directory");
  EXPECT_EQ(failure([&] { jobs_file_sources({at("empty")}); }), at("empty") + ": no *.yaml or *.yml files in it");
  ASSERT_EQ(::mkfifo(at("pipe").c_str(), 0600), 0);
  EXPECT_EQ(failure([&] { jobs_file_sources({at("pipe")}); }), at("pipe") + ": not a file or a directory");
}

TEST_F(JobsFilesTest, ADirectoryWithTooManyJobsFilesIsRefused) {
  for (std::size_t i = 0; i <= kMaxJobsFiles; ++i) write("many/" + std::to_string(i) + ".yaml", "");
  EXPECT_EQ(failure([&] { jobs_file_sources({at("many")}); }),
            at("many") + ": more than 1000 jobs files; apply them in parts");
}

// ---- reading files

TEST_F(JobsFilesTest, ReadRegularFileIsBoundedAndRefusesWhatIsNoRegularFile) {
  write("ten", "0123456789");
  EXPECT_EQ(read_regular_file(at("ten"), 10), "0123456789");
  try {
    read_regular_file(at("ten"), 9);
    ADD_FAILURE() << "read";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "larger than 9 bytes");
  }
  // A FIFO without a writer would block a plain open() for ever.
  ASSERT_EQ(::mkfifo(at("fifo").c_str(), 0600), 0);
  EXPECT_THROW(read_regular_file(at("fifo"), 10), std::runtime_error);
  EXPECT_THROW(read_regular_file("/dev/zero", 10), std::runtime_error);
  EXPECT_THROW(read_regular_file(dir_.path(), 10), std::runtime_error);
}

TEST_F(JobsFilesTest, FilesAreParsedAndMergedWithTheirScriptsReadRelativeToEachFile) {
  write("jobs/billing.yaml", script_job_file("billing", "scripts/run.sh"));
  write("jobs/billing/scripts/run.sh", "not this one");
  write("jobs/scripts/run.sh", "#!/bin/sh\necho billing\n");
  write("jobs/reports/reports.yaml", script_job_file("reports", "../scripts/report.sh"));
  write("jobs/scripts/report.sh", "#!/bin/sh\necho reports\n");
  const auto parsed = read_jobs_files(jobs_file_sources({at("jobs")}));
  const json& groups = parsed.document.at("groups");
  ASSERT_EQ(groups.size(), 2u) << parsed.document.dump();
  EXPECT_EQ(groups[0]["appName"], "billing");
  EXPECT_EQ(groups[0]["jobs"]["run"]["glueSource"], "#!/bin/sh\necho billing\n");
  EXPECT_FALSE(groups[0]["jobs"]["run"].contains("scriptFile"));
  EXPECT_EQ(groups[1]["jobs"]["run"]["glueSource"], "#!/bin/sh\necho reports\n");
  // Problems the server finds in a script point at its scriptFile line.
  const auto location = jobs_file::locate(parsed, "groups[reports].jobs[run].glueSource");
  ASSERT_TRUE(location.has_value());
  EXPECT_EQ(location->file, at("jobs/reports/reports.yaml"));
  EXPECT_EQ(location->line, 7);
}

TEST_F(JobsFilesTest, AMissingScriptFileIsAProblemNamingItAndItsLine) {
  write("jobs/billing.yaml", script_job_file("billing", "scripts/gone.sh"));
  const auto p = problem({at("jobs")});
  EXPECT_EQ(p.location.file, at("jobs/billing.yaml"));
  EXPECT_EQ(p.location.line, 7);
  EXPECT_EQ(p.path, "groups[billing].jobs[run].scriptFile");
  EXPECT_NE(p.message.find("scripts/gone.sh"), std::string::npos) << p.message;
  EXPECT_NE(p.message.find("no such file"), std::string::npos) << p.message;
}

TEST_F(JobsFilesTest, AScriptFileMustStayInsideTheDirectoryGiven) {
  write("secret", "token");
  write("jobs/up.yaml", script_job_file("billing", "../secret"));
  EXPECT_NE(problem({at("jobs")}).message.find("outside"), std::string::npos);
  write("jobs2/abs.yaml", script_job_file("billing", at("secret")));
  EXPECT_NE(problem({at("jobs2")}).message.find("relative to the YAML file"), std::string::npos);
  // Nor through a symbolic link that leads out.
  write("jobs3/link.yaml", script_job_file("billing", "scripts/link.sh"));
  fs::create_directories(at("jobs3/scripts"));
  fs::create_symlink(at("secret"), at("jobs3/scripts/link.sh"));
  EXPECT_NE(problem({at("jobs3")}).message.find("outside"), std::string::npos);
  // A file named alone reaches only below its own directory; name the parent to reach further.
  write("jobs4/scripts/s.sh", "#!/bin/sh\n");
  write("jobs4/billing/b.yaml", script_job_file("billing", "../scripts/s.sh"));
  EXPECT_NE(problem({at("jobs4/billing/b.yaml")}).message.find("outside"), std::string::npos);
  EXPECT_NO_THROW(read_jobs_files(jobs_file_sources({at("jobs4")})));
}

TEST_F(JobsFilesTest, AScriptFileOverOneMiBOrNotAFileIsRefused) {
  write("jobs/big.yaml", script_job_file("billing", "big.sh"));
  write("jobs/big.sh", std::string(kMaxScriptFileBytes + 1, 'x'));
  EXPECT_NE(problem({at("jobs")}).message.find("larger than 1 MiB"), std::string::npos);
  write("jobs2/fifo.yaml", script_job_file("billing", "fifo.sh"));
  ASSERT_EQ(::mkfifo(at("jobs2/fifo.sh").c_str(), 0600), 0);
  EXPECT_NE(problem({at("jobs2")}).message.find("not a regular file"), std::string::npos);
}

TEST_F(JobsFilesTest, AProblemInOneFileNamesThatFileLineAndKey) {
  write("jobs/a.yaml", "groups:\n  - appName: alpha\n");
  write("jobs/b.yaml", "groups:\n  - appName: bravo\n    jobs:\n      x:\n        jobDesc: X\n        bogus: 1\n");
  const auto p = problem({at("jobs")});
  EXPECT_EQ(jobs_file::to_string(p).rfind(at("jobs/b.yaml") + ":6:9: groups[bravo].jobs[x].bogus: ", 0), 0u)
      << jobs_file::to_string(p);
}

TEST_F(JobsFilesTest, AGroupInTwoFilesIsAProblemNamingBoth) {
  write("jobs/a.yaml", "groups:\n  - appName: alpha\n");
  write("jobs/b.yaml", "groups:\n  - appName: alpha\n");
  const auto p = problem({at("jobs")});
  EXPECT_EQ(p.location.file, at("jobs/b.yaml"));
  EXPECT_NE(p.message.find(at("jobs/a.yaml")), std::string::npos) << p.message;
}

TEST_F(JobsFilesTest, AJobsFileOverTheFormatsLimitIsRefusedBeforeItIsRead) {
  write("jobs/huge.yaml", "");
  fs::resize_file(at("jobs/huge.yaml"), jobs_file::kMaxDocumentBytes + 1);  // sparse: nothing to write
  EXPECT_EQ(failure([&] { read_jobs_files(jobs_file_sources({at("jobs")})); }),
            "cannot read " + at("jobs/huge.yaml") + ": larger than 16 MiB");
}

// ---- writing

TEST_F(JobsFilesTest, WriteFileAtomicallyReplacesTheFileWholeAndLeavesNothingElse) {
  write("out/jobs.yaml", "old contents that are longer than the new\n");
  write_file_atomically(at("out/jobs.yaml"), "groups: []\n");
  std::ifstream in(at("out/jobs.yaml"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "groups: []\n");
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(at("out"))) names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"jobs.yaml"}));
}

TEST_F(JobsFilesTest, AWrittenFileHasTheModeTheUmaskAllows) {
  const mode_t old = ::umask(027);
  write_file_atomically(at("new.yaml"), "groups: []\n");
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat(at("new.yaml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(JobsFilesTest, AFailedWriteNamesThePathAndLeavesTheOldFile) {
  EXPECT_EQ(failure([&] { write_file_atomically(at("no/such/dir/x.yaml"), "x"); }),
            "cannot write " + at("no/such/dir/x.yaml") + ": No such file or directory");
  fs::create_directories(at("taken.yaml"));
  EXPECT_NE(failure([&] { write_file_atomically(at("taken.yaml"), "x"); }).find("cannot write " + at("taken.yaml")),
            std::string::npos);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_.path())) names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"taken.yaml"}));
}

}  // namespace
}  // namespace cronwheel::cli
