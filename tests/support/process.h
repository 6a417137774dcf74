#pragma once

#include <fcntl.h>
#include <cstdio>
#include <cstring>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace cronwheel::testing {

// A child process started by a test: the real binary, with its output captured to files.
// The destructor kills it (SIGKILL) if it still runs, so a failing test never leaves a
// server behind.
// Kilobytes of a process's /proc/<pid>/status field ("VmRSS", "VmHWM"); -1 when unreadable.
inline long status_kb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

class Process {
 public:
  // Starts `argv[0]` with `argv` and the current environment plus `env` ("NAME=value").
  Process(std::vector<std::string> argv, std::vector<std::string> env = {},
          const std::string& output_prefix = "")
      : argv_(std::move(argv)) {
    static int counter = 0;
    std::string prefix = output_prefix.empty()
                             ? "/tmp/cronwheel-test-" + std::to_string(::getpid()) + "-" +
                                   std::to_string(++counter)
                             : output_prefix;
    stdout_path_ = prefix + ".out";
    stderr_path_ = prefix + ".err";

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, stdout_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);

    std::vector<char*> args;
    for (auto& a : argv_) args.push_back(a.data());
    args.push_back(nullptr);
    std::vector<std::string> environment;
    for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
    for (auto& e : env) environment.push_back(e);
    std::vector<char*> envp;
    for (auto& e : environment) envp.push_back(e.data());
    envp.push_back(nullptr);

    int rc = posix_spawn(&pid_, argv_[0].c_str(), &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + argv_[0] + ": " + std::strerror(rc));
  }

  ~Process() {
    if (running()) {
      ::kill(pid_, SIGKILL);
      wait_for_exit(std::chrono::seconds(10));
    }
    std::remove(stdout_path_.c_str());
    std::remove(stderr_path_.c_str());
  }

  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }

  bool running() {
    if (exited_) return false;
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) record(status);
    return !exited_;
  }

  void signal(int sig) {
    if (running()) ::kill(pid_, sig);
  }

  // Waits for the process to end; returns its exit code (128 + signal when killed), or -1
  // if it still runs after `timeout`.
  int wait_for_exit(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running()) {
      if (std::chrono::steady_clock::now() >= deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return exit_code_;
  }

  std::string out() const { return read(stdout_path_); }
  std::string err() const { return read(stderr_path_); }

  // Runs a command to completion (at most `timeout`) and returns {exit code, stdout, stderr}.
  struct Result {
    int code;
    std::string out;
    std::string err;
  };
  static Result run(std::vector<std::string> argv,
                    std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    Process p(std::move(argv));
    int code = p.wait_for_exit(timeout);
    return {code, p.out(), p.err()};
  }

 private:
  void record(int status) {
    exited_ = true;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::vector<std::string> argv_;
  std::string stdout_path_;
  std::string stderr_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
};

}  // namespace cronwheel::testing
