#!/usr/bin/env bash
# Builds the web console (web/) into BUILD_DIR/web (default build/web), where cronwheel-admin in
# BUILD_DIR/bin finds it; skips what has not changed. `--web-dir` points an admin elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/console.sh
console_build "${1:-${CRONWHEEL_BUILD_DIR:-$(pwd)/build}}"
