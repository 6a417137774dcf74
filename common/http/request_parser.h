#pragma once

// HttpServer's reading of request bytes: Boost.Beast's HTTP/1.1 parser, set up with the
// server's limits, and what request_head.h decides of a head it has read. Private to
// common/http (the server and parse_request_head); nothing outside names Beast.

#include <variant>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "common/http/request_head.h"

namespace cronwheel::common::http {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// Readies a fresh parser for one request: the head limited to limits.max_head_bytes, no body
// read before check_head has seen the head (the route's body limit is the server's to check,
// against the declared Content-Length).
void prepare_parser(RequestParser& parser, const HeadLimits& limits);

// The status and message to answer for a parse error. `received` is what the parser was given
// (its first line tells an unsupported HTTP version from a malformed one).
HeadError parse_failure(const boost::beast::error_code& error, std::string_view received, const HeadLimits& limits);

// Checks the head `parser` has read whole (is_header_done()), `head_bytes` long (what the put
// that completed it consumed: Beast takes a head whole or not at all). Beast's header_limit
// only stops a head still arriving; a longer one that arrives at once is refused here.
std::variant<RequestHead, HeadError> check_head(const RequestParser& parser, std::size_t head_bytes,
                                                const HeadLimits& limits);

}  // namespace cronwheel::common::http
