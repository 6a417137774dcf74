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

refused() {  # refused FILE LINE [SAID]: LINE planted in FILE (relative to admin/) must be refused,
             # the refusal saying SAID (default: LINE)
  rm -rf "$tmp/admin"
  cp -R "$admin" "$tmp/admin"
  mkdir -p "$(dirname "$tmp/admin/$1")"
  printf '%s\n' "$2" >>"$tmp/admin/$1"
  out=$(sh "$check" "$tmp/admin" "$rooms_file")
  code=$?
  if [ $code -ne 1 ] || ! printf '%s' "$out" | grep -qF "${3:-$2}"; then
    printf 'not refused (exit %s): %s in %s\n%s\n' "$code" "$2" "$1" "$out"
    failures=$((failures + 1))
  fi
}

refused scheduler/second_ring.cpp '#include "admin/pg/database.h"'           # an adapter
refused scheduler/second_ring.cpp '#include "admin/api/rest_api.h"'          # a room above
refused model/fire_state.cpp '#include "admin/route/route_table.h"'          # the model, upwards
refused trigger/trigger_pool.h '#include "admin/outbound/smtp_mailer.h"'     # an adapter
refused trigger/trigger_pool.h '#include "admin/admin_config.h"'             # the root's settings
refused main.cpp '#include "admin/pg/migrator.h"'                            # main names no adapter
refused api/rest_api.cpp '#include <pqxx/pqxx>'                              # PostgreSQL outside pg/
refused alarm/alarm_service.cpp '#include <curl/curl.h>'                     # libcurl outside outbound/
refused scheduler/scheduler.cpp '#include "common/http/http_client.h"'       # HTTP in the core
refused api/rest_api.cpp '#include <httplib.h>'                              # an HTTP library in the API
refused newroom/thing.cpp '#include <string>' 'admin/newroom/ has sources'    # a folder with no library
exit $((failures > 0))
