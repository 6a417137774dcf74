#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "common/http/request_head.h"

namespace cronwheel {
namespace {

using common::http::HeadError;
using common::http::HeadLimits;
using common::http::parse_request_head;
using common::http::percent_decode;
using common::http::RequestHead;

RequestHead parsed(const std::string& head, const HeadLimits& limits = {}) {
  auto result = parse_request_head(head, limits);
  if (auto* error = std::get_if<HeadError>(&result)) {
    ADD_FAILURE() << "refused with " << error->status << ": " << error->message;
    return {};
  }
  return std::get<RequestHead>(result);
}

int refusal(const std::string& head, const HeadLimits& limits = {}) {
  auto result = parse_request_head(head, limits);
  if (auto* error = std::get_if<HeadError>(&result)) return error->status;
  return 0;
}

TEST(RequestHead, ReadsTheHeadAndLeavesWhatFollows) {
  auto head = parsed("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbodyGET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.head_bytes, 48u);
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\nHost: x\r\n"), 400);  // not whole
}

TEST(RequestHead, BareLineFeedsAre400) {
  EXPECT_EQ(refusal("GET / HTTP/1.1\nHost: x\n\n"), 400);
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\nHost: x\n\r\n"), 400);
}

TEST(RequestHead, ReadsMethodTargetPathAndBodyLength) {
  auto head = parsed("POST /api/v1/jobs%2F1?text=a%20b HTTP/1.1\r\nHost: x\r\ncontent-length: 12\r\n"
                     "Expect: 100-Continue\r\n\r\n");
  EXPECT_EQ(head.method, "POST");
  EXPECT_EQ(head.target, "/api/v1/jobs%2F1?text=a%20b");
  EXPECT_EQ(head.path, "/api/v1/jobs/1");
  EXPECT_EQ(head.minor_version, 1);
  ASSERT_TRUE(head.content_length);
  EXPECT_EQ(*head.content_length, 12u);
  EXPECT_TRUE(head.expect_continue);
}

TEST(RequestHead, Http10IsAccepted) {
  auto head = parsed("GET /healthz HTTP/1.0\r\n\r\n");
  EXPECT_EQ(head.minor_version, 0);
  EXPECT_FALSE(head.content_length);
}

TEST(RequestHead, MalformedRequestLinesAre400) {
  EXPECT_EQ(refusal("GET\r\n\r\n"), 400);
  EXPECT_EQ(refusal("GET /\r\n\r\n"), 400);
  EXPECT_EQ(refusal("G(T / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(refusal("GET http://evil/ HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(refusal("GET /a b HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(refusal("GET /a\x01 HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(refusal("GET /\xff HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(refusal("GET / HTTX/1.1\r\n\r\n"), 400);
  EXPECT_EQ(refusal("GET / HTTP/2.0\r\n\r\n"), 505);
}

TEST(RequestHead, EncodedControlCharactersInThePathAre400) {
  // A %0A in a path would otherwise reach log lines and handlers as a line break.
  EXPECT_EQ(refusal("GET /api%0Aforged HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(refusal("GET /a%00b HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(refusal("GET /a?q=%0A HTTP/1.1\r\n\r\n"), 0);  // the query is the handler's to check
}

TEST(RequestHead, MalformedHeadersAre400) {
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\nno colon\r\n\r\n"), 400);
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n"), 400);
  EXPECT_EQ(refusal(std::string("GET / HTTP/1.1\r\nA: b\0c\r\n\r\n", 27)), 400);
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n"), 400);
}

TEST(RequestHead, AnObsoleteFoldedLineIsJoinedWithASpace) {
  // RFC 9112 section 5.2: a server either refuses obs-fold or replaces it with spaces.
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n"), 0);
}

TEST(RequestHead, MethodsLongerThan16BytesAre400) {
  EXPECT_EQ(refusal("ABCDEFGHIJKLMNOPQ / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(refusal("ABCDEFGHIJKLMNOP / HTTP/1.1\r\n\r\n"), 0);
}

TEST(RequestHead, ContentLengthMustBeOneDecimalNumber) {
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), 400);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n"), 400);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nContent-Length: \r\n\r\n"), 400);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n"), 400);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"), 400);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"), 0);
}

TEST(RequestHead, TransferEncodingsAreRefused) {
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), 411);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), 501);
  // Both framings at once is how requests are smuggled past proxies.
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
  // No coding at all: a proxy may see a body where this server would see the next request.
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n"), 400);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nTransfer-Encoding: , \r\n\r\n"), 400);
}

TEST(RequestHead, LimitsAreEnforcedBeforeParsing) {
  HeadLimits limits;
  limits.max_head_bytes = 64;
  limits.max_target_bytes = 16;
  limits.max_header_count = 2;
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\nA: " + std::string(80, 'x') + "\r\n\r\n", limits), 431);
  EXPECT_EQ(refusal("GET /" + std::string(16, 'a') + " HTTP/1.1\r\n\r\n", limits), 414);
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits), 431);
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\n\r\n", limits), 0);
}

TEST(RequestHead, AHeadOverTheLimitArrivingWholeIs431) {
  HeadLimits limits;
  limits.max_head_bytes = 256;
  auto head_of = [](std::size_t size) {
    const std::string start = "GET /x HTTP/1.1\r\nA: ";
    return start + std::string(size - start.size() - 4, 'a') + "\r\n\r\n";
  };
  EXPECT_EQ(refusal(head_of(260), limits), 431);
  EXPECT_EQ(refusal(head_of(257), limits), 431);
  EXPECT_EQ(parsed(head_of(256), limits).head_bytes, 256u);
}

TEST(RequestHead, PercentDecodingKeepsInvalidEscapes) {
  EXPECT_EQ(percent_decode("a%20b%2fc"), "a b/c");
  EXPECT_EQ(percent_decode("100%"), "100%");
  EXPECT_EQ(percent_decode("%zz%4"), "%zz%4");
  EXPECT_EQ(percent_decode("a+b"), "a+b");
}

}  // namespace
}  // namespace cronwheel
