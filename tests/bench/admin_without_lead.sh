#!/usr/bin/env bash
# cronwheel-admin with lead dispatch turned off: every fire is posted to /run at its instant.
# For tests/bench/fire_load.sh, to measure the per-fire path beside lead dispatch in the same
# run (its header says how):
#
#   tests/bench/fire_load.sh --admin perfire=tests/bench/admin_without_lead.sh \
#       --admin lead=build/bin/cronwheel-admin -- --executor-lead true
#
# The admin binary is $CRONWHEEL_ADMIN when set, else build/bin/cronwheel-admin of the checkout
# this script is in. Every argument is passed on after --lead-dispatch false.
set -euo pipefail
admin=${CRONWHEEL_ADMIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/bin/cronwheel-admin}
[ -x "$admin" ] || { echo "admin_without_lead.sh: no $admin: build cronwheel-admin or set CRONWHEEL_ADMIN" >&2; exit 2; }
exec "$admin" --lead-dispatch false "$@"
