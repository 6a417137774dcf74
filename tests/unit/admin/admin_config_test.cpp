#include <gtest/gtest.h>

#include "admin/server/admin_server.h"
#include "admin/server/health_check.h"

namespace cronwheel::admin {
namespace {

TEST(ListenAddress, SplitsHostAndPort) {
  EXPECT_EQ(parse_listen_address("0.0.0.0:8080"), (std::pair<std::string, int>{"0.0.0.0", 8080}));
  EXPECT_EQ(parse_listen_address("localhost:0"), (std::pair<std::string, int>{"localhost", 0}));
  EXPECT_EQ(parse_listen_address("[::1]:9000"), (std::pair<std::string, int>{"::1", 9000}));
}

TEST(ListenAddress, RejectsWhatIsNotHostColonPortAndSaysWhy) {
  for (const char* bad : {"8080", ":8080", "host:", "host:http", "host:70000", "host:-1", "host:80x"}) {
    try {
      parse_listen_address(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(ConnectTimeout, IsAddedToUrlsAndKeyValueStrings) {
  EXPECT_EQ(with_connect_timeout("postgresql://u@h:5432/db", 3), "postgresql://u@h:5432/db?connect_timeout=3");
  EXPECT_EQ(with_connect_timeout("postgres://u@h/db?sslmode=disable", 3),
            "postgres://u@h/db?sslmode=disable&connect_timeout=3");
  EXPECT_EQ(with_connect_timeout("host=h dbname=db", 5), "host=h dbname=db connect_timeout=5");
}

TEST(ConnectTimeout, KeepsOneTheUserSet) {
  EXPECT_EQ(with_connect_timeout("postgresql://h/db?connect_timeout=30", 3), "postgresql://h/db?connect_timeout=30");
}

}  // namespace
}  // namespace cronwheel::admin
