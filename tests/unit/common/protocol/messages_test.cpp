#include <gtest/gtest.h>

#include <string>

#include "tests/unit/common/protocol/protocol_error_of.h"

#include "common/protocol/constants.h"
#include "common/protocol/job_enums.h"
#include "common/protocol/messages.h"

namespace cronwheel {
namespace {

using namespace common::protocol;
using nlohmann::json;
using testing::protocol_error_of;

template <class T>
void expect_round_trip(const T& value) {
  EXPECT_EQ(parse<T>(to_json_string(value)), value);
}

// ---- Bodies as XXL-JOB 2.4 sends them -------------------------------------------------------
// The Java side serializes with Gson: fields in declaration order, null fields omitted, and (when
// HTML escaping is on) characters such as '=' written as \u003d.

TEST(Messages, ParsesRunBodyAsJavaAdminSendsIt) {
  auto param = parse<TriggerParam>(
      R"({"jobId":2,"executorHandler":"demoJobHandler","executorParams":"a\u003d1","executorBlockStrategy":"SERIAL_EXECUTION","executorTimeout":0,"logId":1187,"logDateTime":1700647200012,"glueType":"BEAN","glueSource":"","glueUpdatetime":1541254891000,"broadcastIndex":0,"broadcastTotal":1})");
  EXPECT_EQ(param.job_id, 2);
  EXPECT_EQ(param.executor_handler, "demoJobHandler");
  EXPECT_EQ(param.executor_params, "a=1");
  EXPECT_EQ(parse_enum<BlockStrategy>(param.executor_block_strategy),
            BlockStrategy::kSerialExecution);
  EXPECT_EQ(param.executor_timeout, 0);
  EXPECT_EQ(param.log_id, 1187);
  EXPECT_EQ(param.log_date_time, 1700647200012);
  EXPECT_EQ(parse_enum<GlueType>(param.glue_type), GlueType::kBean);
  EXPECT_EQ(param.glue_source, "");
  EXPECT_EQ(param.glue_updatetime, 1541254891000);
  EXPECT_EQ(param.broadcast_index, 0);
  EXPECT_EQ(param.broadcast_total, 1);
}

TEST(Messages, ParsesShellGlueRunBodyWithOmittedNulls) {
  // executorParams null in the database: Gson leaves the key out.
  auto param = parse<TriggerParam>(
      R"({"jobId":7,"executorHandler":"","executorBlockStrategy":"COVER_EARLY","executorTimeout":30,"logId":99,"logDateTime":1700647260000,"glueType":"GLUE_SHELL","glueSource":"#!/bin/bash\necho \"xxl-job: hello shell\"\nexit 0\n","glueUpdatetime":1700000000000,"broadcastIndex":1,"broadcastTotal":3})");
  EXPECT_EQ(param.executor_params, "");
  EXPECT_EQ(param.glue_source, "#!/bin/bash\necho \"xxl-job: hello shell\"\nexit 0\n");
  EXPECT_EQ(param.executor_timeout, 30);
  EXPECT_EQ(param.broadcast_index, 1);
  EXPECT_EQ(param.broadcast_total, 3);
}

TEST(Messages, ParsesCallbackBodyAsJavaExecutorSendsIt) {
  // A success (handleMsg null, so omitted) and a failure carrying a Java stack trace.
  auto batch = parse<CallbackBatch>(
      R"json([{"logId":1187,"logDateTim":1700647200012,"handleCode":200},{"logId":1188,"logDateTim":1700647201000,"handleCode":500,"handleMsg":"java.lang.RuntimeException: boom\n\tat com.xxl.job.executor.service.jobhandler.SampleXxlJob.demoJobHandler(SampleXxlJob.java:42)"}])json");
  ASSERT_EQ(batch.callbacks.size(), 2u);
  EXPECT_EQ(batch.callbacks[0],
            (HandleCallbackParam{1187, 1700647200012, kSuccessCode, "", std::nullopt}));
  EXPECT_EQ(batch.callbacks[1].log_id, 1188);
  EXPECT_EQ(batch.callbacks[1].handle_code, kFailCode);
  EXPECT_EQ(batch.callbacks[1].handle_msg.rfind("java.lang.RuntimeException: boom\n\tat ", 0), 0u);
}

TEST(Messages, ACallbacksOutputTravelsAsAJsonStringAndIsAbsentOtherwise) {
  HandleCallbackParam with{7, 1700647200012, kSuccessCode, "ok", std::string(R"({"rows":3})")};
  const nlohmann::json sent = with;
  EXPECT_EQ(sent["output"], R"({"rows":3})") << "a string, so its nesting never bounds the batch's";
  EXPECT_EQ(sent.get<HandleCallbackParam>(), with);
  HandleCallbackParam without{8, 1700647200012, kSuccessCode, "ok", std::nullopt};
  EXPECT_FALSE(nlohmann::json(without).contains("output")) << "an XXL-JOB admin sees its own fields only";
  EXPECT_EQ(parse<CallbackBatch>(R"([{"logId":8,"handleCode":200,"output":null}])").callbacks[0].output, std::nullopt);
  EXPECT_THROW(parse<CallbackBatch>(R"([{"logId":8,"handleCode":200,"output":{"rows":3}}])"), ProtocolError);
}

TEST(Messages, ParsesRegistryBodyAsJavaExecutorSendsIt) {
  auto param = parse<RegistryParam>(
      R"({"registryGroup":"EXECUTOR","registryKey":"xxl-job-executor-sample","registryValue":"http://172.17.0.3:9999/"})");
  EXPECT_EQ(param.registry_group, kRegistryGroupExecutor);
  EXPECT_EQ(param.registry_key, "xxl-job-executor-sample");
  EXPECT_EQ(param.registry_value, "http://172.17.0.3:9999/");
}

TEST(Messages, ParsesLogBodyAsJavaAdminSendsIt) {
  auto param = parse<LogParam>(R"({"logDateTim":1700647200012,"logId":1187,"fromLineNum":1})");
  EXPECT_EQ(param, (LogParam{1700647200012, 1187, 1}));
}

TEST(Messages, ParsesIdleBeatAndKillBodies) {
  EXPECT_EQ(parse<IdleBeatParam>(R"({"jobId":12})").job_id, 12);
  EXPECT_EQ(parse<KillParam>(R"({"jobId":13})").job_id, 13);
}

// ---- Tolerated variants ---------------------------------------------------------------------

TEST(Messages, LogParamAcceptsLogDateTimeSpelling) {
  EXPECT_EQ(parse<LogParam>(R"({"logDateTime":5,"logId":6,"fromLineNum":7})"),
            (LogParam{5, 6, 7}));
}

TEST(Messages, CallbackAcceptsLogDateTimeSpelling) {
  auto batch = parse<CallbackBatch>(R"([{"logId":1,"logDateTime":5,"handleCode":200}])");
  ASSERT_EQ(batch.callbacks.size(), 1u);
  EXPECT_EQ(batch.callbacks[0].log_date_time, 5);
}

TEST(Messages, TriggerParamAcceptsLogDateTimSpelling) {
  EXPECT_EQ(parse<TriggerParam>(R"({"jobId":1,"logDateTim":5})").log_date_time, 5);
}

TEST(Messages, CallbackBatchAcceptsCallbackListWrapper) {
  auto bare = parse<CallbackBatch>(R"([{"logId":1,"logDateTim":2,"handleCode":200}])");
  auto wrapped = parse<CallbackBatch>(
      R"({"callbackList":[{"logId":1,"logDateTim":2,"handleCode":200}],"other":true})");
  EXPECT_EQ(bare, wrapped);
  EXPECT_TRUE(parse<CallbackBatch>(R"({"callbackList":null})").callbacks.empty());
  EXPECT_TRUE(parse<CallbackBatch>("[]").callbacks.empty());
}

TEST(Messages, LogResultRunStateIsOptionalBothWays) {
  // An XXL-JOB executor's answer has neither field: both stay unset.
  auto java = parse<LogResult>(R"({"fromLineNum":1,"toLineNum":0,"logContent":"x","isEnd":true})");
  EXPECT_EQ(java.run_state, "");
  EXPECT_EQ(java.executor_start_time, 0);
  // Unset fields are not written, so the answer is XXL-JOB's exactly.
  EXPECT_EQ(json::parse(to_json_string(LogResult{1, 0, "x", true})),
            json::parse(R"({"fromLineNum":1,"toLineNum":0,"logContent":"x","isEnd":true})"));
  LogResult told{1, 0, "", true, std::string(kRunStateUnknown), 1700000000123};
  EXPECT_EQ(json::parse(to_json_string(told))["runState"], "unknown");
  EXPECT_EQ(json::parse(to_json_string(told))["executorStartTime"], 1700000000123);
  expect_round_trip(told);
}

TEST(Messages, LogResultAcceptsJacksonEndSpelling) {
  EXPECT_TRUE(parse<LogResult>(R"({"fromLineNum":1,"toLineNum":2,"logContent":"x","end":true})")
                  .is_end);
}

TEST(Messages, MissingAndNullFieldsTakeDefaultsAndUnknownFieldsAreIgnored) {
  auto param = parse<TriggerParam>(
      R"({"jobId":3,"executorParams":null,"glueSource":null,"logAddress":["a"],"future":{}})");
  EXPECT_EQ(param.job_id, 3);
  EXPECT_EQ(param.executor_params, "");
  EXPECT_EQ(param.glue_source, "");
  EXPECT_EQ(param.log_id, 0);
  EXPECT_EQ(parse<TriggerParam>("{}"), TriggerParam{});
}

// ---- Errors ---------------------------------------------------------------------------------

TEST(Messages, WrongTypeNamesTheField) {
  EXPECT_EQ(protocol_error_of([] { parse<TriggerParam>(R"({"jobId":"2"})"); }),
            "jobId: expected an integer, got string");
  EXPECT_EQ(protocol_error_of([] { parse<TriggerParam>(R"({"jobId":2,"executorHandler":5})"); }),
            "executorHandler: expected a string, got number");
  EXPECT_EQ(protocol_error_of([] { parse<TriggerParam>(R"({"executorTimeout":1.5})"); }),
            "executorTimeout: expected an integer, got number 1.5");
  EXPECT_EQ(protocol_error_of([] { parse<TriggerParam>(R"({"jobId":4294967296})"); }),
            "jobId: out of range for a 32-bit integer: 4294967296");
  EXPECT_EQ(protocol_error_of([] { parse<LogResult>(R"({"isEnd":"yes"})"); }),
            "isEnd: expected a boolean, got string");
  EXPECT_EQ(protocol_error_of([] { parse<RegistryParam>(R"({"registryKey":["a"]})"); }),
            "registryKey: expected a string, got array");
}

TEST(Messages, NonObjectBodyIsAnError) {
  EXPECT_EQ(protocol_error_of([] { parse<KillParam>("[1]"); }), "expected a JSON object, got array");
  EXPECT_EQ(protocol_error_of([] { parse<KillParam>("null"); }), "expected a JSON object, got null");
  EXPECT_EQ(protocol_error_of([] { parse<IdleBeatParam>("12"); }), "expected a JSON object, got number");
}

TEST(Messages, MalformedBodyIsAnError) {
  auto message = protocol_error_of([] { parse<TriggerParam>(R"({"jobId":1)"); });
  EXPECT_EQ(message.rfind("malformed JSON: ", 0), 0u) << message;
  EXPECT_EQ(protocol_error_of([] { parse<IdleBeatParam>(""); }), "empty body, expected JSON");
}

TEST(Messages, CallbackErrorsNameTheElement) {
  EXPECT_EQ(protocol_error_of([] {
              parse<CallbackBatch>(R"([{"logId":1},{"logId":"2"}])");
            }),
            "[1].logId: expected an integer, got string");
  EXPECT_EQ(protocol_error_of([] {
              parse<CallbackBatch>(R"({"callbackList":[{"logId":1,"handleCode":true}]})");
            }),
            "callbackList[0].handleCode: expected an integer, got boolean");
  EXPECT_EQ(protocol_error_of([] { parse<CallbackBatch>(R"([1])"); }),
            "[0]: expected a JSON object, got number");
  EXPECT_EQ(protocol_error_of([] { parse<CallbackBatch>(R"({"callbackList":"x"})"); }),
            "callbackList: expected a JSON array of callbacks, got string");
  EXPECT_EQ(protocol_error_of([] { parse<CallbackBatch>(R"({"logId":1})"); }),
            "expected a JSON array of callbacks or {\"callbackList\":[...]}");
  EXPECT_EQ(protocol_error_of([] { parse<CallbackBatch>("null"); }),
            "expected a JSON array of callbacks, got null");
}

// ---- Serialization --------------------------------------------------------------------------

TEST(Messages, TriggerParamSerializesWithXxlJobFieldNames) {
  TriggerParam param;
  param.job_id = 2;
  param.executor_handler = "demoJobHandler";
  param.executor_params = "p";
  param.executor_block_strategy = std::string(to_string(BlockStrategy::kDiscardLater));
  param.executor_timeout = 10;
  param.log_id = 1187;
  param.log_date_time = 1700647200012;
  param.glue_type = std::string(to_string(GlueType::kGlueShell));
  param.glue_source = "echo hi";
  param.glue_updatetime = 1541254891000;
  param.broadcast_index = 1;
  param.broadcast_total = 2;
  EXPECT_EQ(json::parse(to_json_string(param)), json::parse(R"({
      "jobId":2,"executorHandler":"demoJobHandler","executorParams":"p",
      "executorBlockStrategy":"DISCARD_LATER","executorTimeout":10,"logId":1187,
      "logDateTime":1700647200012,"glueType":"GLUE_SHELL","glueSource":"echo hi",
      "glueUpdatetime":1541254891000,"broadcastIndex":1,"broadcastTotal":2})"));
  expect_round_trip(param);
}

TEST(Messages, CallbackBatchSerializesAsBareArrayWithLogDateTim) {
  CallbackBatch batch{{{1, 2, kSuccessCode, "", std::nullopt}, {3, 4, kTimeoutCode, "timeout", std::nullopt}}};
  EXPECT_EQ(json::parse(to_json_string(batch)), json::parse(R"([
      {"logId":1,"logDateTim":2,"handleCode":200,"handleMsg":""},
      {"logId":3,"logDateTim":4,"handleCode":502,"handleMsg":"timeout"}])"));
  expect_round_trip(batch);
  expect_round_trip(CallbackBatch{});
}

TEST(Messages, LogParamSerializesWithLogDateTim) {
  LogParam param{1700647200012, 1187, 5};
  EXPECT_EQ(json::parse(to_json_string(param)),
            json::parse(R"({"logDateTim":1700647200012,"logId":1187,"fromLineNum":5})"));
  expect_round_trip(param);
}

TEST(Messages, LogResultSerializesIsEnd) {
  LogResult result{1, 3, "line1\nline2\nline3\n", true};
  EXPECT_EQ(json::parse(to_json_string(result)), json::parse(R"(
      {"fromLineNum":1,"toLineNum":3,"logContent":"line1\nline2\nline3\n","isEnd":true})"));
  expect_round_trip(result);
}

TEST(Messages, SmallMessagesRoundTrip) {
  expect_round_trip(IdleBeatParam{42});
  expect_round_trip(KillParam{43});
  expect_round_trip(RegistryParam{"EXECUTOR", "app", "http://10.0.0.1:9999/"});
  EXPECT_EQ(json::parse(to_json_string(RegistryParam{"EXECUTOR", "app", "http://h:1/"})),
            json::parse(
                R"({"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://h:1/"})"));
  EXPECT_EQ(json::parse(to_json_string(KillParam{43})), json::parse(R"({"jobId":43})"));
}

TEST(Messages, ARegistrationCarriesItsHandlersOnlyWhenThereAreSome) {
  RegistryParam with{"EXECUTOR", "app", "http://h:1/", {"echo", "reportHandler"}};
  expect_round_trip(with);
  EXPECT_EQ(json::parse(to_json_string(with))["handlers"], (json{"echo", "reportHandler"}));
  // XXL-JOB's executors send none: read as none.
  EXPECT_TRUE(parse<RegistryParam>(R"({"registryGroup":"EXECUTOR","registryKey":"a","registryValue":"http://h:1/"})")
                  .handlers.empty());
  EXPECT_EQ(protocol_error_of([] { parse<RegistryParam>(R"({"registryKey":"a","handlers":"echo"})"); }),
            "handlers: expected an array of strings");
  EXPECT_EQ(protocol_error_of([] { parse<RegistryParam>(R"({"registryKey":"a","handlers":["echo",7]})"); }),
            "handlers[1]: expected a string");
  json many = json::array();
  for (int i = 0; i < 257; ++i) many.push_back("h" + std::to_string(i));
  const std::string body = json{{"registryKey", "a"}, {"handlers", many}}.dump();
  EXPECT_EQ(protocol_error_of([&] { parse<RegistryParam>(body); }), "handlers: at most 256 names");
}

TEST(Messages, ARegistrationCarriesItsClockEstimateOnlyOnceThereIsOne) {
  RegistryParam with{"EXECUTOR", "app", "http://h:1/"};
  with.clock_offset_ms = -1234;
  with.clock_delay_ms = 7;
  expect_round_trip(with);
  const auto written = json::parse(to_json_string(with));
  EXPECT_EQ(written["clockOffsetMs"], -1234);
  EXPECT_EQ(written["clockDelayMs"], 7);
  // Before the first measured exchange, and from XXL-JOB's executors: absent, read as absent.
  const auto without = json::parse(to_json_string(RegistryParam{"EXECUTOR", "app", "http://h:1/"}));
  EXPECT_FALSE(without.contains("clockOffsetMs"));
  EXPECT_FALSE(without.contains("clockDelayMs"));
  const auto read = parse<RegistryParam>(R"({"registryGroup":"EXECUTOR","registryKey":"a","registryValue":"http://h:1/"})");
  EXPECT_FALSE(read.clock_offset_ms.has_value());
  EXPECT_FALSE(read.clock_delay_ms.has_value());
  EXPECT_FALSE(parse<RegistryParam>(R"({"registryKey":"a","clockOffsetMs":null})").clock_offset_ms.has_value());
}

TEST(Messages, AClockEstimateBeyondADayIsRefusedNamingTheField) {
  const auto day = kMaxClockOffsetMs;
  EXPECT_EQ(parse<RegistryParam>(json{{"clockOffsetMs", -day}, {"clockDelayMs", day}}.dump()).clock_offset_ms, -day);
  EXPECT_EQ(parse<RegistryParam>(json{{"clockOffsetMs", day}, {"clockDelayMs", 0}}.dump()).clock_delay_ms, 0);
  EXPECT_EQ(protocol_error_of([&] { parse<RegistryParam>(json{{"clockOffsetMs", day + 1}}.dump()); }),
            "clockOffsetMs: must be between -86400000 and 86400000 (a day, in ms)");
  EXPECT_EQ(protocol_error_of([&] { parse<RegistryParam>(json{{"clockOffsetMs", -day - 1}}.dump()); }),
            "clockOffsetMs: must be between -86400000 and 86400000 (a day, in ms)");
  EXPECT_EQ(protocol_error_of([] { parse<RegistryParam>(R"({"clockOffsetMs":9223372036854775807})"); }),
            "clockOffsetMs: must be between -86400000 and 86400000 (a day, in ms)");
  EXPECT_EQ(protocol_error_of([] { parse<RegistryParam>(R"({"clockDelayMs":-1})"); }),
            "clockDelayMs: must be between 0 and 86400000 (a day, in ms)");
  EXPECT_EQ(protocol_error_of([&] { parse<RegistryParam>(json{{"clockDelayMs", day + 1}}.dump()); }),
            "clockDelayMs: must be between 0 and 86400000 (a day, in ms)");
  EXPECT_FALSE(protocol_error_of([] { parse<RegistryParam>(R"({"clockDelayMs":"soon"})"); }).empty());
}

TEST(Messages, ARegistrationSaysItTakesLeadDispatchOnlyWhenItDoes) {
  RegistryParam param{"EXECUTOR", "app", "http://h:1/"};
  EXPECT_FALSE(json::parse(to_json_string(param)).contains("leadDispatch"));
  param.lead_dispatch = true;
  EXPECT_EQ(json::parse(to_json_string(param))["leadDispatch"], true);
  EXPECT_EQ(parse<RegistryParam>(to_json_string(param)), param);
  EXPECT_FALSE(parse<RegistryParam>(R"({"registryKey":"a"})").lead_dispatch);
  EXPECT_EQ(protocol_error_of([] { parse<RegistryParam>(R"({"leadDispatch":"yes"})"); }).substr(0, 13),
            "leadDispatch:");
}

TEST(Messages, LeadMessagesRoundTripWithTheirWireNames) {
  LeadRequest request;
  request.admin_time = 1'700'000'000'123;
  TriggerParam trigger;
  trigger.job_id = 7;
  trigger.log_id = 99;
  trigger.executor_handler = "echo";
  request.fires.push_back({1'700'000'001'000, trigger});
  const auto written = json::parse(to_json_string(request));
  EXPECT_EQ(written["adminTime"], 1'700'000'000'123);
  EXPECT_EQ(written["fires"][0]["fireAt"], 1'700'000'001'000);
  EXPECT_EQ(written["fires"][0]["trigger"]["logId"], 99);
  EXPECT_EQ(parse<LeadRequest>(to_json_string(request)), request);

  const LeadAnswer answer{{99, 100}, {{101, "no handler \"x\""}}};
  EXPECT_EQ(json::parse(to_json_string(answer))["refused"][0]["msg"], "no handler \"x\"");
  EXPECT_EQ(parse<LeadAnswer>(to_json_string(answer)), answer);
  const LeadCancelParam cancel{{1, 2}, "job stopped"};
  EXPECT_EQ(json::parse(to_json_string(cancel))["logIds"], json::array({1, 2}));
  EXPECT_EQ(parse<LeadCancelParam>(to_json_string(cancel)), cancel);
  const LeadCancelAnswer cancelled{{1}, {2}, {3}};
  EXPECT_EQ(parse<LeadCancelAnswer>(to_json_string(cancelled)), cancelled);

  HandleCallbackParam callback{5, 6, 500, "not started: executor restarted"};
  EXPECT_FALSE(json::parse(to_json_string(callback)).contains("notStarted"));
  callback.not_started = "executor restarted";
  EXPECT_EQ(json::parse(to_json_string(callback))["notStarted"], "executor restarted");
  EXPECT_EQ(parse<HandleCallbackParam>(to_json_string(callback)), callback);
}

TEST(Messages, LeadMessagesAreBoundedAndTheirErrorsNameTheElement) {
  json fires = json::array();
  for (std::size_t i = 0; i <= kMaxLeadFires; ++i) fires.push_back({{"fireAt", 1}, {"trigger", json::object()}});
  EXPECT_EQ(protocol_error_of([&] { parse<LeadRequest>(json{{"fires", fires}}.dump()); }), "fires: at most 1000 entries");
  fires.erase(fires.begin() + 1, fires.end());
  EXPECT_EQ(parse<LeadRequest>(json{{"fires", fires}}.dump()).fires.size(), 1U);
  EXPECT_EQ(protocol_error_of([] { parse<LeadRequest>(R"({"fires":[{"fireAt":1}]})"); }), "fires[0].trigger: required");
  EXPECT_EQ(protocol_error_of([] { parse<LeadRequest>(R"({"fires":[{"fireAt":1,"trigger":{"logId":"x"}}]})"); })
                .substr(0, 23),
            "fires[0].trigger.logId:");
  EXPECT_EQ(protocol_error_of([] { parse<LeadRequest>(R"({"fires":{}})"); }), "fires: expected an array");
  EXPECT_EQ(protocol_error_of([] { parse<LeadCancelParam>(R"({"logIds":[1,"2"]})"); }),
            "logIds[1]: expected an integer log id");
  json ids = json::array();
  for (std::size_t i = 0; i <= kMaxLeadFires; ++i) ids.push_back(i);
  EXPECT_EQ(protocol_error_of([&] { parse<LeadCancelParam>(json{{"logIds", ids}}.dump()); }),
            "logIds: at most 1000 entries");
}

TEST(Messages, ExtremeValuesRoundTrip) {
  TriggerParam param;
  param.job_id = 2147483647;
  param.log_id = 9223372036854775807LL;
  param.log_date_time = -1;
  param.executor_params = "unicode \xE2\x9C\x93 \"quotes\" \\ and \x01 control";
  expect_round_trip(param);
}

}  // namespace
}  // namespace cronwheel
