# The web console (web/): its npm packages and its build. Sourced by setup.sh, test.sh, demo.sh
# and build-console.sh; each step is skipped when nothing it depends on changed since it last ran.

console_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# A digest of the files listed on stdin (paths relative to the repository), by content.
console_digest() {
  (cd "$console_root" && sort | xargs -r -d '\n' sha256sum | sha256sum | cut -d' ' -f1)
}

# Fails unless node and npm are there and node is 18 or newer (Debian 12 ships 18).
console_check_node() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "the web console needs Node.js and npm: run scripts/setup.sh (Debian: nodejs npm)" >&2
    return 1
  fi
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  if [ "$major" -lt 18 ]; then
    echo "the web console needs Node.js 18 or newer; this is $(node --version)" >&2
    return 1
  fi
}

# Runs "$@" holding a lock on web/, so two builds at once (two shells, a test and a demo) never
# run npm over one node_modules together.
console_locked() {
  (
    flock 9
    "$@"
  ) 9<"$console_root/web/package.json"
}

# npm ci in web/ unless node_modules was installed from this very package-lock.json, by this
# Node.js version.
console_install() {
  [ -f "$console_root/web/package.json" ] || return 0
  console_locked console_install_unlocked
}

console_install_unlocked() {
  console_check_node
  local stamp="$console_root/web/node_modules/.cronwheel-installed"
  local want
  want="$(node --version) $(echo web/package-lock.json | console_digest)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  echo "Installing the web console's packages (npm ci)"
  rm -f "$stamp"
  (cd "$console_root/web" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
}

# Builds the console into BUILD_DIR/web unless it was built there from these very sources.
console_build() {
  [ -f "$console_root/web/package.json" ] || return 0
  console_locked console_build_unlocked "$1"
}

console_build_unlocked() {
  local build
  build=$(realpath -m "$1")  # npm runs in web/: a relative directory would land there
  console_install_unlocked
  local stamp="$build/web.built-from"
  if [ -f "$stamp" ] && [ -f "$build/web/index.html" ] && [ "$(cat "$stamp")" = "$(console_sources_digest)" ]; then
    return 0
  fi
  echo "Building the web console into $build/web"
  mkdir -p "$build"
  rm -f "$stamp"
  (cd "$console_root/web" && npm run --silent build -- --outDir "$build/web" --emptyOutDir)
  # Taken after the build, which rewrites some of its own inputs (the declarations of
  # auto-imported components).
  console_sources_digest >"$stamp"
}

# The Node.js version and every source of the console: web/ without its packages, outputs,
# tests, and the API types generated from openapi.yaml, which is included instead.
console_sources_digest() {
  echo "$(node --version) $( (cd "$console_root" && find web -path web/node_modules -prune -o -path web/dist -prune \
      -o -path web/tests -prune -o -path web/test-results -prune -o -path web/src/api/schema.d.ts -prune \
      -o -name '*.tsbuildinfo' -prune -o -type f -print &&
      echo openapi.yaml) | console_digest)"
}
