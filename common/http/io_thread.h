#pragma once

// The one thread that runs an HTTP server's or client's Boost.Asio io_context. Private to
// common/http.

#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

namespace cronwheel::common::http {

// Starts a thread named "<name>-io" (cut to the OS's 15 characters) that runs `io` until it
// runs out of work. What a handler throws is logged under `name` and running goes on.
std::thread start_io_thread(boost::asio::io_context& io, const std::string& name);

}  // namespace cronwheel::common::http
