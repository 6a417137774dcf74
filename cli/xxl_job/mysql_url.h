#pragma once

// The address of an XXL-JOB database, as `cronwheel import xxl-job --mysql URL` takes it:
//
//   mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE
//
// USER, PASSWORD and DATABASE are percent-decoded (a password with '@', ':' or '/' writes them
// as %40, %3A, %2F). HOST is a name or IPv4 address of letters, digits, '.', '-' and '_', or an
// IPv6 address in brackets ("[::1]"); PORT is 1-65535, 3306 when left out. The connection is
// always TCP, even to "localhost" (libmariadb would otherwise take the local socket).

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cronwheel::cli::xxl_job {

inline constexpr std::size_t kMaxMysqlUrlBytes = 2048;
inline constexpr std::size_t kMaxMysqlUserBytes = 80;       // MariaDB's longest user name
inline constexpr std::size_t kMaxMysqlPasswordBytes = 512;
inline constexpr std::size_t kMaxMysqlDatabaseBytes = 64;   // MySQL's longest database name
inline constexpr std::size_t kMaxMysqlHostBytes = 255;
inline constexpr int kDefaultMysqlPort = 3306;

struct MysqlUrl {
  std::string user;
  std::string password;  // "" when the URL has none
  std::string host;      // an IPv6 address without its brackets
  int port = kDefaultMysqlPort;
  std::string database;

  // The URL without its password, for messages: "mysql://xxl@db.example:3306/xxl_job".
  std::string redacted() const;
};

// What is wrong with a URL, in one line that names the part and never repeats the password:
// "mysql URL: the port must be 1-65535, got '99999'".
class MysqlUrlError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parses `text` as above, or throws MysqlUrlError. Refused: anything longer than
// kMaxMysqlUrlBytes (checked first), spaces, control characters and non-ASCII bytes (they must be
// percent-encoded), a query or fragment, an empty user, host or database, a percent escape
// that is not two hex digits, a decoded NUL byte, parts longer than the limits above.
// Linear in the length of `text`.
MysqlUrl parse_mysql_url(std::string_view text);

}  // namespace cronwheel::cli::xxl_job
