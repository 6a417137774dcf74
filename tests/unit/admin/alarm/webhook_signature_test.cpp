#include "admin/alarm/webhook_signature.h"

#include <gtest/gtest.h>

#include <string>

namespace cronwheel::admin {
namespace {

// RFC 4231's test cases 2 (a short key) and 6 (a key longer than the block, hashed first).
TEST(WebhookSignature, HmacSha256MatchesRfc4231) {
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hmac_sha256_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(WebhookSignature, SignsTheTimestampADotAndTheBody) {
  const std::string body = R"({"event":"test"})";
  EXPECT_EQ(webhook_signature("s3cret", 1800000000, body),
            "sha256=" + hmac_sha256_hex("s3cret", "1800000000." + body));
  EXPECT_NE(webhook_signature("s3cret", 1800000001, body), webhook_signature("s3cret", 1800000000, body));
  EXPECT_NE(webhook_signature("other", 1800000000, body), webhook_signature("s3cret", 1800000000, body));
}

}  // namespace
}  // namespace cronwheel::admin
