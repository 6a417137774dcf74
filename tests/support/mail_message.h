#pragma once

// A mail as an SMTP server received it (tests/support/smtp_sink.h), taken apart for tests:
// headers unfolded and in order, the body, and a base64 body decoded.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cronwheel::testing {

// The message as received, split: headers unfolded, in order, and the body.
struct Parsed {
  std::vector<std::pair<std::string, std::string>> headers;
  std::string header_block;
  std::string body;

  std::vector<std::string> all(const std::string& name) const {
    std::vector<std::string> values;
    for (const auto& [n, v] : headers) {
      if (n == name) values.push_back(v);
    }
    return values;
  }
  std::string one(const std::string& name) const {
    auto values = all(name);
    EXPECT_EQ(values.size(), 1u) << "header " << name << " in:\n" << header_block;
    return values.empty() ? std::string() : values.front();
  }
};

inline Parsed parse(const std::string& data) {
  Parsed parsed;
  auto end = data.find("\r\n\r\n");
  EXPECT_NE(end, std::string::npos) << data;
  parsed.header_block = data.substr(0, end + 2);
  parsed.body = end == std::string::npos ? "" : data.substr(end + 4);
  std::size_t pos = 0;
  while (pos < parsed.header_block.size()) {
    auto eol = parsed.header_block.find("\r\n", pos);
    std::string line = parsed.header_block.substr(pos, eol - pos);
    pos = eol + 2;
    if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {
      EXPECT_FALSE(parsed.headers.empty()) << "continuation line first: " << line;
      if (!parsed.headers.empty()) parsed.headers.back().second += line;  // unfolding keeps the space
      continue;
    }
    auto colon = line.find(':');
    EXPECT_NE(colon, std::string::npos) << "not a header line: " << line;
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    parsed.headers.emplace_back(line.substr(0, colon), value);
  }
  return parsed;
}

inline std::string base64_decode(const std::string& text) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=' || c == '\r' || c == '\n') continue;
    auto v = kAlphabet.find(c);
    if (v == std::string::npos) {
      ADD_FAILURE() << "not base64: " << static_cast<int>(c);
      return out;
    }
    buffer = (buffer << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

// The body of a base64 text/plain message, checked for 76-character CRLF lines.
inline std::string decoded_body(const Parsed& parsed) {
  std::size_t pos = 0;
  while (pos < parsed.body.size()) {
    auto eol = parsed.body.find("\r\n", pos);
    EXPECT_NE(eol, std::string::npos) << "body does not end with CRLF";
    if (eol == std::string::npos) break;
    EXPECT_LE(eol - pos, 76u);
    pos = eol + 2;
  }
  return base64_decode(parsed.body);
}

}  // namespace cronwheel::testing
