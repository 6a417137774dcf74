#include "admin/server/console_files.h"

#include <brotli/encode.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>

#include "common/http/http_error.h"
#include "common/http/http_server.h"
#include "tests/support/fake_clock.h"
#include "tests/support/temp_dir.h"

namespace cronwheel::admin {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

void write(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// Bytes shaped like a gzip copy of a `plain_size`-byte file (gzip's header, `deflated`, a
// trailer giving plain_size): what ConsoleFiles checks of a FILE.gz, which it never inflates.
std::string gzip_shaped(std::size_t plain_size, const std::string& deflated = "DEFLATED") {
  std::string out("\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff", 10);
  out += deflated;
  out += std::string(4, '\0');  // CRC-32, not checked
  for (int i = 0; i < 4; ++i) out += static_cast<char>((plain_size >> (8 * i)) & 0xff);
  return out;
}

// A real brotli copy of `plain` (ConsoleFiles decompresses a FILE.br to check it).
std::string brotli_of(const std::string& plain) {
  std::string out(BrotliEncoderMaxCompressedSize(plain.size()), '\0');
  std::size_t size = out.size();
  EXPECT_TRUE(BrotliEncoderCompress(BROTLI_MAX_QUALITY, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, plain.size(),
                                    reinterpret_cast<const std::uint8_t*>(plain.data()), &size,
                                    reinterpret_cast<std::uint8_t*>(out.data())));
  out.resize(size);
  return out;
}

cronwheel::common::http::Request get(std::string path, std::string accept_encoding = "") {
  cronwheel::common::http::Request req;
  req.method = "GET";
  req.path = std::move(path);
  if (!accept_encoding.empty()) req.set_header("Accept-Encoding", accept_encoding);
  return req;
}

// The bytes an answer sends.
std::string body_of(const cronwheel::common::http::Response& res) { return res.body; }

const std::string kIndexHtml = "<!doctype html><title>cronwheel</title>";
const std::string kAppJs = "console.log('the console'); /* padding so that a copy can be smaller */";

class ConsoleFilesTest : public ::testing::Test {
 protected:
  ConsoleFilesTest() {
    write(dir_.path() / "index.html", kIndexHtml);
    write(dir_.path() / "favicon.svg", "<svg/>");
    write(dir_.path() / "assets" / "index-3f2a1b.js", kAppJs);
    write(dir_.path() / "assets" / "index-3f2a1b.js.gz", gzip_shaped(kAppJs.size()));
    write(dir_.path() / "assets" / "style-9c9c9c.css", "body{}");
  }

  ConsoleFiles& files() {
    if (!files_) files_ = std::make_unique<ConsoleFiles>(dir_.path(), limits_, clock_);
    return *files_;
  }

  cronwheel::common::http::Response serve(const cronwheel::common::http::Request& req) {
    cronwheel::common::http::Response res;
    files().serve(req, res);
    return res;
  }

  cronwheel::testing::TempDir dir_{"cronwheel-console"};
  cronwheel::testing::FakeClock clock_;
  ConsoleFiles::Limits limits_;
  std::unique_ptr<ConsoleFiles> files_;
};

TEST_F(ConsoleFilesTest, RootAndClientRoutesAnswerIndexHtmlRevalidated) {
  for (const char* path : {"/", "/jobs", "/jobs/42", "/runs/7/", "/groups/new"}) {
    auto res = serve(get(path));
    EXPECT_EQ(res.status, 200) << path;
    EXPECT_EQ(body_of(res), kIndexHtml) << path;
    EXPECT_EQ(res.get_header_value("Content-Type"), "text/html; charset=utf-8") << path;
    EXPECT_EQ(res.get_header_value("Cache-Control"), "no-cache") << path;
    EXPECT_NE(res.get_header_value("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
    EXPECT_EQ(res.get_header_value("X-Content-Type-Options"), "nosniff");
  }
}

TEST_F(ConsoleFilesTest, HashedAssetsAreImmutableWithTheirContentType) {
  auto js = serve(get("/assets/index-3f2a1b.js"));
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(body_of(js), kAppJs);
  EXPECT_EQ(js.get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js.get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(js.get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_FALSE(js.has_header("Content-Encoding"));
  EXPECT_FALSE(js.has_header("Content-Security-Policy"));

  auto css = serve(get("/assets/style-9c9c9c.css"));
  EXPECT_EQ(css.get_header_value("Content-Type"), "text/css; charset=utf-8");
  EXPECT_EQ(css.get_header_value("X-Content-Type-Options"), "nosniff");

  // Files outside assets/ have stable names: revalidated.
  auto icon = serve(get("/favicon.svg"));
  EXPECT_EQ(icon.status, 200);
  EXPECT_EQ(icon.get_header_value("Content-Type"), "image/svg+xml");
  EXPECT_EQ(icon.get_header_value("Cache-Control"), "no-cache");
  EXPECT_EQ(icon.get_header_value("X-Content-Type-Options"), "nosniff");

  // Said once when the server says it on every answer.
  cronwheel::common::http::Response preset;
  preset.set_header("X-Content-Type-Options", "nosniff");
  files().serve(get("/favicon.svg"), preset);
  EXPECT_EQ(preset.get_header_value_count("X-Content-Type-Options"), 1u);
}

TEST_F(ConsoleFilesTest, GzipCopyIsSentOnlyToClientsThatAcceptGzip) {
  const std::string copy = gzip_shaped(kAppJs.size());
  for (const char* accepted : {"gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8", " x-gzip"}) {
    auto res = serve(get("/assets/index-3f2a1b.js", accepted));
    EXPECT_EQ(body_of(res), copy) << accepted;
    EXPECT_EQ(res.get_header_value("Content-Encoding"), "gzip") << accepted;
    EXPECT_EQ(res.get_header_value("Content-Type"), "text/javascript; charset=utf-8") << accepted;
    EXPECT_EQ(res.get_header_value("Vary"), "Accept-Encoding");
  }
  for (const char* refused : {"", "br", "gzip;q=0", "gzip; q=0.000", "deflate, gzipx"}) {
    auto res = serve(get("/assets/index-3f2a1b.js", refused));
    EXPECT_EQ(body_of(res), kAppJs) << refused;
    EXPECT_FALSE(res.has_header("Content-Encoding")) << refused;
    EXPECT_EQ(res.get_header_value("Vary"), "Accept-Encoding");
  }
  // Without a .gz beside it, the file itself.
  auto css = serve(get("/assets/style-9c9c9c.css", "gzip"));
  EXPECT_EQ(body_of(css), "body{}");
  EXPECT_FALSE(css.has_header("Content-Encoding"));
  // The copy is not a file of its own.
  EXPECT_EQ(serve(get("/assets/index-3f2a1b.js.gz", "gzip")).status, 404);
}

TEST_F(ConsoleFilesTest, AGzipFileThatIsNotACopyOfItsFileIsNeverSent) {
  const std::string padding(200, 'x');
  write(dir_.path() / "assets" / "stale-aaaaaa.js", padding);
  write(dir_.path() / "assets" / "stale-aaaaaa.js.gz", gzip_shaped(padding.size() - 1));  // another size
  write(dir_.path() / "assets" / "plain-bbbbbb.js", padding);
  write(dir_.path() / "assets" / "plain-bbbbbb.js.gz", "not gzip at all, not at all");
  write(dir_.path() / "assets" / "tiny-cccccc.js", "x");
  write(dir_.path() / "assets" / "tiny-cccccc.js.gz", gzip_shaped(1));  // larger than its file
  for (const char* path : {"/assets/stale-aaaaaa.js", "/assets/plain-bbbbbb.js", "/assets/tiny-cccccc.js"}) {
    auto res = serve(get(path, "gzip"));
    EXPECT_EQ(res.status, 200) << path;
    EXPECT_FALSE(res.has_header("Content-Encoding")) << path;
    EXPECT_EQ(serve(get(std::string(path) + ".gz", "gzip")).status, 404) << path;
  }
  // A .gz with no file beside it is a file like any other.
  write(dir_.path() / "logs.gz", gzip_shaped(10'000));
  files_.reset();
  auto archive = serve(get("/logs.gz", "gzip"));
  EXPECT_EQ(archive.status, 200);
  EXPECT_EQ(archive.get_header_value("Content-Type"), "application/gzip");
  EXPECT_FALSE(archive.has_header("Content-Encoding"));
}

TEST_F(ConsoleFilesTest, BrotliCopyGoesToClientsThatAcceptBrotliTheGzipCopyToThoseThatTakeOnlyGzip) {
  const std::string script = "const console = 'the console';\n" + std::string(400, ' ') + "export { console };\n";
  const std::string br = brotli_of(script);
  ASSERT_LT(br.size(), script.size());
  write(dir_.path() / "assets" / "app-dddddd.js", script);
  write(dir_.path() / "assets" / "app-dddddd.js.br", br);
  write(dir_.path() / "assets" / "app-dddddd.js.gz", gzip_shaped(script.size()));
  files_.reset();
  for (const char* accepted : {"br", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8"}) {
    auto res = serve(get("/assets/app-dddddd.js", accepted));
    EXPECT_EQ(body_of(res), br) << accepted;
    EXPECT_EQ(res.get_header_value("Content-Encoding"), "br") << accepted;
    EXPECT_EQ(res.get_header_value("Vary"), "Accept-Encoding");
  }
  for (const char* gzip_only : {"gzip", "gzip, br;q=0", "deflate, gzip, brx"}) {
    auto res = serve(get("/assets/app-dddddd.js", gzip_only));
    EXPECT_EQ(res.get_header_value("Content-Encoding"), "gzip") << gzip_only;
    EXPECT_EQ(body_of(res), gzip_shaped(script.size())) << gzip_only;
  }
  auto plain = serve(get("/assets/app-dddddd.js"));
  EXPECT_EQ(body_of(plain), script);
  // Each representation has a tag of its own.
  EXPECT_NE(serve(get("/assets/app-dddddd.js", "br")).get_header_value("ETag"),
            serve(get("/assets/app-dddddd.js", "gzip")).get_header_value("ETag"));
  EXPECT_NE(plain.get_header_value("ETag"), serve(get("/assets/app-dddddd.js", "br")).get_header_value("ETag"));
  // The copy is not a file of its own.
  EXPECT_EQ(serve(get("/assets/app-dddddd.js.br", "br")).status, 404);
}

TEST_F(ConsoleFilesTest, ABrotliFileThatIsNotACopyOfItsFileIsNeverSent) {
  const std::string script = "let x = 1;\n" + std::string(300, '/') + "\n";
  write(dir_.path() / "assets" / "stale-eeeeee.js", script);
  write(dir_.path() / "assets" / "stale-eeeeee.js.br", brotli_of(script + "// another build\n"));
  write(dir_.path() / "assets" / "junk-ffffff.js", script);
  write(dir_.path() / "assets" / "junk-ffffff.js.br", "not brotli, whatever it says");
  write(dir_.path() / "assets" / "short-111111.js", script);
  write(dir_.path() / "assets" / "short-111111.js.br", brotli_of(script.substr(0, 20)));  // a prefix of it
  files_.reset();
  for (const char* path : {"/assets/stale-eeeeee.js", "/assets/junk-ffffff.js", "/assets/short-111111.js"}) {
    auto res = serve(get(path, "br"));
    EXPECT_EQ(res.status, 200) << path;
    EXPECT_EQ(body_of(res), script) << path;
    EXPECT_FALSE(res.has_header("Content-Encoding")) << path;
    EXPECT_EQ(serve(get(std::string(path) + ".br", "br")).status, 404) << path;
  }
}

TEST_F(ConsoleFilesTest, MissingFilesWithAnExtensionAreNotFoundRatherThanIndexHtml) {
  for (const char* path : {"/assets/gone-000000.js", "/robots.txt", "/jobs/report.csv"}) {
    auto res = serve(get(path));
    EXPECT_EQ(res.status, 404) << path;
    EXPECT_EQ(body_of(res), "") << path;
  }
}

TEST_F(ConsoleFilesTest, PathsLeavingTheDirectoryAreNotFound) {
  write(dir_.path().parent_path() / (dir_.path().filename().string() + "-secret.txt"), "secret");
  const std::string sibling = "/../" + dir_.path().filename().string() + "-secret.txt";
  for (const std::string& path : {sibling, std::string("/assets/../../etc/passwd"), std::string("/./index.html"),
                                   std::string("/assets//index-3f2a1b.js"), std::string("/assets\\..\\x"),
                                   std::string("/a\0b", 4), std::string("relative"), std::string()}) {
    auto res = serve(get(path));
    EXPECT_EQ(res.status, 404) << path;
    EXPECT_EQ(body_of(res), "") << path;
  }
  fs::remove(dir_.path().parent_path() / (dir_.path().filename().string() + "-secret.txt"));
}

TEST_F(ConsoleFilesTest, DotfilesAndDotDirectoriesAreNeverServed) {
  write(dir_.path() / ".env", "DATABASE_PASSWORD=secret");
  write(dir_.path() / ".git" / "config", "[remote]");
  write(dir_.path() / ".git" / "HEAD", "ref: refs/heads/main");
  write(dir_.path() / "assets" / ".hidden-000000.js", "secret()");
  write(dir_.path() / ".well-known" / "security", "contact");
  // Neither the file, nor index.html under its name.
  for (const char* path : {"/.env", "/.git/config", "/.git/HEAD", "/.git", "/.git/", "/assets/.hidden-000000.js",
                           "/.well-known/security", "/.well-known/", "/assets/.", "/.htaccess"}) {
    auto res = serve(get(path));
    EXPECT_EQ(res.status, 404) << path;
    EXPECT_EQ(body_of(res), "") << path;
  }
  EXPECT_EQ(serve(get("/favicon.svg")).status, 200);
}

TEST_F(ConsoleFilesTest, SymbolicLinksAreNeitherFollowedNorServed) {
  cronwheel::testing::TempDir outside("cronwheel-outside");
  write(outside.path() / "secret.txt", "outside secret");
  write(outside.path() / "inner" / "secret.js", "outside script");
  fs::create_symlink(outside.path() / "secret.txt", dir_.path() / "secret.txt");
  fs::create_directory_symlink(outside.path() / "inner", dir_.path() / "assets" / "linked");
  fs::create_symlink(dir_.path() / "favicon.svg", dir_.path() / "icon.svg");  // even inside
  fs::create_symlink("/etc/passwd", dir_.path() / "passwd.txt");
  for (const char* path : {"/secret.txt", "/assets/linked/secret.js", "/icon.svg", "/passwd.txt"}) {
    auto res = serve(get(path));
    EXPECT_EQ(res.status, 404) << path;
    EXPECT_EQ(body_of(res), "") << path;
  }
  EXPECT_EQ(serve(get("/favicon.svg")).status, 200);
}

TEST_F(ConsoleFilesTest, TheDirectoryItselfMayBeALinkToABuild) {
  cronwheel::testing::TempDir releases("cronwheel-releases");
  const fs::path current = releases.path() / "current";
  fs::create_directory_symlink(dir_.path(), current);
  ConsoleFiles linked(current, {}, clock_);
  cronwheel::common::http::Response res;
  linked.serve(get("/assets/index-3f2a1b.js"), res);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(body_of(res), kAppJs);
}

TEST_F(ConsoleFilesTest, SpecialFilesAreNotServedAndNeverWaitedOn) {
  // Opening a FIFO for reading would wait for a writer: it must not even be opened.
  ASSERT_EQ(::mkfifo((dir_.path() / "pipe.js").c_str(), 0600), 0);
  auto res = serve(get("/pipe.js"));
  EXPECT_EQ(res.status, 404);
  EXPECT_EQ(serve(get("/")).status, 200);
}

TEST_F(ConsoleFilesTest, ADirectoryOverTheByteLimitIsRefusedWhole) {
  limits_.max_total_bytes = 64;
  write(dir_.path() / "big.bin", std::string(100, 'x'));
  EXPECT_FALSE(files().installed());
  for (const char* path : {"/", "/jobs", "/favicon.svg", "/big.bin"}) {
    EXPECT_EQ(serve(get(path)).status, 404) << path;
  }
}

TEST_F(ConsoleFilesTest, ADirectoryWithTooManyEntriesIsRefusedWhole) {
  limits_.max_entries = 4;
  for (int i = 0; i < 5; ++i) write(dir_.path() / ("extra" + std::to_string(i) + ".txt"), "x");
  EXPECT_FALSE(files().installed());
  EXPECT_EQ(serve(get("/")).status, 404);
}

TEST_F(ConsoleFilesTest, DirectoriesNestedTooDeepAreRefused) {
  fs::path deep = dir_.path() / "assets";
  for (int i = 0; i < 40; ++i) deep /= "d";
  write(deep / "x.js", "x");
  EXPECT_FALSE(files().installed());
}

TEST_F(ConsoleFilesTest, MatchingEtagAnswers304WithTheCachingHeadersAndNoBody) {
  auto first = serve(get("/assets/index-3f2a1b.js"));
  const std::string etag = first.get_header_value("ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(etag.front(), '"');  // strong
  for (const std::string& listed : {etag, "\"other\", " + etag, "W/" + etag, std::string("*")}) {
    auto req = get("/assets/index-3f2a1b.js");
    req.set_header("If-None-Match", listed);
    auto again = serve(req);
    EXPECT_EQ(again.status, 304) << listed;
    EXPECT_EQ(body_of(again), "") << listed;
    EXPECT_EQ(again.get_header_value("ETag"), etag);
    EXPECT_EQ(again.get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
    EXPECT_EQ(again.get_header_value("X-Content-Type-Options"), "nosniff");
  }
  auto req = get("/assets/index-3f2a1b.js");
  req.set_header("If-None-Match", "\"other\"");
  EXPECT_EQ(serve(req).status, 200);

  // The compressed copy is another representation, with another tag.
  auto gz = serve(get("/assets/index-3f2a1b.js", "gzip"));
  EXPECT_NE(gz.get_header_value("ETag"), etag);
  auto plain_tag_gzip_accepted = get("/assets/index-3f2a1b.js", "gzip");
  plain_tag_gzip_accepted.set_header("If-None-Match", etag);
  EXPECT_EQ(serve(plain_tag_gzip_accepted).status, 200);

  // index.html is revalidated: a matching tag saves its download.
  const std::string index_tag = serve(get("/jobs/3")).get_header_value("ETag");
  auto index_again = get("/");
  index_again.set_header("If-None-Match", index_tag);
  auto index = serve(index_again);
  EXPECT_EQ(index.status, 304);
  EXPECT_EQ(index.get_header_value("Cache-Control"), "no-cache");
}

TEST_F(ConsoleFilesTest, EtagsFollowTheBytesNotTheFiles) {
  // Two nodes serving one build agree on every tag; another content gets another tag.
  cronwheel::testing::TempDir other("cronwheel-console");
  fs::copy(dir_.path(), other.path(), fs::copy_options::recursive);
  write(other.path() / "favicon.svg", "<svg></svg>");
  ConsoleFiles copy(other.path(), {}, clock_);
  auto tag_of = [](const ConsoleFiles& files, const std::string& path) {
    cronwheel::common::http::Response res;
    files.serve(get(path), res);
    return res.get_header_value("ETag");
  };
  EXPECT_EQ(tag_of(files(), "/assets/index-3f2a1b.js"), tag_of(copy, "/assets/index-3f2a1b.js"));
  EXPECT_EQ(tag_of(files(), "/"), tag_of(copy, "/"));
  EXPECT_NE(tag_of(files(), "/favicon.svg"), tag_of(copy, "/favicon.svg"));
}

TEST_F(ConsoleFilesTest, WithoutIndexHtmlNothingIsServed) {
  fs::remove(dir_.path() / "index.html");
  EXPECT_FALSE(files().installed());
  for (const char* path : {"/", "/jobs", "/favicon.svg", "/assets/index-3f2a1b.js"}) {
    EXPECT_EQ(serve(get(path)).status, 404) << path;
  }
}

TEST_F(ConsoleFilesTest, ARebuiltConsoleIsServedFromTheFirstCheckAfterTheInterval) {
  EXPECT_EQ(body_of(serve(get("/"))), kIndexHtml);
  write(dir_.path() / "index.html", "<!doctype html><title>rebuilt</title><script src=/assets/new-111111.js>");
  write(dir_.path() / "assets" / "new-111111.js", "new()");
  fs::remove(dir_.path() / "assets" / "style-9c9c9c.css");

  clock_.advance(999ms);  // no look at the directory yet: what was loaded
  EXPECT_EQ(body_of(serve(get("/"))), kIndexHtml);
  EXPECT_EQ(serve(get("/assets/new-111111.js")).status, 404);
  EXPECT_EQ(serve(get("/assets/style-9c9c9c.css")).status, 200);

  clock_.advance(1ms);
  EXPECT_EQ(body_of(serve(get("/"))), "<!doctype html><title>rebuilt</title><script src=/assets/new-111111.js>");
  EXPECT_EQ(body_of(serve(get("/assets/new-111111.js"))), "new()");
  EXPECT_EQ(serve(get("/assets/style-9c9c9c.css")).status, 404);

  // The next change waits for the next interval.
  write(dir_.path() / "favicon.svg", "<svg>v2</svg>");
  EXPECT_EQ(body_of(serve(get("/favicon.svg"))), "<svg/>");
  clock_.advance(1s);
  EXPECT_EQ(body_of(serve(get("/favicon.svg"))), "<svg>v2</svg>");
}

TEST_F(ConsoleFilesTest, AConsoleBuiltAfterStartIsPickedUp) {
  cronwheel::testing::TempDir later("cronwheel-console");
  const fs::path web = later.path() / "web";
  ConsoleFiles files(web, {}, clock_);
  EXPECT_FALSE(files.installed());
  write(web / "index.html", kIndexHtml);
  EXPECT_FALSE(files.installed());
  clock_.advance(1s);
  EXPECT_TRUE(files.installed());
}

TEST_F(ConsoleFilesTest, FilesLoadedBeforeKeepBeingServedWhileTheDirectoryCannotBe) {
  limits_.max_total_bytes = 4096;
  files();
  // A build emptying the directory, or a console removed: what was loaded stays.
  fs::remove(dir_.path() / "index.html");
  clock_.advance(1s);
  EXPECT_TRUE(files().installed());
  EXPECT_EQ(body_of(serve(get("/jobs"))), kIndexHtml);

  // Over the limit: refused, and what was loaded stays.
  write(dir_.path() / "index.html", "<!doctype html><title>too big</title>");
  write(dir_.path() / "assets" / "huge-222222.js", std::string(limits_.max_total_bytes + 1, 'x'));
  clock_.advance(1s);
  EXPECT_EQ(body_of(serve(get("/"))), kIndexHtml);
  EXPECT_EQ(serve(get("/assets/huge-222222.js")).status, 404);

  // Back under it: loaded.
  fs::remove(dir_.path() / "assets" / "huge-222222.js");
  clock_.advance(1s);
  EXPECT_EQ(body_of(serve(get("/"))), "<!doctype html><title>too big</title>");
}

TEST(ConsoleFiles, LeavesTheApiHealthAndMetricsToTheirRoutes) {
  for (const char* path : {"/api", "/api/", "/api/v1/nothing", "/api/registry", "/healthz", "/healthz/x", "/metrics"}) {
    EXPECT_FALSE(ConsoleFiles::owns(path)) << path;
  }
  for (const char* path : {"/", "/jobs", "/apis", "/metrics-dashboard", "/assets/app.js"}) {
    EXPECT_TRUE(ConsoleFiles::owns(path)) << path;
  }
}

// Over HTTP, through the server the admin uses: what cpp-httplib does with the answers.
class ConsoleFilesOverHttpTest : public ConsoleFilesTest {
 protected:
  void SetUp() override {
    common::http::HttpServerOptions options;
    options.host = "127.0.0.1";
    options.worker_threads = 2;
    server_ = std::make_unique<common::http::HttpServer>(options);
    server_->fallback_get([this](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
      if (ConsoleFiles::owns(req.path)) {
        files().serve(req, res);
        if (res.status != 404) return;
      }
      throw common::http::HttpError(404, common::http::kNotFoundCode, "not found");
    });
    files();  // loaded before the server's threads use it
    server_->start();
  }

  httplib::Client client() {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_decompress(false);  // the bytes as sent
    client.set_url_encode(false);  // the path as written
    return client;
  }

  std::unique_ptr<common::http::HttpServer> server_;
};

TEST_F(ConsoleFilesOverHttpTest, TheGzipCopyIsSentAsItIsEvenToClientsThatAcceptBrotli) {
  auto res = client().Get("/assets/index-3f2a1b.js", {{"Accept-Encoding", "gzip, deflate, br"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value_count("Content-Encoding"), 1u);
  EXPECT_EQ(res->get_header_value("Content-Encoding"), "gzip");
  EXPECT_EQ(res->body, gzip_shaped(kAppJs.size()));
  // A text file without a copy is sent as it is, not compressed on the way.
  write(dir_.path() / "assets" / "long-333333.js", std::string(4096, 'a'));
  clock_.advance(1s);
  auto long_js = client().Get("/assets/long-333333.js", {{"Accept-Encoding", "gzip, deflate, br"}});
  ASSERT_TRUE(long_js);
  EXPECT_FALSE(long_js->has_header("Content-Encoding"));
  EXPECT_EQ(long_js->body, std::string(4096, 'a'));
}

TEST_F(ConsoleFilesOverHttpTest, EncodedDotfilesAreNotFound) {
  write(dir_.path() / ".env", "DATABASE_PASSWORD=secret");
  write(dir_.path() / ".git" / "config", "[remote]");
  clock_.advance(1s);
  for (const char* path : {"/.env", "/%2eenv", "/%2Eenv", "/.git/config", "/%2egit/config", "/assets/%2e%2e/.env",
                           "/%2e%2e/%2e%2e/etc/passwd"}) {
    auto res = client().Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_EQ(res->body.find("secret"), std::string::npos) << path;
    EXPECT_EQ(res->body.find("<title>"), std::string::npos) << path;
  }
}

TEST_F(ConsoleFilesOverHttpTest, HeadAnswersTheHeadersOfGet) {
  auto res = client().Head("/assets/index-3f2a1b.js");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Length"), std::to_string(kAppJs.size()));
  EXPECT_EQ(res->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(res->body, "");
  auto page = client().Head("/jobs/1");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Length"), std::to_string(kIndexHtml.size()));
}

TEST_F(ConsoleFilesOverHttpTest, RangesAreIgnoredTheWholeFileIsSent) {
  // Several ranges would each be built in memory; ranges past the end sent with a wrong length.
  for (const char* range : {"bytes=0-9", "bytes=5-100000", "bytes=100000-", "bytes=0-1,3-4", "bytes=-5"}) {
    auto res = client().Get("/assets/index-3f2a1b.js", {{"Range", range}});
    ASSERT_TRUE(res) << range;
    EXPECT_EQ(res->status, 200) << range;
    EXPECT_EQ(res->body, kAppJs) << range;
    EXPECT_FALSE(res->has_header("Content-Range")) << range;
  }
}

TEST_F(ConsoleFilesOverHttpTest, ARepeatVisitDownloadsNothingButIndexHtml) {
  auto index = client().Get("/");
  ASSERT_TRUE(index);
  auto asset = client().Get("/assets/index-3f2a1b.js", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(asset);
  // The browser keeps the asset a year without asking; it asks for index.html again.
  EXPECT_NE(asset->get_header_value("Cache-Control").find("immutable"), std::string::npos);
  auto again = client().Get("/", {{"If-None-Match", index->get_header_value("ETag")}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  EXPECT_EQ(again->body, "");
}

}  // namespace
}  // namespace cronwheel::admin
