#include "common/http/io_thread.h"

#include <pthread.h>

#include <exception>

#include <spdlog/spdlog.h>

namespace cronwheel::common::http {

std::thread start_io_thread(boost::asio::io_context& io, const std::string& name) {
  return std::thread([&io, name] {
    const std::string thread_name = (name + "-io").substr(0, 15);
    ::pthread_setname_np(::pthread_self(), thread_name.c_str());
    for (;;) {
      try {
        io.run();
        return;
      } catch (const std::exception& e) {
        spdlog::error("{}: {}", name, e.what());
      }
    }
  });
}

}  // namespace cronwheel::common::http
