#!/bin/sh
# Where each room of admin/ may reach (admin/CMakeLists.txt, docs/architecture.md):
#   model/   nothing of admin/ but itself; no libpqxx, no cpp-httplib, no common/http
#   pg/      model/ and itself; no business rooms
#   the rest (alarm, api, auth, cli, complete, housekeeping, registry, route, scheduler, trigger):
#            no pg/, no server/,
#            no libpqxx
#   server/ and main.cpp: anything (the composition root)
# Prints every include that breaks a rule and fails when there is one.
set -u
admin=${1:?usage: rooms_test.sh ADMIN_DIR}
cd "$admin" || exit 2
status=0

breaks() {  # breaks ROOM PATTERN WHY: lists ROOM's includes matching PATTERN
  found=$(grep -rnE "^#include [<\"]($2)" "$1" --include='*.h' --include='*.cpp')
  if [ -n "$found" ]; then
    printf '%s may not include %s:\n%s\n' "$1/" "$3" "$found"
    status=1
  fi
}

[ -d model ] && [ -d pg ] && [ -d server ] || { echo "no model/, pg/ or server/ under $admin"; exit 2; }
found=$(grep -rnE '^#include "admin/' model --include='*.h' --include='*.cpp' | grep -v '"admin/model/')
[ -n "$found" ] && { printf 'model/ may include only model/:\n%s\n' "$found"; status=1; }
breaks model 'pqxx|httplib|common/http/' 'libpqxx, cpp-httplib or common/http'

found=$(grep -rnE '^#include "admin/' pg --include='*.h' --include='*.cpp' | grep -vE '"admin/(model|pg)/')
[ -n "$found" ] && { printf 'pg/ may include only model/ and pg/:\n%s\n' "$found"; status=1; }

for room in alarm api auth cli complete housekeeping registry route scheduler trigger; do
  [ -d "$room" ] || continue
  breaks "$room" 'admin/pg/|admin/server/|pqxx' 'the PostgreSQL adapter or the composition root'
done
exit $status
