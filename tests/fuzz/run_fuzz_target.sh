#!/usr/bin/env bash
# run_fuzz_target.sh BINARY SEEDS DICT WORKDIR
# Runs one libFuzzer target the way scripts/test.sh does (the ctest tests fuzz.*):
#   CRONWHEEL_FUZZ_SECONDS (default 20) seconds of fuzzing, starting from the seed corpus SEEDS
#   (in the repository, never written) and the inputs WORKDIR/corpus kept from earlier runs;
#   CRONWHEEL_FUZZ_SECONDS=0 only replays the seeds, as a regression test.
# Fails (libFuzzer's exit status) on a crash, a violated property, an uncaught exception, a
# leak, an input slower than 10 s or more than 2 GB of memory; the input is saved in
# WORKDIR/artifacts and printed in the log.
set -euo pipefail
binary=$1 seeds=$2 dict=$3 work=$4
seconds=${CRONWHEEL_FUZZ_SECONDS:-20}

mkdir -p "$work/corpus" "$work/artifacts"
options=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/" -print_final_stats=1)
if [ -f "$dict" ]; then options+=(-dict="$dict"); fi
# Symbolized stack traces when llvm-symbolizer is installed (Debian: llvm-14).
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/bin/llvm-symbolizer-14 ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer-14
fi

if [ "$seconds" = 0 ]; then
  exec "$binary" "${options[@]}" -runs=0 "$seeds"
fi
exec "$binary" "${options[@]}" -max_total_time="$seconds" "$work/corpus" "$seeds"
