// HttpTransport against a real HTTP server on 127.0.0.1: what it sends (the Bearer token, the
// method, the content types, the base URL's prefix), what it takes back, and the one-line errors
// when no usable answer comes. Waits are bounded by fractions of a second.

#include "cli/http_transport.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace cronwheel::cli {
namespace {

using namespace std::chrono_literals;

// A port on 127.0.0.1 that nothing listens on: bound, then closed without listening.
int unused_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

// Opened by the test; a handler waits on it (at most 10 s).
class Gate {
 public:
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, 10s, [this] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

class HttpTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get("/prefix/api/v1/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("{\"authorization\":\"" + req.get_header_value("Authorization") + "\",\"accept\":\"" +
                          req.get_header_value("Accept") + "\",\"agent\":\"" + req.get_header_value("User-Agent") +
                          "\",\"query\":\"" + req.get_param_value("q") + "\"}",
                      "application/json");
    });
    server_.Post("/prefix/api/v1/apply", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 400;
      res.set_content(req.get_header_value("Content-Type") + "|" + req.body, "text/plain");
    });
    server_.Delete("/prefix/api/v1/jobs/4", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
    server_.Get("/prefix/api/v1/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(4096, 'x'), "text/plain");
    });
    server_.Get("/prefix/api/v1/moved", [](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("http://127.0.0.1:1/elsewhere");
    });
    server_.Get("/prefix/api/v1/slow", [this](const httplib::Request&, httplib::Response& res) {
      gate_.wait();
      res.set_content("{}", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }

  void TearDown() override {
    gate_.open();
    server_.stop();
    thread_.join();
  }

  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_) + "/prefix/"; }

  static HttpTransportOptions options() {
    HttpTransportOptions o;
    o.connect_timeout = 2s;
    o.read_timeout = 5s;
    o.token = "s3cret";
    o.user_agent = "cronwheel/test";
    return o;
  }

  // The message of the CliError send() throws for `target`.
  std::string failure(HttpTransport& transport, const std::string& target) {
    try {
      ApiRequest request;
      request.target = target;
      transport.send(request);
    } catch (const CliError& e) {
      EXPECT_EQ(e.status(), kExitFailed);
      EXPECT_TRUE(e.names_its_subject());
      return e.what();
    }
    ADD_FAILURE() << "no error for " << target;
    return {};
  }

  httplib::Server server_;
  Gate gate_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(HttpTransportTest, SendsTheTokenAsBearerUnderTheBaseUrlsPrefix) {
  HttpTransport transport(base(), options());
  ApiRequest request;
  request.target = "api/v1/echo?q=a%20b";
  const ApiAnswer answer = transport.send(request);
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.content_type, "application/json");
  EXPECT_EQ(answer.body,
            R"({"authorization":"Bearer s3cret","accept":"application/json","agent":"cronwheel/test","query":"a b"})");
}

TEST_F(HttpTransportTest, SendsBodiesWithTheirContentTypeAndGivesBackErrorAnswers) {
  HttpTransport transport(base(), options());
  ApiRequest request;
  request.method = "POST";
  request.target = "api/v1/apply?dryRun=true";
  request.body = "groups: []\n";
  request.content_type = "application/yaml";
  const ApiAnswer answer = transport.send(request);
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(answer.body, "application/yaml|groups: []\n");
}

TEST_F(HttpTransportTest, DeleteIsSent) {
  HttpTransport transport(base(), options());
  ApiRequest request;
  request.method = "DELETE";
  request.target = "api/v1/jobs/4";
  EXPECT_EQ(transport.send(request).status, 204);
}

TEST_F(HttpTransportTest, RedirectsAreNotFollowed) {
  HttpTransport transport(base(), options());
  ApiRequest request;
  request.target = "api/v1/moved";
  EXPECT_EQ(transport.send(request).status, 302);
}

TEST_F(HttpTransportTest, AnAnswerOverTheLimitIsRefused) {
  HttpTransportOptions small = options();
  small.max_answer_bytes = 1024;
  HttpTransport transport(base(), small);
  EXPECT_EQ(failure(transport, "api/v1/big"),
            "the answer from http://127.0.0.1:" + std::to_string(port_) + "/prefix is larger than 1024 bytes");
}

TEST_F(HttpTransportTest, ASilentServerTimesOut) {
  HttpTransportOptions quick = options();
  quick.read_timeout = 200ms;
  HttpTransport transport(base(), quick);
  EXPECT_EQ(failure(transport, "api/v1/slow"),
            "http://127.0.0.1:" + std::to_string(port_) + "/prefix did not answer within 200 ms");
}

TEST(HttpTransport, NothingListeningIsConnectionRefused) {
  const std::string url = "http://127.0.0.1:" + std::to_string(unused_port());
  HttpTransport transport(url, {});
  try {
    transport.send(ApiRequest{});
    FAIL() << "answered";
  } catch (const CliError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot reach " + url + ": connection refused");
  }
}

TEST(HttpTransport, ABadBaseUrlIsBadUsage) {
  try {
    HttpTransport transport("localhost:8080", {});
    FAIL() << "accepted";
  } catch (const CliError& e) {
    EXPECT_EQ(e.status(), kExitUsage);
  }
}

}  // namespace
}  // namespace cronwheel::cli
