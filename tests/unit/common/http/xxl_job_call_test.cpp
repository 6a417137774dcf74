#include <gtest/gtest.h>

#include <string>

#include "common/http/http_server.h"
#include "common/http/xxl_job_call.h"
#include "common/protocol/messages.h"
#include "tests/unit/common/http/test_server.h"

namespace cronwheel {
namespace {

using common::http::HttpClient;
using common::http::HttpServer;
using common::http::post_xxl_job;
using namespace common::protocol;

// An executor-like server answering fixed bodies per path.
class XxlJobCall : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.post("/log", [](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
      auto param = parse<LogParam>(req.body);
      LogResult result{param.from_line_num, param.from_line_num + 1, "a\nb\n", true};
      common::http::write_json(res, to_json_string(ReturnT<LogResult>::success(result)));
    });
    server_.post("/run", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      common::http::write_json(res, R"({"code":500,"msg":"block strategy effect：Discard Later"})");
    });
    server_.post("/refused", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      common::http::write_json(res, R"({"code":500,"msg":"The access token is wrong."})", 401);
    });
    server_.post("/proxy", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      res.status = 502;
      res.set_content("<html><body>502 Bad Gateway</body></html>", "text/html");
    });
    server_.post("/garbage", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      common::http::write_json(res, R"({"status":"ok"})");
    });
    server_.start();
    client_ = std::make_unique<HttpClient>("http://127.0.0.1:" + std::to_string(server_.port()));
  }
  void TearDown() override { server_.stop(); }

  HttpServer server_{testing::loopback_options()};
  std::unique_ptr<HttpClient> client_;
};

TEST_F(XxlJobCall, SuccessCarriesTypedContent) {
  auto answer = post_xxl_job<LogResult>(*client_, kLogPath,
                                        to_json_string(LogParam{1700647200012, 1187, 3}));
  ASSERT_TRUE(answer.is_success()) << answer.msg;
  ASSERT_TRUE(answer.content.has_value());
  EXPECT_EQ(*answer.content, (LogResult{3, 4, "a\nb\n", true}));
}

TEST_F(XxlJobCall, FailureAnswerIsReturnedAsIs) {
  auto answer = post_xxl_job(*client_, kRunPath, to_json_string(TriggerParam{}));
  EXPECT_EQ(answer.code, kFailCode);
  EXPECT_EQ(answer.msg, "block strategy effect：Discard Later");
}

TEST_F(XxlJobCall, NonOkStatusWithAReturnTBodyKeepsItsMessage) {
  auto answer = post_xxl_job(*client_, "/refused", "{}");
  EXPECT_EQ(answer.code, kFailCode);
  EXPECT_EQ(answer.msg, "The access token is wrong.");
}

TEST_F(XxlJobCall, NonOkStatusWithOtherBodyNamesStatusAndUrl) {
  auto answer = post_xxl_job(*client_, "/proxy", "{}");
  EXPECT_EQ(answer.code, kFailCode);
  EXPECT_EQ(answer.msg, "HTTP 502 from POST " + client_->url("/proxy") +
                            ": <html><body>502 Bad Gateway</body></html>");
}

TEST_F(XxlJobCall, OkStatusWithoutAReturnTIsAFailure) {
  auto answer = post_xxl_job(*client_, "/garbage", "{}");
  EXPECT_EQ(answer.code, kFailCode);
  EXPECT_EQ(answer.msg, "invalid answer from POST " + client_->url("/garbage") +
                            ": code: missing, a response envelope needs a code");
}

TEST_F(XxlJobCall, UnknownPathIsAFailure) {
  auto answer = post_xxl_job(*client_, "/nope", "{}");
  EXPECT_FALSE(answer.is_success());
  EXPECT_EQ(answer.msg.rfind("HTTP 404 from POST ", 0), 0u) << answer.msg;
}

TEST(XxlJobCallTransport, UnreachableServerIsAFailureNotAnException) {
  HttpServer server(testing::loopback_options());
  server.start();
  int port = server.port();
  server.stop();
  HttpClient client("http://127.0.0.1:" + std::to_string(port) + "/xxl-job-admin/");
  ReturnT<std::string> answer;
  ASSERT_NO_THROW(answer = post_xxl_job(client, kCallbackPath, "[]"));
  EXPECT_EQ(answer.code, kFailCode);
  EXPECT_EQ(answer.msg.rfind("POST http://127.0.0.1:" + std::to_string(port) +
                                 "/xxl-job-admin/api/callback: cannot connect",
                             0),
            0u)
      << answer.msg;
}

}  // namespace
}  // namespace cronwheel
