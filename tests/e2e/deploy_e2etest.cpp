// docker-compose.yml and the Dockerfile cannot be run here (no container engine), so this
// checks what can go wrong in them without one: services that name each other correctly,
// and commands and environment variables that the real binaries accept.

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <yaml-cpp/yaml.h>

#include "tests/support/process.h"

namespace cronwheel {
namespace {

const std::string kSourceDir = CRONWHEEL_SOURCE_DIR;
const std::string kBinDir = CRONWHEEL_BIN_DIR;

// Environment variables read directly rather than through a flag (secrets stay off command
// lines).
const std::set<std::string> kEnvironmentOnly = {"CRONWHEEL_ADMIN_PASSWORD"};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class Deploy : public ::testing::Test {
 protected:
  void SetUp() override {
    compose_ = YAML::LoadFile(kSourceDir + "/docker-compose.yml");
    ASSERT_TRUE(compose_["services"].IsMap());
  }

  YAML::Node services() const { return compose_["services"]; }

  // The service's environment as a map, with a YAML merge key (<<: *anchor) applied.
  static std::map<std::string, std::string> environment(const YAML::Node& service) {
    std::map<std::string, std::string> env;
    const YAML::Node node = service["environment"];
    if (!node) return env;
    for (const auto& entry : node) {
      const auto key = entry.first.as<std::string>();
      if (key == "<<") {
        for (const auto& merged : entry.second) env[merged.first.as<std::string>()] = merged.second.as<std::string>();
      }
    }
    for (const auto& entry : node) {
      const auto key = entry.first.as<std::string>();
      if (key != "<<") env[key] = entry.second.as<std::string>();
    }
    return env;
  }

  static bool is_cronwheel(const YAML::Node& service) {
    return service["image"] && service["image"].as<std::string>().rfind("cronwheel", 0) == 0;
  }

  static std::string help_of(const std::string& binary) {
    auto r = testing::Process::run({kBinDir + "/" + binary, "--help"});
    EXPECT_EQ(r.code, 0) << binary << " --help: " << r.err;
    return r.out;
  }

  YAML::Node compose_;
};

TEST_F(Deploy, DependenciesNameServicesThatExist) {
  for (const auto& service : services()) {
    for (const auto& dependency : service.second["depends_on"]) {
      EXPECT_TRUE(services()[dependency.first.as<std::string>()])
          << service.first << " depends on unknown service " << dependency.first;
    }
  }
}

TEST_F(Deploy, TheCronwheelImageIsBuiltByOneServiceFromTheDockerfile) {
  int builders = 0;
  for (const auto& service : services()) {
    if (is_cronwheel(service.second) && service.second["build"]) ++builders;
  }
  EXPECT_EQ(builders, 1);
  const auto dockerfile = read_file(kSourceDir + "/Dockerfile");
  EXPECT_NE(dockerfile.find("--target cronwheel-admin cronwheel-executor"), std::string::npos);
  EXPECT_NE(dockerfile.find("build/bin/cronwheel-admin /src/build/bin/cronwheel-executor /usr/local/bin/"),
            std::string::npos);
}

TEST_F(Deploy, AdminsUseThePostgresServiceAndExecutorsReachEveryAdmin) {
  std::map<std::string, std::string> admin_ports;  // service → container port
  for (const auto& service : services()) {
    if (!is_cronwheel(service.second)) continue;
    if (service.second["command"][0].as<std::string>() != "cronwheel-admin") continue;
    auto env = environment(service.second);
    std::smatch m;
    ASSERT_TRUE(std::regex_match(env["CRONWHEEL_DB_URL"], m, std::regex(R"(postgresql://[^@]+@([^:/]+):5432/\w+)")))
        << service.first << ": " << env["CRONWHEEL_DB_URL"];
    EXPECT_TRUE(services()[m[1].str()]) << service.first << " uses unknown database host " << m[1];
    ASSERT_TRUE(std::regex_match(env["CRONWHEEL_LISTEN"], m, std::regex(R"(0\.0\.0\.0:(\d+))")));
    admin_ports[service.first.as<std::string>()] = m[1];
  }
  EXPECT_EQ(admin_ports.size(), 2u);

  int executors = 0;
  for (const auto& service : services()) {
    if (!is_cronwheel(service.second) || service.second["command"][0].as<std::string>() != "cronwheel-executor") {
      continue;
    }
    ++executors;
    auto env = environment(service.second);
    std::set<std::string> reached;
    std::stringstream list(env["CRONWHEEL_ADMIN_ADDRESSES"]);
    for (std::string url; std::getline(list, url, ',');) {
      std::smatch m;
      ASSERT_TRUE(std::regex_match(url, m, std::regex(R"(http://([^:/]+):(\d+)/)"))) << url;
      ASSERT_TRUE(admin_ports.count(m[1])) << service.first << " calls unknown admin " << url;
      EXPECT_EQ(admin_ports[m[1]], m[2].str()) << url;
      reached.insert(m[1]);
    }
    EXPECT_EQ(reached.size(), admin_ports.size()) << service.first << " does not know every admin";
    // The advertised address names the service itself.
    const auto command = service.second["command"];
    for (std::size_t i = 0; i + 1 < command.size(); ++i) {
      if (command[i].as<std::string>() == "--address") {
        EXPECT_EQ(command[i + 1].as<std::string>(), "http://" + service.first.as<std::string>() + ":9999/");
      }
    }
  }
  EXPECT_EQ(executors, 2);
}

TEST_F(Deploy, CommandsAndEnvironmentAreWhatTheBinariesAccept) {
  std::map<std::string, std::string> help;
  for (const auto& service : services()) {
    if (!is_cronwheel(service.second)) continue;
    const auto command = service.second["command"];
    const auto binary = command[0].as<std::string>();
    ASSERT_TRUE(binary == "cronwheel-admin" || binary == "cronwheel-executor") << binary;
    if (!help.count(binary)) help[binary] = help_of(binary);
    for (std::size_t i = 1; i < command.size(); ++i) {
      const auto arg = command[i].as<std::string>();
      if (arg.rfind("--", 0) == 0) {
        EXPECT_NE(help[binary].find(arg + " "), std::string::npos) << service.first << ": " << binary << " has no " << arg;
      }
    }
    for (const auto& [name, value] : environment(service.second)) {
      if (kEnvironmentOnly.count(name)) continue;
      EXPECT_NE(help[binary].find("(Env:" + name + ")"), std::string::npos)
          << service.first << ": " << binary << " does not read " << name;
    }
  }
}

TEST_F(Deploy, PublishedPortsDoNotCollide) {
  std::set<std::string> host_ports;
  for (const auto& service : services()) {
    for (const auto& port : service.second["ports"]) {
      auto mapping = port.as<std::string>();
      auto host = mapping.substr(0, mapping.find(':'));
      EXPECT_TRUE(host_ports.insert(host).second) << "host port " << host << " published twice";
    }
  }
}

}  // namespace
}  // namespace cronwheel
