#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

// A request and an answer as the handlers of HttpServer (http_server.h) see them: plain values,
// with no HTTP library behind them, so the rooms that answer requests (the admin's API and
// server, the executor's endpoints) name no HTTP library and their tests build requests by hand.
namespace cronwheel::common::http {

// Header names compare without regard to case (RFC 9110 section 5.1).
struct HeaderNameLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept;
};
using Headers = std::multimap<std::string, std::string, HeaderNameLess>;

// Query parameters, decoded, in the order sent; a name may repeat.
using QueryParams = std::multimap<std::string, std::string, std::less<>>;

// A query string ("a=1&b=x%20y+z", without the '?') as parameters: each '&'-separated part
// split at its first '=' (no '=': an empty value), '+' read as a space and %XX escapes
// decoded; parts with an empty name are skipped.
QueryParams parse_query(std::string_view query);

// A whole request: the server has read its head and its body (within the route's limits) before
// a handler sees it.
struct Request {
  std::string method;       // GET, HEAD, POST, PUT or DELETE
  std::string target;       // as sent: the path and the query
  std::string path;         // the target's path, percent-decoded
  QueryParams params;       // the target's query
  Headers headers;
  std::string body;
  std::string remote_addr;  // the client's address (the proxy's, behind one)
  int remote_port = 0;

  bool has_header(std::string_view name) const;
  // The index-th value of the header `name`, "" when it has fewer.
  std::string get_header_value(std::string_view name, std::size_t index = 0) const;
  std::size_t get_header_value_count(std::string_view name) const;
  // Adds a header (for requests made by hand: tests, a server's own sub-requests).
  void set_header(std::string_view name, std::string value);
  bool has_param(std::string_view name) const;
  // The index-th value of the query parameter `name`, "" when it has fewer.
  std::string get_param_value(std::string_view name, std::size_t index = 0) const;
};

// An answer: the status, the headers and the whole body. The server adds what every answer
// carries (Content-Length, Connection, X-Content-Type-Options) and answers HEAD without the body.
struct Response {
  int status = 200;
  Headers headers;
  std::string body;

  bool has_header(std::string_view name) const;
  std::string get_header_value(std::string_view name) const;
  std::size_t get_header_value_count(std::string_view name) const;
  // Adds a header (Set-Cookie, say, may come twice). A name or value holding CR, LF or NUL is
  // not added: no handler can start another header or line with what it copies into one.
  void set_header(std::string_view name, std::string value);
  // The body, and its Content-Type (replacing an earlier one).
  void set_content(std::string content, std::string_view content_type);
};

}  // namespace cronwheel::common::http
