#include "cli/xxl_job/mysql_url.h"

#include <string>

#include <gtest/gtest.h>

namespace cronwheel::cli::xxl_job {
namespace {

struct GoodUrl {
  std::string text;
  std::string user, password, host;
  int port;
  std::string database;
};

TEST(MysqlUrl, ParsesEveryPartAndPercentDecodes) {
  const GoodUrl cases[] = {
      {"mysql://xxl:secret@db.example.com:3307/xxl_job", "xxl", "secret", "db.example.com", 3307, "xxl_job"},
      {"mysql://root@127.0.0.1/xxl_job", "root", "", "127.0.0.1", 3306, "xxl_job"},
      {"MYSQL://u:@localhost:1/d", "u", "", "localhost", 1, "d"},
      {"mysql://u%40corp:p%40ss%3Aw%2Frd%25@h:65535/xxl%2Djob", "u@corp", "p@ss:w/rd%", "h", 65535, "xxl-job"},
      {"mysql://u:p@@h/d", "u", "p@", "h", 3306, "d"},  // the last '@' ends the user information
      {"mysql://u:p@[::1]:3306/d", "u", "p", "::1", 3306, "d"},
      {"mysql://u:p@[fe80::1]/d", "u", "p", "fe80::1", 3306, "d"},
      {"mysql://u:p@my_db-1.internal/d", "u", "p", "my_db-1.internal", 3306, "d"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const MysqlUrl url = parse_mysql_url(c.text);
    EXPECT_EQ(url.user, c.user);
    EXPECT_EQ(url.password, c.password);
    EXPECT_EQ(url.host, c.host);
    EXPECT_EQ(url.port, c.port);
    EXPECT_EQ(url.database, c.database);
  }
}

struct BadUrl {
  std::string text;
  std::string message;  // the error's whole text
};

TEST(MysqlUrl, RefusesWithAMessageNamingThePart) {
  const std::string shape = "expected mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE";
  const BadUrl cases[] = {
      {"", "mysql URL: " + shape},
      {"postgresql://u@h/d", "mysql URL: " + shape},
      {"mysql://h/d", "mysql URL: no user: " + shape},
      {"mysql://u@h", "mysql URL: no database: " + shape},
      {"mysql://u@h/", "mysql URL: no database: " + shape},
      {"mysql://@h/d", "mysql URL: the user is empty: " + shape},
      {"mysql://u@/d", "mysql URL: the host is empty: " + shape},
      {"mysql://u@:3306/d", "mysql URL: the host is empty: " + shape},
      {"mysql://u@h:0/d", "mysql URL: the port must be 1-65535, got '0'"},
      {"mysql://u@h:65536/d", "mysql URL: the port must be 1-65535, got '65536'"},
      {"mysql://u@h:/d", "mysql URL: the port must be 1-65535, got ''"},
      {"mysql://u@h:33x/d", "mysql URL: the port must be 1-65535, got '33x'"},
      {"mysql://u@h:-1/d", "mysql URL: the port must be 1-65535, got '-1'"},
      {"mysql://u@h/d?ssl=1", "mysql URL: query parameters and fragments are not supported"},
      {"mysql://u@h/d#x", "mysql URL: query parameters and fragments are not supported"},
      {"mysql://u@h/a/b", "mysql URL: the database name must be percent-encoded if it has a '/'"},
      {"mysql://u:p ss@h/d", "mysql URL: spaces, control characters and non-ASCII characters must be percent-encoded"},
      {"mysql://u:p\x01@h/d", "mysql URL: spaces, control characters and non-ASCII characters must be percent-encoded"},
      {"mysql://u:p\xc3\xa9@h/d", "mysql URL: spaces, control characters and non-ASCII characters must be percent-encoded"},
      {"mysql://u:p%zz@h/d", "mysql URL: the password has a '%' that is not followed by two hex digits"},
      {"mysql://u:p%4@h/d", "mysql URL: the password has a '%' that is not followed by two hex digits"},
      {"mysql://u%@h/d", "mysql URL: the user has a '%' that is not followed by two hex digits"},
      {"mysql://u@h/d%00", "mysql URL: the database contains %00"},
      {"mysql://u@h!/d", "mysql URL: the host may have letters, digits, '.', '-' and '_' only (or be [IPv6])"},
      {"mysql://u@[::1/d", "mysql URL: an IPv6 host needs its closing ']'"},
      {"mysql://u@[db]/d", "mysql URL: the host in brackets is not an IPv6 address"},
      {"mysql://u@[::1]x/d", "mysql URL: expected ':PORT' after the IPv6 host"},
      {"mysql://" + std::string(81, 'u') + "@h/d", "mysql URL: the user is longer than 80 bytes"},
      {"mysql://u@h/" + std::string(65, 'd'), "mysql URL: the database is longer than 64 bytes"},
      {"mysql://u@" + std::string(256, 'h') + "/d", "mysql URL: the host is longer than 255 bytes"},
      {"mysql://u@h/" + std::string(2100, 'd'), "mysql URL: longer than 2048 bytes"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text.substr(0, 80));
    try {
      parse_mysql_url(c.text);
      ADD_FAILURE() << "accepted";
    } catch (const MysqlUrlError& error) {
      EXPECT_EQ(std::string(error.what()), c.message);
    }
  }
}

TEST(MysqlUrl, ErrorsNeverRepeatThePassword) {
  for (const std::string text : {"mysql://u:hunter2%zz@h/d", "mysql://u:hunter2@h:99999/d", "mysql://u:hunter2@h/d?x"}) {
    try {
      parse_mysql_url(text);
      ADD_FAILURE() << text << " accepted";
    } catch (const MysqlUrlError& error) {
      EXPECT_EQ(std::string(error.what()).find("hunter2"), std::string::npos) << error.what();
    }
  }
}

TEST(MysqlUrl, RedactedLeavesThePasswordOut) {
  EXPECT_EQ(parse_mysql_url("mysql://xxl:hunter2@db:3307/xxl_job").redacted(), "mysql://xxl@db:3307/xxl_job");
  EXPECT_EQ(parse_mysql_url("mysql://xxl:hunter2@[::1]/xxl_job").redacted(), "mysql://xxl@[::1]:3306/xxl_job");
}

}  // namespace
}  // namespace cronwheel::cli::xxl_job
