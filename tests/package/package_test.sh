#!/usr/bin/env bash
# What a service embedding the executor does, from this source tree:
#  1. configures an executor-only build (CRONWHEEL_BUILD_ADMIN=OFF, no tests) with the
#     admin's CMake packages disabled, and checks that none of the admin's dependencies was
#     looked for (libpqxx and libsodium come through pkg-config, which CMAKE_DISABLE_FIND_PACKAGE
#     does not cover: the cache and the configure output must not name them);
#  2. builds it and installs it into a temporary prefix;
#  3. builds executor/examples as a project of its own against that prefix (find_package),
#     starts the example service, asks its executor for /beat and stops it;
#  4. compiles and runs a small program with `pkg-config --static cronwheel-executor`.
# It compiles common/ and the executor again, unoptimized (-O0, no debug info: the test is about
# building and linking, not speed) with -j2: about 75 s on 2 cores (Release took 108 s).
#   package_test.sh SOURCE_DIR CXX_COMPILER
set -euo pipefail

source_dir=$1
cxx=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/cronwheel-package-test.XXXXXX")
service_pid=
finish() {
  local status=$?
  if [ -n "$service_pid" ]; then kill "$service_pid" 2>/dev/null || true; fi
  if [ "$status" -eq 0 ]; then
    rm -rf "$work"
  else
    echo "package test failed; its files are in $work" >&2
  fi
}
trap finish EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

build=$work/build
prefix=$work/prefix

echo "== configure an executor-only build"
# The admin's CMake packages, and the tests' and benchmarks', must not be needed.
cmake -S "$source_dir" -B "$build" --no-warn-unused-cli \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCRONWHEEL_BUILD_ADMIN=OFF -DCRONWHEEL_BUILD_TESTS=OFF -DCRONWHEEL_BUILD_BENCHMARKS=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_date=ON -DCMAKE_DISABLE_FIND_PACKAGE_prometheus-cpp=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_yaml-cpp=ON \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure"; }
for module in libpqxx libsodium; do
  if grep -q "$module" "$work/configure.log" "$build/CMakeCache.txt"; then
    grep -n "$module" "$work/configure.log" "$build/CMakeCache.txt" >&2
    fail "the executor-only build looked for $module"
  fi
done
for package in date prometheus-cpp GTest benchmark yaml-cpp; do
  if grep -q "^${package}_DIR:" "$build/CMakeCache.txt"; then
    fail "the executor-only build looked for the CMake package $package"
  fi
done

echo "== build and install it"
cmake --build "$build" -j2 >"$work/build.log" 2>&1 || { tail -50 "$work/build.log"; fail "build"; }
[ ! -e "$build/bin/cronwheel-admin" ] || fail "cronwheel-admin was built"
cmake --install "$build" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "install"; }
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
for file in bin/cronwheel-executor include/cronwheel/executor.h \
            "$libdir/libcronwheel_executor.a" "$libdir/cmake/cronwheel/cronwheel-config.cmake" \
            "$libdir/cmake/cronwheel/cronwheel-config-version.cmake" \
            "$libdir/pkgconfig/cronwheel-executor.pc" lib/systemd/system/cronwheel-executor.service; do
  [ -e "$prefix/$file" ] || fail "not installed: $file"
done
[ ! -e "$prefix/bin/cronwheel-admin" ] || fail "cronwheel-admin was installed"
"$prefix/bin/cronwheel-executor" --help >/dev/null || fail "cronwheel-executor --help"

echo "== build executor/examples against the installed package"
cmake -S "$source_dir/executor/examples" -B "$work/example" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/example-configure.log" 2>&1 || { cat "$work/example-configure.log"; fail "example configure"; }
cmake --build "$work/example" -j2 >"$work/example-build.log" 2>&1 \
  || { cat "$work/example-build.log"; fail "example build"; }

echo "== run the example service"
# No admin listens on port 1: registration fails and is retried, which is harmless. Its run
# logs go to example-service-logs/ under $work.
(cd "$work" && exec "$work/example/cronwheel-example-service" http://127.0.0.1:1/ 0 \
  >"$work/example.out" 2>"$work/example.err") &
service_pid=$!
address=
for _ in $(seq 300); do
  address=$(sed -n 's/^example-orders executor at \([^,]*\),.*/\1/p' "$work/example.out")
  [ -n "$address" ] && break
  kill -0 "$service_pid" 2>/dev/null || { cat "$work/example.err"; fail "the example service exited"; }
  sleep 0.1
done
[ -n "$address" ] || { cat "$work/example.err"; fail "the example service did not start"; }
beat=$(curl -sS --max-time 5 -X POST -H 'Content-Type: application/json' -d '{}' "${address}beat")
echo "$beat" | grep -q '"code" *: *200' || fail "POST ${address}beat answered: $beat"
kill -TERM "$service_pid"
status=0
wait "$service_pid" || status=$?
service_pid=
[ "$status" -eq 0 ] || { cat "$work/example.err"; fail "the example service exited $status on SIGTERM"; }

echo "== compile a program with pkg-config"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
cat >"$work/pkg_config_check.cpp" <<'PROGRAM'
#include <iostream>

#include <cronwheel/executor.h>

int main() {
  cronwheel::executor::ExecutorOptions options;
  options.admin_addresses = {"http://127.0.0.1:1/"};
  options.app_name = "pkg-config-check";
  options.listen_host = "127.0.0.1";
  options.listen_port = 0;
  options.log_dir = "pkg-config-check-logs";
  cronwheel::executor::Executor executor(options);
  executor.handle("noop", [](cronwheel::executor::JobContext&) {});
  std::cout << "ok\n";
  return 0;
}
PROGRAM
# The library is static: --static adds what it links (Libs.private, Requires.private).
# shellcheck disable=SC2046
"$cxx" -std=c++20 $(pkg-config --cflags cronwheel-executor) "$work/pkg_config_check.cpp" \
  -o "$work/pkg_config_check" $(pkg-config --static --libs cronwheel-executor) \
  || fail "compiling with pkg-config cronwheel-executor"
[ "$(cd "$work" && ./pkg_config_check)" = ok ] || fail "the pkg-config program did not run"

echo "package test passed"
