#include <gtest/gtest.h>

#include "admin/server/admin_server.h"
#include "admin/pg/connection_string.h"

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

TEST(ConnectionParameter, IsAddedToUrlsAndKeyValueStrings) {
  EXPECT_EQ(connection_string_problem("postgresql://u:secret@h:5432/db?sslmode=disable"), std::nullopt);
  EXPECT_EQ(connection_string_problem("host=h dbname=db"), std::nullopt);
  auto problem = connection_string_problem("postgresql://u:secret@h:5432/db?nosuchparameter=1");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("nosuchparameter"), std::string::npos) << *problem;
  EXPECT_EQ(problem->find("secret"), std::string::npos) << "never the password: " << *problem;
  EXPECT_EQ(with_connection_parameter("postgresql://u@h:5432/db", "connect_timeout", "3"),
            "postgresql://u@h:5432/db?connect_timeout=3");
  EXPECT_EQ(with_connection_parameter("postgres://u@h/db?sslmode=disable", "connect_timeout", "3"),
            "postgres://u@h/db?sslmode=disable&connect_timeout=3");
  EXPECT_EQ(with_connection_parameter("host=h dbname=db", "connect_timeout", "5"),
            "host=h dbname=db connect_timeout='5'");
}

TEST(ConnectionParameter, ValuesAreEncodedForTheirForm) {
  EXPECT_EQ(with_connection_parameter("postgresql://h/db", "options", "-c statement_timeout=5"),
            "postgresql://h/db?options=-c%20statement_timeout%3D5");
  EXPECT_EQ(with_connection_parameter("host=h", "options", "-c x='y'"), "host=h options='-c x=\\'y\\''");
}

TEST(ConnectionParameter, KeepsOneTheUserSet) {
  EXPECT_EQ(with_connection_parameter("postgresql://h/db?connect_timeout=30", "connect_timeout", "3"),
            "postgresql://h/db?connect_timeout=30");
  EXPECT_EQ(with_connection_parameter("host=h connect_timeout=30", "connect_timeout", "3"),
            "host=h connect_timeout=30");
  // A longer key that ends the same way is another parameter.
  EXPECT_EQ(with_connection_parameter("postgresql://h/db?xconnect_timeout=1", "connect_timeout", "3"),
            "postgresql://h/db?xconnect_timeout=1&connect_timeout=3");
}

}  // namespace
}  // namespace cronwheel::admin
