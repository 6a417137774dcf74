#!/usr/bin/env bash
# Installs what cronwheel needs to build, test and run on Debian 12, from Debian's packages,
# and the web console's npm packages (npm ci in web/, from web/package-lock.json). Idempotent
# and quick when everything is present. As root it installs; otherwise it prints
# the command to run and fails.
set -euo pipefail

packages=(
  # toolchain
  g++ cmake make pkg-config
  lld                        # links about four times quicker than GNU ld (CMakeLists.txt)
  # libraries (see the Dependencies section of the README)
  libpqxx-dev                # PostgreSQL client
  libboost1.81-dev           # HTTP server: Boost.Beast on Boost.Asio (header only)
  libcpp-httplib-dev         # HTTP client (blocking calls)
  nlohmann-json3-dev         # JSON
  libhowardhinnant-date-dev  # time zones (date/tz over the system tzdata)
  tzdata
  libcli11-dev               # command-line flags
  libspdlog-dev              # logging
  libsodium-dev              # password hashing (argon2id), random tokens
  prometheus-cpp-dev         # GET /metrics in Prometheus' text format
  libcurl4-openssl-dev       # SMTP alarm mail
  libbrotli-dev              # checks the web console's brotli copies before sending them
  libmariadb-dev             # cronwheel import xxl-job reads XXL-JOB's MySQL/MariaDB database
  libgtest-dev libgmock-dev  # tests
  libyaml-cpp-dev            # jobs files (YAML); the tests read openapi.yaml with it too
  libical-dev                # business calendars: .ics import and export (iCalendar, RFC 5545)
  python3-aiosmtpd openssl   # tests: the SMTP sink and its certificate
  python3-jsonschema         # tests: docs/jobs-file.schema.json against the docs' examples
  libbenchmark-dev           # benchmarks
  # the sanitizer stage of test.sh (docs/testing.md): clang, its ASan/UBSan runtimes and
  # libFuzzer (libclang-rt-14-dev: clang-14 only recommends it), llvm-symbolizer for file:line
  # in sanitizer reports (llvm-14)
  clang-14 libclang-rt-14-dev llvm-14
  # servers and tools the scripts and tests run
  postgresql-15 curl procps util-linux
  mariadb-server             # tests: stands in for XXL-JOB's database (a private one, scripts/lib/mariadb.sh)
  jq                         # demo.sh reads the REST API's answers
  # Debian packages (cpack -G DEB, docs/packaging.md): dpkg-shlibdeps and file find the
  # binaries' library dependencies
  dpkg-dev file
  # the web console's browser tests (tests/browser): Playwright drives Debian's Chromium
  chromium fonts-wqy-zenhei
)
# The web console (web/) is built with Node.js 18 or newer: Debian's when there is none.
if ! command -v node >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done

install_console_packages() {
  . "$(dirname "$0")/lib/console.sh"
  console_install
}

if [ ${#missing[@]} -eq 0 ]; then
  install_console_packages
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "cronwheel needs these Debian packages: ${missing[*]}" >&2
  echo "Install them as root with:" >&2
  echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "Installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# PostgreSQL's package would otherwise create and start a system cluster we do not use.
if [ ! -e /etc/postgresql-common/createcluster.conf ] || ! grep -q '^create_main_cluster = false' /etc/postgresql-common/createcluster.conf; then
  mkdir -p /etc/postgresql-common
  echo 'create_main_cluster = false' >> /etc/postgresql-common/createcluster.conf
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "Installed."
install_console_packages
