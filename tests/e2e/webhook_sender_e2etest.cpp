// CurlWebhookSender against a real HTTP receiver on loopback (tests/support/webhook_receiver.h):
// what it sends, how a receiver checks the signature, and how each failure is reported.

#include "admin/outbound/curl_webhook_sender.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <string>
#include <thread>

#include "admin/alarm/webhook_signature.h"
#include "tests/support/fake_clock.h"
#include "tests/support/webhook_receiver.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;

class WebhookSenderE2e : public ::testing::Test {
 protected:
  testing::FakeClock clock_{1'800'000'000'123};
  testing::WebhookReceiver receiver_;
  CurlWebhookSender sender_{clock_, {}};
};

TEST_F(WebhookSenderE2e, PostsTheBodySignedOverTheTimestampAndTheBody) {
  const std::string body = R"({"event":"test","text":"h\u00e9llo"})";
  sender_.post({receiver_.url("/hooks/cron?team=ops"), "a-very-secret-key", body});
  auto got = receiver_.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, "/hooks/cron");
  EXPECT_EQ(got[0].content_type, "application/json");
  EXPECT_EQ(got[0].body, body);
  EXPECT_EQ(got[0].timestamp, "1800000000");
  // What a receiver does: the HMAC of "<timestamp>.<raw body>" with the shared secret.
  EXPECT_EQ(got[0].signature, "sha256=" + hmac_sha256_hex("a-very-secret-key", got[0].timestamp + "." + got[0].body));
}

TEST_F(WebhookSenderE2e, WithoutASecretTheRequestIsUnsigned) {
  sender_.post({receiver_.url(), "", "{}"});
  auto got = receiver_.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].signature.empty());
  EXPECT_TRUE(got[0].timestamp.empty());
}

TEST_F(WebhookSenderE2e, AnAnswerOtherThan2xxIsAnErrorNamingTheStatusButNotThePath) {
  receiver_.fail_next(1);
  try {
    sender_.post({receiver_.url("/services/T000/B000/credential-in-path"), "key-key-key-key-key", "{}"});
    FAIL() << "no error";
  } catch (const WebhookError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("answered HTTP 503: receiver busy"), std::string::npos) << what;
    EXPECT_EQ(what.find("credential-in-path"), std::string::npos) << what;
  }
}

TEST_F(WebhookSenderE2e, RedirectsAreNotFollowed) {
  httplib::Server redirecting;
  redirecting.Post("/", [&](const httplib::Request&, httplib::Response& res) { res.set_redirect(receiver_.url()); });
  const int port = redirecting.bind_to_any_port("127.0.0.1");
  std::thread serving = testing::serve_in_background(redirecting);
  EXPECT_THROW(sender_.post({"http://127.0.0.1:" + std::to_string(port) + "/", "", "{}"}), WebhookError);
  redirecting.stop();
  serving.join();
  EXPECT_TRUE(receiver_.requests().empty());
}

TEST_F(WebhookSenderE2e, UnreachableReceiversAndBadUrlsAreErrors) {
  // Port 9 (discard): nobody listens on loopback.
  try {
    sender_.post({"http://127.0.0.1:9/hook", "", "{}"});
    FAIL() << "no error";
  } catch (const WebhookError& e) {
    EXPECT_NE(std::string(e.what()).find("http://127.0.0.1:9: cannot connect"), std::string::npos) << e.what();
  }
  for (const char* url : {"ftp://127.0.0.1/", "file:///etc/passwd", "http://user:pw@127.0.0.1/", "not a url", ""}) {
    EXPECT_THROW(sender_.post({url, "", "{}"}), WebhookError) << url;
  }
  EXPECT_THROW(sender_.post({receiver_.url(), "", std::string(CurlWebhookSender::kMaxBodyBytes + 1, 'x')}),
               WebhookError);
  EXPECT_TRUE(receiver_.requests().empty());
}

TEST_F(WebhookSenderE2e, AReceiverThatNeverAnswersTimesOut) {
  httplib::Server slow;
  slow.Post("/", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(3s);
    res.set_content("late", "text/plain");
  });
  const int port = slow.bind_to_any_port("127.0.0.1");
  std::thread serving = testing::serve_in_background(slow);
  CurlWebhookSender impatient(clock_, {.connect_timeout = 1s, .timeout = 1s});
  try {
    impatient.post({"http://127.0.0.1:" + std::to_string(port) + "/", "", "{}"});
    ADD_FAILURE() << "no error";
  } catch (const WebhookError& e) {
    EXPECT_NE(std::string(e.what()).find("timeout"), std::string::npos) << e.what();
  }
  slow.stop();
  serving.join();
}

}  // namespace
}  // namespace cronwheel::admin
