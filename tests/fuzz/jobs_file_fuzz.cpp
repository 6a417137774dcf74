// Fuzz target: common/jobs_file, the YAML jobs files the CLI reads and the admin takes as an
// upload (POST /api/v1/apply with application/yaml). The input is a file's text.
//
// Properties:
//  - parse_yaml() throws nothing but JobsFileError, whatever the text (aliases, depth, bytes);
//  - what it reads passes check_json() (the strict form the admin takes as JSON);
//  - to_yaml() of it reads back as the same document;
//  - locate() of any problem's path answers without failing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/jobs_file/jobs_file.h"
#include "tests/fuzz/fuzz_check.h"

namespace jobs_file = cronwheel::common::jobs_file;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const jobs_file::ScriptReader scripts = [](const std::string& path) -> std::string {
    if (path.size() % 2 == 0) return "#!/bin/sh\necho " + path + "\n";
    throw std::runtime_error("no such file");
  };
  jobs_file::ParsedFile parsed;
  try {
    parsed = jobs_file::parse_yaml(text, "fuzz.yaml", scripts);
  } catch (const jobs_file::JobsFileError& e) {
    (void)jobs_file::locate(parsed, e.problem().path);
    return 0;
  }
  try {
    jobs_file::check_json(parsed.document);
  } catch (const jobs_file::JobsFileError& e) {
    FUZZ_CHECK(false, e.what());
  }
  const auto yaml = jobs_file::to_yaml(parsed.document);
  jobs_file::ParsedFile again;
  try {
    again = jobs_file::parse_yaml(yaml, "again.yaml", {});
  } catch (const jobs_file::JobsFileError& e) {
    std::fprintf(stderr, "%s\n---\n%s\n", e.what(), yaml.c_str());
    FUZZ_CHECK(false, "to_yaml wrote what parse_yaml refuses");
  }
  FUZZ_CHECK(again.document == parsed.document, "to_yaml did not read back as the same document");
  return 0;
}
