#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <signal.h>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cronwheel::testing {

// A real SMTP server for tests: tests/support/smtp_sink.py (Debian's python3-aiosmtpd, run by
// /usr/bin/python3) on 127.0.0.1 and a free port, started as a child process. Every message it
// accepts is kept, in arrival order, for messages(). With tls, a fresh self-signed certificate
// for localhost and 127.0.0.1 (made with /usr/bin/openssl) is its certificate: cert_file() is
// the CA file a client must trust.
//
// The constructor throws std::runtime_error, which fails the test, when the sink cannot start:
// aiosmtpd or openssl missing (run scripts/setup.sh), or no "listening on" line within 15 s.
// The destructor stops it (SIGTERM, then SIGKILL).
class SmtpSink {
 public:
  struct Options {
    bool tls = false;                           // make a certificate; offer STARTTLS (smtps: implicit TLS)
    bool require_starttls = false;              // refuse mail before STARTTLS (needs tls)
    bool smtps = false;                         // TLS from the first byte (needs tls)
    std::string auth = {};                      // "user:password": require AUTH with exactly these
    std::vector<std::string> refuse_rcpt = {};  // answered 550 to RCPT TO
  };

  // One accepted message: the envelope and the raw message as received after DATA.
  struct Message {
    std::string mail_from;
    std::vector<std::string> rcpt_tos;
    std::string data;
  };

  static constexpr const char* kPython = "/usr/bin/python3";
  static constexpr const char* kOpenSsl = "/usr/bin/openssl";
  static constexpr std::chrono::seconds kStartBound{15};

  SmtpSink() : SmtpSink(Options()) {}
  explicit SmtpSink(Options options) : options_(std::move(options)) {
    require_tools();
    std::filesystem::create_directory(out_dir());
    std::vector<std::string> argv = {
        kPython,  std::string(CRONWHEEL_SOURCE_DIR) + "/tests/support/smtp_sink.py",
        "--host", "127.0.0.1",
        "--port", "0",
        "--out",  out_dir().string()};
    if (options_.tls) {
      make_certificate();
      argv.insert(argv.end(), {"--tls-cert", cert_file(), "--tls-key", key_file()});
    }
    if (options_.require_starttls) argv.push_back("--require-starttls");
    if (options_.smtps) argv.push_back("--smtps");
    if (!options_.auth.empty()) argv.insert(argv.end(), {"--auth", options_.auth});
    for (const auto& address : options_.refuse_rcpt) argv.insert(argv.end(), {"--refuse-rcpt", address});

    process_ = std::make_unique<Process>(argv);
    static const std::regex kListening(R"(smtp_sink listening on (\d+)\n)");
    std::smatch match;
    std::string out;
    bool listening = eventually(
        [&] {
          out = process_->out();
          return std::regex_search(out, match, kListening) || !process_->running();
        },
        kStartBound);
    if (!listening || !std::regex_search(out, match, kListening)) {
      throw std::runtime_error("smtp_sink did not start listening within 15 s; stdout: " + out +
                               " stderr: " + process_->err());
    }
    port_ = std::stoi(match[1].str());
  }

  ~SmtpSink() {
    if (process_ && process_->running()) {
      process_->signal(SIGTERM);
      process_->wait_for_exit(std::chrono::seconds(10));
    }
  }

  SmtpSink(const SmtpSink&) = delete;
  SmtpSink& operator=(const SmtpSink&) = delete;

  int port() const noexcept { return port_; }
  // smtp://127.0.0.1:port, or smtps:// for an smtps sink.
  std::string url() const {
    return std::string(options_.smtps ? "smtps" : "smtp") + "://127.0.0.1:" + std::to_string(port_);
  }
  // The PEM certificate the sink serves (tls only): the CA file for a client.
  std::string cert_file() const { return (dir_.path() / "cert.pem").string(); }
  Process& process() noexcept { return *process_; }

  // The messages accepted so far, in arrival order.
  std::vector<Message> messages() const {
    static const std::regex kName(R"((\d+)\.json)");
    std::vector<std::pair<long, std::filesystem::path>> files;
    for (const auto& entry : std::filesystem::directory_iterator(out_dir())) {
      std::string name = entry.path().filename().string();
      if (std::regex_match(name, kName)) files.emplace_back(std::stol(name), entry.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<Message> result;
    for (const auto& [n, path] : files) {
      std::ifstream in(path);
      nlohmann::json j = nlohmann::json::parse(in);
      result.push_back({j.at("mail_from").get<std::string>(),
                        j.at("rcpt_tos").get<std::vector<std::string>>(), j.at("data").get<std::string>()});
    }
    return result;
  }

  // Whether at least `count` messages arrive within `bound`.
  bool wait_for_messages(std::size_t count, std::chrono::milliseconds bound = kEventuallyBound) const {
    return eventually([&] { return messages().size() >= count; }, bound);
  }

 private:
  std::filesystem::path out_dir() const { return dir_.path() / "messages"; }
  std::string key_file() const { return (dir_.path() / "key.pem").string(); }

  static void require_tools() {
    std::string hint =
        " Install the test dependencies with scripts/setup.sh (as root), or: "
        "apt-get install -y --no-install-recommends python3-aiosmtpd openssl";
    if (!std::filesystem::exists(kPython)) {
      throw std::runtime_error(std::string(kPython) + " is missing: the SMTP sink needs Debian's python3." +
                               hint);
    }
    auto check = Process::run({kPython, "-c", "import aiosmtpd"});
    if (check.code != 0) {
      throw std::runtime_error(std::string(kPython) +
                               " cannot import aiosmtpd (Debian's python3-aiosmtpd): " + check.err + hint);
    }
  }

  void make_certificate() {
    if (!std::filesystem::exists(kOpenSsl)) {
      throw std::runtime_error(std::string(kOpenSsl) +
                               " is missing: the SMTP sink's certificate needs it. Run scripts/setup.sh.");
    }
    auto made = Process::run(
        {kOpenSsl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key_file(), "-out", cert_file()});
    if (made.code != 0)
      throw std::runtime_error("openssl could not make the SMTP sink's certificate: " + made.err);
  }

  Options options_;
  TempDir dir_{"cronwheel-smtp-sink"};
  std::unique_ptr<Process> process_;
  int port_ = 0;
};

}  // namespace cronwheel::testing
