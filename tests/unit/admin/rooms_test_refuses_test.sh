#!/bin/sh
# rooms_test_refuses_test.sh ADMIN_DIR ROOMS_FILE
#
# rooms_test.sh passes on the tree and fails on each kind of include it exists to refuse: each
# case copies ADMIN_DIR, plants one bad include, and expects exit 1 with the planted line named.
set -u
admin=${1:?usage: rooms_test_refuses_test.sh ADMIN_DIR ROOMS_FILE}
rooms_file=${2:?usage: rooms_test_refuses_test.sh ADMIN_DIR ROOMS_FILE}
check=$(dirname "$0")/rooms_test.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

if ! out=$(sh "$check" "$admin" "$rooms_file"); then
  printf 'rooms_test.sh fails on the tree itself:\n%s\n' "$out"
  failures=1
fi

cp -R "$admin" "$tmp/admin"  # once: each case plants its line in the copy and takes it out again

refused() {  # refused FILE LINE [SAID]: LINE planted in FILE (relative to admin/) must be refused,
             # the refusal saying SAID (default: LINE)
  file="$tmp/admin/$1"
  if [ -e "$file" ]; then cp "$file" "$tmp/kept"; else rm -f "$tmp/kept"; fi
  mkdir -p "$(dirname "$file")"
  printf '%s\n' "$2" >>"$file"
  out=$(sh "$check" "$tmp/admin" "$rooms_file")
  code=$?
  # The copy as it was, for the next case.
  if [ -e "$tmp/kept" ]; then mv "$tmp/kept" "$file"; else rm -f "$file"; rmdir "$(dirname "$file")" 2>/dev/null; fi
  if [ $code -ne 1 ] || ! printf '%s' "$out" | grep -qF "${3:-$2}"; then
    printf 'not refused (exit %s): %s in %s\n%s\n' "$code" "$2" "$1" "$out"
    failures=$((failures + 1))
  fi
}

refused scheduler/second_ring.cpp '#include "admin/pg/database.h"'           # an adapter
refused scheduler/second_ring.cpp '#include "admin/api/rest_api.h"'          # a room above
refused model/fire_state.cpp '#include "admin/route/routing.h"'              # the model, upwards
refused trigger/fire_thread_pool.h '#include "admin/outbound/smtp_mailer.h"' # an adapter
refused trigger/fire_thread_pool.h '#include "admin/admin_config.h"'         # the root's settings
refused main.cpp '#include "admin/pg/migrator.h"'                            # main names no adapter
refused api/rest_api.cpp '#include <pqxx/pqxx>'                              # PostgreSQL outside pg/
refused alarm/alarm_service.cpp '#include <curl/curl.h>'                     # libcurl outside outbound/
refused scheduler/scheduler.cpp '#include "common/http/http_client.h"'       # HTTP in the core
refused api/rest_api.cpp '#include <httplib.h>'                              # an HTTP library in the API
refused newroom/thing.cpp '#include <string>' 'admin/newroom/ has sources'    # a folder with no library
exit $((failures > 0))
