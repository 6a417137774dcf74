#include "common/cli/config_sources.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace cronwheel::common {
namespace {

// A command like the programs': options with environment variables, a range check, a flag.
class ConfigSourcesTest : public ::testing::Test {
 protected:
  ConfigSourcesTest() {
    app_.add_option("--config", config_path_)->envname("CW_TEST_CONFIG");
    app_.add_option("--listen", listen_, "where")->envname("CW_TEST_LISTEN")->capture_default_str();
    app_.add_option("--pool", pool_, "threads")->envname("CW_TEST_POOL")->check(CLI::Range(1, 64))->capture_default_str();
    app_.add_option("--token", token_, "secret")->envname("CW_TEST_TOKEN");
    app_.add_flag("--secure", secure_, "a flag")->envname("CW_TEST_SECURE");
  }
  ~ConfigSourcesTest() override {
    for (const char* v : {"CW_TEST_LISTEN", "CW_TEST_POOL", "CW_TEST_TOKEN", "CW_TEST_TOKEN_FILE", "CW_TEST_SECURE"}) {
      ::unsetenv(v);
    }
  }
  std::string file(const std::string& name, const std::string& text) {
    const std::string path = (dir_.path() / name).string();
    std::ofstream(path) << text;
    return path;
  }
  void run(std::vector<std::string> args, const std::string& config = {}) {
    std::vector<const char*> argv{"prog"};
    for (const auto& a : args) argv.push_back(a.c_str());
    app_.parse(static_cast<int>(argv.size()), argv.data());
    apply_config_sources(app_, {config, {"--token"}});
  }

  cronwheel::testing::TempDir dir_;
  CLI::App app_{"test"};
  std::string config_path_, listen_ = "0.0.0.0:8080", token_;
  int pool_ = 8;
  bool secure_ = false;
};

TEST_F(ConfigSourcesTest, TheFileSetsWhatNothingElseDid) {
  run({}, file("a.toml", "# settings\nlisten = \"127.0.0.1:9000\"\npool = 16\nsecure = true\ntoken = \"t0ken\"\n"));
  EXPECT_EQ(listen_, "127.0.0.1:9000");
  EXPECT_EQ(pool_, 16);
  EXPECT_TRUE(secure_);
  EXPECT_EQ(token_, "t0ken");
}

TEST_F(ConfigSourcesTest, FlagsBeatTheEnvironmentWhichBeatsTheFile) {
  ::setenv("CW_TEST_LISTEN", "10.0.0.1:1", 1);
  ::setenv("CW_TEST_POOL", "4", 1);
  run({"--pool", "2"}, file("a.ini", "listen=127.0.0.1:9000\npool=16\n"));
  EXPECT_EQ(listen_, "10.0.0.1:1");  // environment over file
  EXPECT_EQ(pool_, 2);               // flag over environment and file
}

TEST_F(ConfigSourcesTest, WithNothingSetTheDefaultsStay) {
  run({}, file("empty.toml", "\n# nothing\n"));
  EXPECT_EQ(listen_, "0.0.0.0:8080");
  EXPECT_EQ(pool_, 8);
  EXPECT_FALSE(secure_);
}

TEST_F(ConfigSourcesTest, ASecretIsReadFromTheFileItsVariableNames) {
  ::setenv("CW_TEST_TOKEN_FILE", file("token", "s3cret-from-file\nsecond line ignored\n").c_str(), 1);
  run({}, file("a.toml", "token = \"from-config\"\n"));
  EXPECT_EQ(token_, "s3cret-from-file");  // the environment's file over the configuration file
}

TEST_F(ConfigSourcesTest, TheVariableItselfAndTheFlagBeatTheSecretFile) {
  ::setenv("CW_TEST_TOKEN_FILE", file("token", "from-file").c_str(), 1);
  ::setenv("CW_TEST_TOKEN", "from-env", 1);
  run({});
  EXPECT_EQ(token_, "from-env");
}

TEST_F(ConfigSourcesTest, BadSecretFilesAreRefusedNamingTheVariable) {
  ::setenv("CW_TEST_TOKEN_FILE", file("empty", "\n").c_str(), 1);
  try {
    run({});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("CW_TEST_TOKEN_FILE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is empty"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_secret_file(file("big", std::string(5000, 'x')), "x"), ConfigError);
  EXPECT_THROW(read_secret_file((dir_.path() / "missing").string(), "x"), ConfigError);
}

TEST_F(ConfigSourcesTest, AValueTheOptionRefusesIsRefusedFromTheFileToo) {
  try {
    run({}, file("a.toml", "pool = 99\n"));
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("a.toml: pool"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not in range"), std::string::npos) << e.what();
  }
}

TEST_F(ConfigSourcesTest, UnknownKeysSectionsAndMissingFilesAreRefused) {
  EXPECT_THROW(run({}, file("a.toml", "colour = \"red\"\n")), ConfigError);
  EXPECT_THROW(run({}, file("b.toml", "[server]\nlisten = \"x:1\"\n")), ConfigError);
  EXPECT_THROW(run({}, (dir_.path() / "missing.toml").string()), ConfigError);
}

TEST_F(ConfigSourcesTest, TheOptionTableListsEveryOptionWithItsSources) {
  std::ostringstream out;
  print_option_table(app_, {"--token"}, out);
  const std::string table = out.str();
  EXPECT_NE(table.find("| `--pool` | `CW_TEST_POOL` | `pool` | `8` | threads |"), std::string::npos) << table;
  EXPECT_NE(table.find("`CW_TEST_TOKEN`, `CW_TEST_TOKEN_FILE`"), std::string::npos) << table;
  EXPECT_EQ(table.find("--config"), std::string::npos) << table;
}

// argv for parse_command_line: CLI11 takes char**, and the strings must outlive the parse.
struct Argv {
  explicit Argv(std::vector<std::string> args) : strings(std::move(args)) {
    for (auto& s : strings) pointers.push_back(s.data());
  }
  int argc() const { return static_cast<int>(pointers.size()); }
  char** argv() { return pointers.data(); }
  std::vector<std::string> strings;
  std::vector<char*> pointers;
};

TEST(ParseCommandLine, GoesOnAfterAGoodLineAndStopsAfterHelpOrAUsageError) {
  auto command = [](int& port) {
    auto app = std::make_unique<CLI::App>("test");
    app->add_option("--port", port)->check(CLI::Range(1, 65535));
    return app;
  };
  int port = 0;
  std::ostringstream err;

  auto app = command(port);
  Argv good({"prog", "--port", "8080"});
  EXPECT_EQ(parse_command_line(*app, good.argc(), good.argv(), err, "prog: "), std::nullopt);
  EXPECT_EQ(port, 8080);
  EXPECT_EQ(err.str(), "");

  app = command(port);
  Argv help({"prog", "--help"});
  EXPECT_EQ(parse_command_line(*app, help.argc(), help.argv(), err, "prog: "), 0);
  EXPECT_EQ(err.str(), "");

  app = command(port);
  Argv bad({"prog", "--port", "70000"});
  EXPECT_EQ(parse_command_line(*app, bad.argc(), bad.argv(), err, "prog: "), 2);
  EXPECT_EQ(err.str().rfind("prog: --port: ", 0), 0u) << err.str();

  app = command(port);
  err.str("");
  Argv unknown({"prog", "--nope"});
  EXPECT_EQ(parse_command_line(*app, unknown.argc(), unknown.argv(), err), 2);
  EXPECT_NE(err.str().find("--nope"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace cronwheel::common
