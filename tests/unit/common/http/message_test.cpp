#include "common/http/message.h"

#include <gtest/gtest.h>

namespace {

using cronwheel::common::http::Request;
using cronwheel::common::http::Response;

TEST(HttpMessage, HeaderNamesMatchInAnyCase) {
  Request req;
  req.set_header("X-Forwarded-For", "10.0.0.1");
  req.set_header("x-forwarded-for", "10.0.0.2");
  EXPECT_TRUE(req.has_header("X-FORWARDED-FOR"));
  EXPECT_EQ(req.get_header_value_count("x-Forwarded-for"), 2u);
  EXPECT_EQ(req.get_header_value("X-Forwarded-For", 0), "10.0.0.1");
  EXPECT_EQ(req.get_header_value("X-Forwarded-For", 1), "10.0.0.2");
  EXPECT_EQ(req.get_header_value("X-Forwarded-For", 2), "");
  EXPECT_FALSE(req.has_header("X-Forwarded"));
}

TEST(HttpMessage, QueryParametersKeepTheirOrderAndRepeats) {
  Request req;
  req.params.emplace("jobId", "7");
  req.params.emplace("state", "failed");
  req.params.emplace("jobId", "8");
  EXPECT_TRUE(req.has_param("state"));
  EXPECT_FALSE(req.has_param("State"));  // parameter names are exact, unlike header names
  EXPECT_EQ(req.get_param_value("jobId"), "7");
  EXPECT_EQ(req.get_param_value("jobId", 1), "8");
  EXPECT_EQ(req.get_param_value("jobId", 2), "");
  EXPECT_EQ(req.get_param_value("nope"), "");
}

TEST(HttpMessage, AnAnswerCanCarryAHeaderTwiceButNoLineBreakInOne) {
  Response res;
  res.set_header("Set-Cookie", "a=1");
  res.set_header("Set-Cookie", "b=2");
  EXPECT_EQ(res.get_header_value_count("set-cookie"), 2u);
  res.set_header("Location", "/x\r\nSet-Cookie: evil=1");
  res.set_header("X-Name", std::string("a\0b", 3));
  res.set_header("Bad\nName", "v");
  EXPECT_FALSE(res.has_header("Location"));
  EXPECT_FALSE(res.has_header("X-Name"));
  EXPECT_EQ(res.headers.size(), 2u);
}

TEST(HttpMessage, SetContentReplacesTheContentType) {
  Response res;
  EXPECT_EQ(res.status, 200);
  res.set_content("<p>", "text/html");
  res.set_content("{}", "application/json");
  EXPECT_EQ(res.body, "{}");
  EXPECT_EQ(res.get_header_value_count("Content-Type"), 1u);
  EXPECT_EQ(res.get_header_value("content-type"), "application/json");
}

}  // namespace
