#!/usr/bin/env bash
# Writes the option tables of docs/configuration.md from the programs themselves
# (`--print-option-table`), between its "BEGIN GENERATED <program>" and "END GENERATED" lines.
#   scripts/gen-config-docs.sh [BIN_DIR]           rewrite the tables (BIN_DIR: build/bin)
#   scripts/gen-config-docs.sh [BIN_DIR] --check   exit 1, with the difference, when they are stale
# ctest runs the check (docs.configuration_in_step), so an option cannot change without its docs.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin}
mode=${2:-write}
doc=docs/configuration.md
out=$(mktemp)
trap 'rm -f "$out" "$out".*' EXIT

awk -v bin="$bin" '
  /^<!-- BEGIN GENERATED [a-z-]+ -->$/ {
    print
    program = $4
    command = bin "/" program " --print-option-table"
    while ((command | getline line) > 0) print line
    if (close(command) != 0) { print "cannot run " command > "/dev/stderr"; exit 2 }
    skipping = 1
    next
  }
  /^<!-- END GENERATED -->$/ { skipping = 0 }
  !skipping { print }
' "$doc" > "$out"

if [ "$mode" = --check ]; then
  if ! diff -u "$doc" "$out"; then
    echo "$doc is not in step with the programs' options: run scripts/gen-config-docs.sh" >&2
    exit 1
  fi
else
  cp "$out" "$doc"
fi
