#!/usr/bin/env bash
# cronwheel-admin with shedding past capacity turned off (--shed-late-ms 0): its scans decide
# every fire due however late the node hands them over. For tests/bench/fire_load.sh, to measure
# past the knee with and without shedding in the same run:
#
#   tests/bench/fire_load.sh --jobs "8000 12000" --admin noshed=tests/bench/admin_without_shedding.sh \
#       --admin shed=build/bin/cronwheel-admin -- --executor-lead true
#
# The admin binary is $CRONWHEEL_ADMIN when set, else build/bin/cronwheel-admin of the checkout
# this script is in. Every argument is passed on after --shed-late-ms 0.
set -euo pipefail
admin=${CRONWHEEL_ADMIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/bin/cronwheel-admin}
[ -x "$admin" ] || { echo "admin_without_shedding.sh: no $admin: build cronwheel-admin or set CRONWHEEL_ADMIN" >&2; exit 2; }
exec "$admin" --shed-late-ms 0 "$@"
