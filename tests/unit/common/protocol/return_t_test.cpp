#include <gtest/gtest.h>

#include <string>

#include "tests/unit/common/protocol/protocol_error_of.h"

#include "common/protocol/messages.h"
#include "common/protocol/return_t.h"

namespace cronwheel {
namespace {

using namespace common::protocol;
using nlohmann::json;
using testing::protocol_error_of;

TEST(ReturnT, SuccessSerializesWithNullMsgAndContent) {
  EXPECT_EQ(json::parse(to_json_string(ReturnT<std::string>::success())),
            json::parse(R"({"code":200,"msg":null,"content":null})"));
}

TEST(ReturnT, FailureSerializesMsg) {
  EXPECT_EQ(json::parse(to_json_string(ReturnT<std::string>::fail("job thread is running"))),
            json::parse(R"({"code":500,"msg":"job thread is running","content":null})"));
  EXPECT_EQ(json::parse(to_json_string(ReturnT<std::string>::fail("slow", kTimeoutCode))),
            json::parse(R"({"code":502,"msg":"slow","content":null})"));
}

TEST(ReturnT, LogResultContentSerializesAsObject) {
  auto value = ReturnT<LogResult>::success(LogResult{1, 2, "a\nb\n", false});
  EXPECT_EQ(json::parse(to_json_string(value)), json::parse(R"(
      {"code":200,"msg":null,
       "content":{"fromLineNum":1,"toLineNum":2,"logContent":"a\nb\n","isEnd":false}})"));
}

TEST(ReturnT, RoundTrips) {
  for (const auto& value : {ReturnT<std::string>::success(), ReturnT<std::string>::success("x"),
                            ReturnT<std::string>::fail("bad"),
                            ReturnT<std::string>::fail("late", kTimeoutCode)}) {
    EXPECT_EQ(parse<ReturnT<std::string>>(to_json_string(value)), value);
  }
  auto log = ReturnT<LogResult>::success(LogResult{5, 9, "tail", true});
  EXPECT_EQ(parse<ReturnT<LogResult>>(to_json_string(log)), log);
  auto any = ReturnT<json>::success(json{{"k", 1}});
  EXPECT_EQ(parse<ReturnT<json>>(to_json_string(any)), any);
}

TEST(ReturnT, ParsesJavaExecutorAnswersWhereGsonOmitsNulls) {
  auto ok = parse<ReturnT<std::string>>(R"({"code":200})");
  EXPECT_TRUE(ok.is_success());
  EXPECT_EQ(ok.msg, "");
  EXPECT_FALSE(ok.content.has_value());

  auto refused = parse<ReturnT<std::string>>(
      R"({"code":500,"msg":"block strategy effect：Discard Later"})");
  EXPECT_FALSE(refused.is_success());
  EXPECT_EQ(refused.code, kFailCode);
  EXPECT_EQ(refused.msg, "block strategy effect：Discard Later");
}

TEST(ReturnT, ParsesJavaAdminAnswerWithExplicitNulls) {
  auto ok = parse<ReturnT<std::string>>(R"({"code":200,"msg":null,"content":null})");
  EXPECT_EQ(ok, ReturnT<std::string>::success());
}

TEST(ReturnT, ParsesJavaLogAnswer) {
  auto log = parse<ReturnT<LogResult>>(
      R"({"code":200,"content":{"fromLineNum":1,"toLineNum":2,"logContent":"2023-11-22 10:00:00 [com.xxl.job.core.thread.JobThread#run]-[133]-[xxl-job, JobThread-2-1700647200012] <br>----------- xxl-job job execute start -----------<br>----------- Param:\n2023-11-22 10:00:01 [SampleXxlJob.java#demoJobHandler]-[39]-[xxl-job, JobThread-2-1700647200012] XXL-JOB, Hello World.\n","isEnd":false}})");
  ASSERT_TRUE(log.content.has_value());
  EXPECT_EQ(log.content->from_line_num, 1);
  EXPECT_EQ(log.content->to_line_num, 2);
  EXPECT_FALSE(log.content->is_end);
}

TEST(ReturnT, AcceptsDataAsContentAlias) {
  auto log = parse<ReturnT<LogResult>>(
      R"({"code":200,"msg":"success","data":{"fromLineNum":3,"toLineNum":3,"logContent":"","isEnd":true}})");
  ASSERT_TRUE(log.content.has_value());
  EXPECT_EQ(log.content->from_line_num, 3);
  EXPECT_TRUE(log.content->is_end);
  EXPECT_EQ(log.msg, "success");
  EXPECT_EQ(parse<ReturnT<std::string>>(R"({"code":200,"data":"x"})").content, "x");
  // content wins when both are present; a null content falls back to data.
  EXPECT_EQ(parse<ReturnT<std::string>>(R"({"code":200,"content":"c","data":"d"})").content, "c");
  EXPECT_EQ(parse<ReturnT<std::string>>(R"({"code":200,"content":null,"data":"d"})").content,
            "d");
}

TEST(ReturnT, ErrorsNameTheField) {
  EXPECT_EQ(protocol_error_of([] { parse<ReturnT<std::string>>(R"({"msg":"x"})"); }),
            "code: missing, a response envelope needs a code");
  EXPECT_EQ(protocol_error_of([] { parse<ReturnT<std::string>>(R"({"code":"200"})"); }),
            "code: expected an integer, got string");
  EXPECT_EQ(protocol_error_of([] { parse<ReturnT<std::string>>(R"({"code":200,"msg":7})"); }),
            "msg: expected a string, got number");
  EXPECT_EQ(protocol_error_of([] { parse<ReturnT<std::string>>(R"({"code":200,"content":{}})"); }),
            "content: expected a string, got object");
  EXPECT_EQ(protocol_error_of([] {
              parse<ReturnT<LogResult>>(R"({"code":200,"content":{"toLineNum":"9"}})");
            }),
            "content.toLineNum: expected an integer, got string");
  EXPECT_EQ(protocol_error_of([] { parse<ReturnT<LogResult>>(R"({"code":200,"data":[]})"); }),
            "content: expected a JSON object, got array");
  EXPECT_EQ(protocol_error_of([] { parse<ReturnT<std::string>>("[]"); }),
            "expected a JSON object, got array");
  auto message = protocol_error_of([] { parse<ReturnT<std::string>>("<html>502 Bad Gateway</html>"); });
  EXPECT_EQ(message.rfind("malformed JSON: ", 0), 0u) << message;
}

}  // namespace
}  // namespace cronwheel
