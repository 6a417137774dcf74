#include "admin/outbound/smtp_mailer.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "admin/auth/secrets.h"
#include "admin/outbound/mail_text.h"
#include "admin/outbound/curl_handle.h"

namespace cronwheel::admin {
namespace {

constexpr std::size_t kMaxHeloNameBytes = 253;
// How much of the server's last answer and of the last command a MailError quotes.
constexpr std::size_t kMaxQuotedBytes = 512;

bool is_ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// `text` fit to quote in a one-line message: control and non-ASCII bytes as \xNN, cut at `max`.
std::string quote(std::string_view text, std::size_t max = 80) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text.substr(0, max)) {
    if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > max) out += "...";
  return out;
}

void check_address(std::string_view what, std::string_view address) {
  if (!mail_text::is_plain_address(address)) {
    throw MailError("invalid " + std::string(what) + " address \"" + quote(address) +
                    "\" (refused before connecting): only a bare local@domain of printable ASCII, "
                    "at most 254 bytes");
  }
}

struct Upload {
  std::string_view data;
  std::size_t offset = 0;
};

std::size_t read_upload(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* upload = static_cast<Upload*>(user);
  std::size_t n = std::min(size * count, upload->data.size() - upload->offset);
  std::copy_n(upload->data.data() + upload->offset, n, buffer);
  upload->offset += n;
  return n;
}

// What was said on the connection last, for MailError: libcurl's error text for an SMTP refusal
// has the reply code only, not what was refused nor the server's words.
struct Transcript {
  std::string command;  // the last command, AUTH without its arguments
  std::string reply;    // the server's last reply, its lines joined by spaces
  bool reply_complete = true;
  bool in_auth = false;  // between AUTH and its final reply: what is sent are credentials
  bool quit = false;     // QUIT sent: what failed came before it
};

std::string trimmed_line(const char* data, std::size_t size) {
  std::string_view line(data, size);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return quote(line, kMaxQuotedBytes);
}

bool starts_with_word(std::string_view line, std::string_view word) {
  if (line.size() < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(line[i])) != word[i]) return false;
  }
  return line.size() == word.size() || line[word.size()] == ' ' || line[word.size()] == ':';
}

int on_debug(CURL*, curl_infotype type, char* data, std::size_t size, void* user) {
  auto* transcript = static_cast<Transcript*>(user);
  if (transcript->quit) return 0;
  if (type == CURLINFO_HEADER_OUT) {
    if (transcript->in_auth) return 0;  // answers to AUTH challenges: credentials
    std::string line = trimmed_line(data, size);
    if (starts_with_word(line, "QUIT")) {
      transcript->quit = true;  // libcurl says goodbye after a refusal too
    } else if (starts_with_word(line, "AUTH")) {
      // Keep the mechanism, never its argument (the credentials of AUTH PLAIN).
      auto space = line.find(' ', 5);
      transcript->command = line.substr(0, space);
      transcript->in_auth = true;
    } else if (starts_with_word(line, "EHLO") || starts_with_word(line, "HELO") ||
               starts_with_word(line, "STARTTLS") || starts_with_word(line, "MAIL") ||
               starts_with_word(line, "RCPT") || starts_with_word(line, "DATA")) {
      transcript->command = line;
    }
  } else if (type == CURLINFO_HEADER_IN) {
    std::string line = trimmed_line(data, size);
    if (transcript->reply_complete) transcript->reply.clear();
    if (!transcript->reply.empty()) transcript->reply += ' ';
    transcript->reply += line;
    if (transcript->reply.size() > kMaxQuotedBytes) transcript->reply.resize(kMaxQuotedBytes);
    transcript->reply_complete = line.size() < 4 || line[3] != '-';
    if (transcript->reply_complete && !line.starts_with("334")) transcript->in_auth = false;
  }
  return 0;
}

bool is_tls_error(CURLcode rc) {
  switch (rc) {
    case CURLE_USE_SSL_FAILED:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CLIENTCERT:
      return true;
    default:
      return false;
  }
}

// The address in "RCPT TO:<a@b>" or "MAIL FROM:<a@b> SIZE=..."
std::string command_address(std::string_view command) {
  auto open = command.find('<');
  auto close = command.find('>', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return std::string(command);
  return std::string(command.substr(open + 1, close - open - 1));
}

std::string describe_failure(CURLcode rc, const std::string& error_buffer, long response_code,
                             const Transcript& transcript, const SmtpMailer::Options& options,
                             const std::string& server) {
  std::string detail = error_buffer.empty() ? curl_easy_strerror(rc) : error_buffer;
  std::string answer =
      transcript.reply.empty() && response_code != 0 ? std::to_string(response_code) : transcript.reply;
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
      return "cannot connect to " + server + ": " + detail;
    case CURLE_OPERATION_TIMEDOUT:
      return "timeout talking to " + server +
             (transcript.command.empty() ? std::string() : " after " + transcript.command) +
             (answer.empty() ? std::string() : " (last answer: " + answer + ")") + ": " + detail;
    case CURLE_LOGIN_DENIED:
      return "authentication as \"" + quote(options.username) + "\" refused by " + server + ": " +
             (answer.empty() ? detail : answer + " (" + detail + ")");
    default:
      break;
  }
  if (rc == CURLE_USE_SSL_FAILED) {
    return "TLS with " + server + " failed: STARTTLS is required but the server does not offer it (" +
           detail + ")";
  }
  if (is_tls_error(rc)) return "TLS with " + server + " failed: " + detail;
  if (response_code >= 400) {
    std::string refused;
    const std::string& command = transcript.command;
    if (starts_with_word(command, "MAIL")) {
      refused = "the sender " + command_address(command);
    } else if (starts_with_word(command, "RCPT")) {
      refused = "the recipient " + command_address(command);
    } else if (starts_with_word(command, "DATA")) {
      refused = "the message";
    } else if (command.empty()) {
      refused = "the connection";
    } else {
      refused = command;
    }
    return server + " refused " + refused + ": " + answer + " (" + detail + ")";
  }
  return "sending to " + server + " failed" +
         (transcript.command.empty() ? std::string() : " after " + transcript.command) + ": " + detail +
         (answer.empty() ? std::string() : " (last answer: " + answer + ")");
}

std::invalid_argument invalid_url(const std::string& url, const std::string& why) {
  return std::invalid_argument("invalid SMTP url \"" + quote(url) + "\": " + why +
                               " (expected smtp://host[:port] or smtps://host[:port])");
}

// Checks `url` and returns it as scheme://host:port.
std::string normalized_server(const std::string& url) {
  std::string_view rest = url;
  std::string scheme;
  for (std::string_view s : {"smtp", "smtps"}) {
    std::string prefix = std::string(s) + "://";
    if (rest.size() >= prefix.size() &&
        std::equal(prefix.begin(), prefix.end(), rest.begin(),
                   [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
      scheme = s;
      rest.remove_prefix(prefix.size());
    }
  }
  if (scheme.empty()) throw invalid_url(url, "the scheme must be smtp or smtps");
  if (rest.find_first_of("/?#@") != std::string_view::npos) {
    throw invalid_url(url, "no path, query, fragment or user info allowed");
  }
  std::string_view host;
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string_view::npos) throw invalid_url(url, "unclosed [");
    host = rest.substr(0, close + 1);
    std::string_view inner = host.substr(1, host.size() - 2);
    if (inner.empty() || inner.find_first_not_of("0123456789abcdefABCDEF:.") != std::string_view::npos) {
      throw invalid_url(url, "bad IPv6 address");
    }
    rest.remove_prefix(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') throw invalid_url(url, "unexpected text after the host");
      port = rest.substr(1);
      if (port.empty()) throw invalid_url(url, "empty port");
    }
  } else {
    auto colon = rest.find(':');
    host = rest.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = rest.substr(colon + 1);
      if (port.empty()) throw invalid_url(url, "empty port");
    }
    if (host.empty()) throw invalid_url(url, "no host");
    if (!std::all_of(host.begin(), host.end(),
                     [](char c) { return is_ascii_alnum(c) || c == '-' || c == '.' || c == '_'; })) {
      throw invalid_url(url, "bad host name");
    }
  }
  int port_number = scheme == "smtps" ? 465 : 25;
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) {
      throw invalid_url(url, "the port must be a number from 1 to 65535");
    }
    port_number = std::stoi(std::string(port));
    if (port_number < 1 || port_number > 65535) {
      throw invalid_url(url, "the port must be a number from 1 to 65535");
    }
  }
  std::string lower_host(host);
  std::transform(lower_host.begin(), lower_host.end(), lower_host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return scheme + "://" + lower_host + ":" + std::to_string(port_number);
}

}  // namespace

SmtpMailer::SmtpMailer(Options options) : options_(std::move(options)) {
  server_ = normalized_server(options_.url);
  if (!options_.helo_name.empty()) {
    const auto& name = options_.helo_name;
    if (name.size() > kMaxHeloNameBytes || !std::all_of(name.begin(), name.end(), [](char c) {
          return is_ascii_alnum(c) || c == '-' || c == '.';
        })) {
      throw std::invalid_argument("invalid SMTP helo_name \"" + quote(name) +
                                  "\": only letters, digits, '-' and '.', at most 253");
    }
  }
  curl_url_ = server_ + (options_.helo_name.empty() ? "" : "/" + options_.helo_name);
  if (options_.username.empty() && !options_.password.empty()) {
    throw std::invalid_argument("an SMTP password needs a username");
  }
  if (!options_.ca_file.empty() && !std::ifstream(options_.ca_file).good()) {
    throw std::invalid_argument("cannot read the SMTP ca_file \"" + quote(options_.ca_file, 1024) + "\"");
  }
  if (options_.connect_timeout.count() <= 0 || options_.timeout.count() <= 0) {
    throw std::invalid_argument("SMTP timeouts must be positive");
  }
  init_curl();
}

void SmtpMailer::send(const Mail& mail) {
  check_address("sender", mail.from);
  if (mail.to.empty()) throw MailError("no recipient (refused before connecting)");
  if (mail.to.size() > kMaxRecipients) {
    throw MailError(std::to_string(mail.to.size()) + " recipients, more than " +
                    std::to_string(kMaxRecipients) + " (refused before connecting)");
  }
  CurlList recipients;
  for (const auto& address : mail.to) {
    check_address("recipient", address);
    append(recipients, address.c_str());
  }
  std::string message = mail_text::message_text(mail, std::chrono::system_clock::now(), random_secret(18));

  CurlHandle handle(curl_easy_init());
  if (!handle) throw MailError("cannot create a libcurl handle");
  CURL* curl = handle.get();
  char error_buffer[CURL_ERROR_SIZE] = {};
  Upload upload{message};
  Transcript transcript;

  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_URL, curl_url_.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
  if (server_.starts_with("smtp://")) {
    long use_ssl = CURLUSESSL_TRY;
    // A password goes over TLS only, unless kNever says plain text on purpose.
    if (options_.starttls == Options::StartTls::kRequired || !options_.username.empty()) use_ssl = CURLUSESSL_ALL;
    if (options_.starttls == Options::StartTls::kNever) use_ssl = CURLUSESSL_NONE;
    curl_easy_setopt(curl, CURLOPT_USE_SSL, use_ssl);
  }
  if (!options_.username.empty()) {
    curl_easy_setopt(curl, CURLOPT_USERNAME, options_.username.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, options_.password.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_MAIL_FROM, mail.from.c_str());
  curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, recipients.get());
  curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_upload);
  curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
  // The debug callback only records the transcript; with it set, verbose output goes nowhere else.
  curl_easy_setopt(curl, CURLOPT_DEBUGFUNCTION, on_debug);
  curl_easy_setopt(curl, CURLOPT_DEBUGDATA, &transcript);
  curl_easy_setopt(curl, CURLOPT_VERBOSE, 1L);

  CURLcode rc = curl_easy_perform(curl);
  if (rc == CURLE_OK) return;
  long response_code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response_code);
  throw MailError(describe_failure(rc, error_buffer, response_code, transcript, options_, server_));
}

}  // namespace cronwheel::admin
