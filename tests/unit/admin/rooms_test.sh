#!/bin/sh
# rooms_test.sh ADMIN_DIR ROOMS_FILE
#
# Where each room of admin/ may reach. ROOMS_FILE is written by admin/CMakeLists.txt, a line a
# room: "NAME: ROOM ROOM ...", the rooms its library links (cronwheel_admin_room's ROOMS). Rules:
#   - every folder of ADMIN_DIR with sources is a room of ROOMS_FILE (a library of its own);
#   - a room's files include, of admin/, only its own headers and those of the rooms it names;
#   - admin/admin_config.h only in server/; main.cpp includes only server/, cli/ and
#     admin_config.h of admin/ (the composition root names the adapters, main.cpp does not);
#   - libpqxx only in pg/ and server/; libcurl and cpp-httplib only in outbound/; common/http
#     only in api/, outbound/ and server/.
# Prints every include that breaks a rule and exits 1 when there is one (2 on bad usage). Run by
# the build before cronwheel-admin links, and as the unit test AdminRooms.IncludesPointDown.
set -u
admin=${1:?usage: rooms_test.sh ADMIN_DIR ROOMS_FILE}
rooms_file=${2:?usage: rooms_test.sh ADMIN_DIR ROOMS_FILE}
[ -r "$rooms_file" ] || { echo "cannot read $rooms_file"; exit 2; }
rooms_file=$(cd "$(dirname "$rooms_file")" && pwd)/$(basename "$rooms_file")
cd "$admin" || exit 2
status=0

includes() {  # includes PATH...: every #include line of the sources under PATH, grep -n style
  grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$@" --include='*.h' --include='*.cpp' 2>/dev/null
}

refuse() {  # refuse WHAT LINES
  if [ -n "$2" ]; then
    printf '%s:\n%s\n' "$1" "$2"
    status=1
  fi
}

allowed_rooms() {  # allowed_rooms ROOM: the rooms ROOM names, one a line
  sed -n "s/^$1:\(.*\)$/\1/p" "$rooms_file" | tr ' ' '\n' | sed '/^$/d'
}

for dir in */; do
  room=${dir%/}
  [ -n "$(find "$room" -name '*.h' -o -name '*.cpp' | head -n 1)" ] || continue
  if ! grep -q "^$room:" "$rooms_file"; then
    echo "admin/$room/ has sources but is no room of admin/CMakeLists.txt (cronwheel_admin_room)"
    status=1
    continue
  fi
  pattern="$room"
  for other in $(allowed_rooms "$room"); do pattern="$pattern|$other"; done
  refuse "$room/ may include of admin/ only $(echo "$pattern" | sed 's/|/, /g')" \
    "$(includes "$room" | grep -E '"admin/' | grep -vF '"admin/admin_config.h"' | grep -vE "\"admin/($pattern)/")"
  [ "$room" = server ] ||
    refuse "$room/ may not include admin/admin_config.h (the composition root's)" \
      "$(includes "$room" | grep -F '"admin/admin_config.h"')"
done

refuse "main.cpp may include of admin/ only server/, cli/ and admin_config.h" \
  "$(includes main.cpp | grep -E '"admin/' | grep -vE '"admin/(server/|cli/|admin_config\.h)')"

library_rule() {  # library_rule WHAT PATTERN ROOM...: only ROOMs include what PATTERN matches
  what=$1 pattern=$2
  shift 2
  others=$(for dir in */; do
    room=${dir%/}
    case " $* " in *" $room "*) ;; *) echo "$room" ;; esac
  done)
  # shellcheck disable=SC2086
  [ -z "$others" ] || refuse "only $* may include $what" "$(includes $others main.cpp | grep -E "$pattern")"
}
library_rule libpqxx '[<"]pqxx' pg server
library_rule libcurl '[<"]curl/' outbound
library_rule cpp-httplib '[<"]httplib\.h' outbound
library_rule common/http '"common/http/' api outbound server
exit $status
