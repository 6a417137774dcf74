#!/usr/bin/env bash
# cronwheel-admin handing lead executors each second's fires only 800 ms before it
# (--lead-horizon-ms 0), as before bursts were handed over seconds ahead. For
# tests/bench/fire_load.sh, beside the admin as built, in the same run:
#
#   tests/bench/fire_load.sh --mode burst --jobs 10000 --admin second=tests/bench/admin_lead_each_second.sh \
#       --admin ahead=build/bin/cronwheel-admin -- --executor-lead true
#
# The admin binary is $CRONWHEEL_ADMIN when set, else build/bin/cronwheel-admin of the checkout
# this script is in. Every argument is passed on after --lead-horizon-ms 0.
set -euo pipefail
admin=${CRONWHEEL_ADMIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/bin/cronwheel-admin}
[ -x "$admin" ] || { echo "admin_lead_each_second.sh: no $admin: build cronwheel-admin or set CRONWHEEL_ADMIN" >&2; exit 2; }
exec "$admin" --lead-horizon-ms 0 "$@"
