// Where `cronwheel` finds the admin's URL and its token: flags > environment > settings file >
// default, token files, and settings files that are missing, unreadable or malformed.

#include "cli/settings.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "cli/cli_error.h"
#include "tests/support/temp_dir.h"

namespace cronwheel::cli {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

class SettingsTest : public ::testing::Test {
 protected:
  Environment environment() {
    return [this](const std::string& name) -> std::optional<std::string> {
      auto it = variables_.find(name);
      if (it == variables_.end()) return std::nullopt;
      return it->second;
    };
  }

  std::string write(const std::string& relative, const std::string& text) {
    const fs::path path = dir_.path() / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }

  // The default settings file, under XDG_CONFIG_HOME.
  std::string write_default(const std::string& text) {
    variables_["XDG_CONFIG_HOME"] = (dir_.path() / "xdg").string();
    return write("xdg/cronwheel/cli.toml", text);
  }

  Settings resolve(const SettingFlags& flags = {}) { return resolve_settings(flags, environment()); }

  // The message of the CliError resolve() throws; fails the test when it throws none or
  // another status than 2.
  std::string error_of(const SettingFlags& flags = {}) {
    try {
      resolve(flags);
    } catch (const CliError& e) {
      EXPECT_EQ(e.status(), kExitUsage) << e.what();
      EXPECT_TRUE(e.names_its_subject()) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "no error";
    return {};
  }

  TempDir dir_{"cronwheel-cli-settings"};
  std::map<std::string, std::string> variables_;
};

TEST_F(SettingsTest, WithoutAnySourceTheDefaultUrlAndNoToken) {
  const Settings settings = resolve();
  EXPECT_EQ(settings.url, "http://127.0.0.1:8080");
  EXPECT_EQ(settings.token, "");
  EXPECT_EQ(settings.token_source, "");
}

TEST_F(SettingsTest, FlagBeatsEnvironmentBeatsFile) {
  write_default("url = \"http://file.example:1\"\ntoken = \"from-file\"\n");
  variables_["CRONWHEEL_URL"] = "http://env.example:2";
  variables_["CRONWHEEL_TOKEN"] = "from-env";

  SettingFlags flags;
  flags.url = "http://flag.example:3";
  flags.token = "from-flag";
  Settings settings = resolve(flags);
  EXPECT_EQ(settings.url, "http://flag.example:3");
  EXPECT_EQ(settings.token, "from-flag");
  EXPECT_EQ(settings.token_source, "--token");

  settings = resolve();
  EXPECT_EQ(settings.url, "http://env.example:2");
  EXPECT_EQ(settings.url_source, "CRONWHEEL_URL");
  EXPECT_EQ(settings.token, "from-env");

  variables_.erase("CRONWHEEL_URL");
  variables_.erase("CRONWHEEL_TOKEN");
  settings = resolve();
  EXPECT_EQ(settings.url, "http://file.example:1");
  EXPECT_EQ(settings.token, "from-file");
  EXPECT_NE(settings.token_source.find("cli.toml: token"), std::string::npos) << settings.token_source;
}

TEST_F(SettingsTest, AnEmptyVariableCountsAsUnset) {
  write_default("url = \"http://file.example:1\"\n");
  variables_["CRONWHEEL_URL"] = "";
  EXPECT_EQ(resolve().url, "http://file.example:1");
}

TEST_F(SettingsTest, TokenFileGivesItsFirstLine) {
  const std::string file = write("token", "secret-token\nsecond line\n");
  SettingFlags flags;
  flags.token_file = file;
  EXPECT_EQ(resolve(flags).token, "secret-token");

  variables_["CRONWHEEL_TOKEN_FILE"] = write("env-token", "env-secret\r\n");
  Settings settings = resolve();
  EXPECT_EQ(settings.token, "env-secret");
  EXPECT_EQ(settings.token_source, "CRONWHEEL_TOKEN_FILE");
}

TEST_F(SettingsTest, ATokenFileFlagBeatsTheTokenVariable) {
  SettingFlags flags;
  flags.token_file = write("token", "from-flag-file\n");
  variables_["CRONWHEEL_TOKEN"] = "from-env";
  EXPECT_EQ(resolve(flags).token, "from-flag-file");
}

TEST_F(SettingsTest, TheTokenVariableBeatsTheTokenFileVariable) {
  variables_["CRONWHEEL_TOKEN"] = "from-env";
  variables_["CRONWHEEL_TOKEN_FILE"] = write("token", "from-env-file\n");
  EXPECT_EQ(resolve().token, "from-env");
}

TEST_F(SettingsTest, TheTokenVariableBeatsATokenFileInTheSettingsFile) {
  write("token", "from-file-file\n");
  write_default("token-file = \"../../token\"\n");
  variables_["CRONWHEEL_TOKEN"] = "from-env";
  EXPECT_EQ(resolve().token, "from-env");
  variables_.erase("CRONWHEEL_TOKEN");
  EXPECT_EQ(resolve().token, "from-file-file");  // relative to the settings file's directory
}

TEST_F(SettingsTest, TokenAndTokenFileFlagsTogetherAreBadUsage) {
  SettingFlags flags;
  flags.token = "a";
  flags.token_file = write("token", "b\n");
  EXPECT_NE(error_of(flags).find("--token and --token-file"), std::string::npos);
}

TEST_F(SettingsTest, AMissingTokenFileIsAnErrorNamingIt) {
  variables_["CRONWHEEL_TOKEN_FILE"] = (dir_.path() / "absent").string();
  const std::string message = error_of();
  EXPECT_NE(message.find("CRONWHEEL_TOKEN_FILE"), std::string::npos) << message;
  EXPECT_NE(message.find("absent"), std::string::npos) << message;
}

TEST_F(SettingsTest, AnEmptyTokenFileIsRefused) {
  SettingFlags flags;
  flags.token_file = write("token", "\n");
  EXPECT_NE(error_of(flags).find("empty"), std::string::npos);
}

TEST_F(SettingsTest, ATokenWithAControlCharacterIsRefused) {
  variables_["CRONWHEEL_TOKEN"] = "abc\r\nX-Evil: 1";
  const std::string message = error_of();
  EXPECT_NE(message.find("CRONWHEEL_TOKEN"), std::string::npos) << message;
  EXPECT_NE(message.find("control characters"), std::string::npos) << message;
}

TEST_F(SettingsTest, AMissingDefaultFileIsFine) {
  variables_["XDG_CONFIG_HOME"] = (dir_.path() / "nothing-here").string();
  EXPECT_EQ(resolve().url, "http://127.0.0.1:8080");
}

TEST_F(SettingsTest, AMissingFileNamedByConfigIsAnError) {
  SettingFlags flags;
  flags.config = (dir_.path() / "absent.toml").string();
  const std::string message = error_of(flags);
  EXPECT_NE(message.find("absent.toml"), std::string::npos) << message;
}

TEST_F(SettingsTest, ConfigNamesAnotherFileThanTheDefault) {
  write_default("url = \"http://default.example:1\"\n");
  SettingFlags flags;
  flags.config = write("other.toml", "url = \"http://other.example:2\"\n");
  EXPECT_EQ(resolve(flags).url, "http://other.example:2");
}

TEST_F(SettingsTest, AMalformedFileIsAnErrorNamingIt) {
  const std::string path = write_default("url = \"unterminated\n[[[\n");
  const std::string message = error_of();
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST_F(SettingsTest, AnUnknownKeyIsAnErrorNamingFileAndKey) {
  const std::string path = write_default("url = \"http://a.example\"\nendpoint = \"x\"\n");
  const std::string message = error_of();
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("endpoint"), std::string::npos) << message;
}

TEST_F(SettingsTest, AnOversizedFileIsAnErrorNamingIt) {
  const std::string path = write_default("url = \"http://a.example\"\n# " + std::string(2 << 20, 'x') + "\n");
  const std::string message = error_of();
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("larger than 1 MiB"), std::string::npos) << message;
}

TEST_F(SettingsTest, ADirectoryWhereTheFileShouldBeIsAnError) {
  variables_["XDG_CONFIG_HOME"] = (dir_.path() / "xdg").string();
  fs::create_directories(dir_.path() / "xdg" / "cronwheel" / "cli.toml");
  EXPECT_NE(error_of().find("is not a file"), std::string::npos);
}

TEST_F(SettingsTest, ABadUrlIsRefusedNamingWhereItCameFrom) {
  variables_["CRONWHEEL_URL"] = "ftp://example.com";
  const std::string message = error_of();
  EXPECT_EQ(message.rfind("CRONWHEEL_URL: ", 0), 0u) << message;

  const std::string path = write_default("url = \"not a url\"\n");
  variables_.erase("CRONWHEEL_URL");
  EXPECT_EQ(error_of().rfind(path + ": url: ", 0), 0u);
}

TEST_F(SettingsTest, TheDefaultFileIsUnderXdgConfigHomeElseHome) {
  variables_["HOME"] = "/home/ann";
  EXPECT_EQ(default_config_path(environment()), "/home/ann/.config/cronwheel/cli.toml");
  variables_["XDG_CONFIG_HOME"] = "/etc/xdg-ann";
  EXPECT_EQ(default_config_path(environment()), "/etc/xdg-ann/cronwheel/cli.toml");
  variables_["XDG_CONFIG_HOME"] = "relative/dir";  // not absolute: ignored, as the spec says
  EXPECT_EQ(default_config_path(environment()), "/home/ann/.config/cronwheel/cli.toml");
  variables_.clear();
  EXPECT_EQ(default_config_path(environment()), "");
}

}  // namespace
}  // namespace cronwheel::cli
