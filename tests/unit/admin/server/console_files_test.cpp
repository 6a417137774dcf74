#include "admin/server/console_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace cronwheel::admin {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

httplib::Request get(std::string path, std::string accept_encoding = "") {
  httplib::Request req;
  req.method = "GET";
  req.path = std::move(path);
  if (!accept_encoding.empty()) req.set_header("Accept-Encoding", accept_encoding);
  return req;
}

class ConsoleFilesTest : public ::testing::Test {
 protected:
  ConsoleFilesTest() {
    write(dir_.path() / "index.html", "<!doctype html><title>cronwheel</title>");
    write(dir_.path() / "favicon.svg", "<svg/>");
    write(dir_.path() / "assets" / "index-3f2a1b.js", "console.log(1)");
    write(dir_.path() / "assets" / "index-3f2a1b.js.gz", "GZIPPED");
    write(dir_.path() / "assets" / "style-9c9c9c.css", "body{}");
  }

  httplib::Response serve(const httplib::Request& req) const {
    httplib::Response res;
    files_.serve(req, res);
    return res;
  }

  cronwheel::testing::TempDir dir_{"cronwheel-console"};
  ConsoleFiles files_{dir_.path()};
};

TEST_F(ConsoleFilesTest, RootAndClientRoutesAnswerIndexHtmlRevalidated) {
  for (const char* path : {"/", "/jobs", "/jobs/42", "/runs/7/", "/groups/new"}) {
    auto res = serve(get(path));
    EXPECT_EQ(res.status, 200) << path;
    EXPECT_EQ(res.body, "<!doctype html><title>cronwheel</title>") << path;
    EXPECT_EQ(res.get_header_value("Content-Type"), "text/html; charset=utf-8") << path;
    EXPECT_EQ(res.get_header_value("Cache-Control"), "no-cache") << path;
    EXPECT_NE(res.get_header_value("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
    EXPECT_EQ(res.get_header_value("X-Content-Type-Options"), "nosniff");
  }
}

TEST_F(ConsoleFilesTest, HashedAssetsAreImmutableWithTheirContentType) {
  auto js = serve(get("/assets/index-3f2a1b.js"));
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.body, "console.log(1)");
  EXPECT_EQ(js.get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js.get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_FALSE(js.has_header("Content-Encoding"));
  EXPECT_FALSE(js.has_header("Content-Security-Policy"));

  auto css = serve(get("/assets/style-9c9c9c.css"));
  EXPECT_EQ(css.get_header_value("Content-Type"), "text/css; charset=utf-8");

  // Files outside assets/ have stable names: revalidated.
  auto icon = serve(get("/favicon.svg"));
  EXPECT_EQ(icon.status, 200);
  EXPECT_EQ(icon.get_header_value("Content-Type"), "image/svg+xml");
  EXPECT_EQ(icon.get_header_value("Cache-Control"), "no-cache");
}

TEST_F(ConsoleFilesTest, PrecompressedFileIsSentWhenTheClientAcceptsGzip) {
  for (const char* accepted : {"gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8", " x-gzip"}) {
    auto res = serve(get("/assets/index-3f2a1b.js", accepted));
    EXPECT_EQ(res.body, "GZIPPED") << accepted;
    EXPECT_EQ(res.get_header_value("Content-Encoding"), "gzip") << accepted;
    EXPECT_EQ(res.get_header_value("Content-Type"), "text/javascript; charset=utf-8") << accepted;
    EXPECT_EQ(res.get_header_value("Vary"), "Accept-Encoding");
  }
  for (const char* refused : {"", "br", "gzip;q=0", "gzip; q=0.000", "deflate, gzipx"}) {
    auto res = serve(get("/assets/index-3f2a1b.js", refused));
    EXPECT_EQ(res.body, "console.log(1)") << refused;
    EXPECT_FALSE(res.has_header("Content-Encoding")) << refused;
  }
  // Without a .gz beside it, the file itself.
  auto css = serve(get("/assets/style-9c9c9c.css", "gzip"));
  EXPECT_EQ(css.body, "body{}");
  EXPECT_FALSE(css.has_header("Content-Encoding"));
}

TEST_F(ConsoleFilesTest, MissingFilesWithAnExtensionAreNotFoundRatherThanIndexHtml) {
  for (const char* path : {"/assets/gone-000000.js", "/robots.txt", "/jobs/report.csv"}) {
    auto res = serve(get(path));
    EXPECT_EQ(res.status, 404) << path;
    EXPECT_EQ(res.body, "") << path;
  }
}

TEST_F(ConsoleFilesTest, PathsLeavingTheDirectoryAreNotFound) {
  write(dir_.path().parent_path() / (dir_.path().filename().string() + "-secret.txt"), "secret");
  const std::string sibling = "/../" + dir_.path().filename().string() + "-secret.txt";
  for (const std::string& path : {sibling, std::string("/assets/../../etc/passwd"), std::string("/./index.html"),
                                   std::string("/assets//index-3f2a1b.js"), std::string("/assets\\..\\x"),
                                   std::string("/a\0b", 4), std::string("relative")}) {
    auto res = serve(get(path));
    EXPECT_EQ(res.status, 404) << path;
    EXPECT_EQ(res.body, "") << path;
  }
  fs::remove(dir_.path().parent_path() / (dir_.path().filename().string() + "-secret.txt"));
}

TEST_F(ConsoleFilesTest, DirectoriesAndOversizedFilesAreNotServed) {
  // A directory's name has no extension: it is a client route, answered index.html.
  auto directory = serve(get("/assets"));
  EXPECT_EQ(directory.body, "<!doctype html><title>cronwheel</title>");
  write(dir_.path() / "big.bin", std::string(100, 'x'));
  ConsoleFiles small(dir_.path(), 64);
  httplib::Response res;
  small.serve(get("/big.bin"), res);
  EXPECT_EQ(res.status, 404);
  EXPECT_EQ(res.body, "");
}

TEST_F(ConsoleFilesTest, MatchingEtagAnswers304WithoutABody) {
  auto first = serve(get("/assets/index-3f2a1b.js"));
  const std::string etag = first.get_header_value("ETag");
  ASSERT_FALSE(etag.empty());
  auto req = get("/assets/index-3f2a1b.js");
  req.set_header("If-None-Match", "\"other\", " + etag);
  auto again = serve(req);
  EXPECT_EQ(again.status, 304);
  EXPECT_EQ(again.body, "");
  // The compressed copy is another representation, with another tag.
  auto gz = serve(get("/assets/index-3f2a1b.js", "gzip"));
  EXPECT_NE(gz.get_header_value("ETag"), etag);
}

TEST_F(ConsoleFilesTest, WithoutIndexHtmlNothingIsServedButFiles) {
  fs::remove(dir_.path() / "index.html");
  EXPECT_FALSE(files_.installed());
  EXPECT_EQ(serve(get("/")).status, 404);
  EXPECT_EQ(serve(get("/jobs")).status, 404);
  EXPECT_EQ(serve(get("/favicon.svg")).status, 200);
}

TEST(ConsoleFiles, LeavesTheApiHealthAndMetricsToTheirRoutes) {
  for (const char* path : {"/api", "/api/", "/api/v1/nothing", "/api/registry", "/healthz", "/healthz/x", "/metrics"}) {
    EXPECT_FALSE(ConsoleFiles::owns(path)) << path;
  }
  for (const char* path : {"/", "/jobs", "/apis", "/metrics-dashboard", "/assets/app.js"}) {
    EXPECT_TRUE(ConsoleFiles::owns(path)) << path;
  }
}

}  // namespace
}  // namespace cronwheel::admin
