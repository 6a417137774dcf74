#!/usr/bin/env bash
# common/http's HttpServer (on Boost.Beast and Asio since the engine comparison chose them), a
# minimal Boost.Beast server and libmicrohttpd, measured RUNS times (docs/benchmarks.md):
# each run times the compile of each server's translation unit (touch, then cw-build of that
# target: compile_timer.sh records the compiler's own time) and then runs http_engine_load
# against the three with the build lock held, so that no build runs beside the load. Prints the
# medians and their ratios to the baseline as a Markdown table; the raw lines stay in the
# printed directory.
#
#   tests/bench/http_engines/compare.sh [--runs 3] [--seconds 5] [--hostile-seconds 10]
#
# Needs a build configured with -DCRONWHEEL_HTTP_ENGINE_BENCH=ON (libboost1.81-dev and
# libmicrohttpd-dev installed). Each run takes about 100 s of load plus three compiles.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${CRONWHEEL_BUILD_DIR:-$root/build}
lock=/tmp/cw-build.lock
runs=3
load_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --seconds|--hostile-seconds) load_args+=("$1" "$2"); shift 2 ;;
    *) echo "usage: $0 [--runs N] [--seconds S] [--hostile-seconds S]" >&2; exit 2 ;;
  esac
done

servers=(baseline:http_engine_cronwheel:cronwheel_server.cpp beast:http_engine_beast:beast_server.cpp
         mhd:http_engine_mhd:mhd_server.cpp)
compile_log=$build/tests/bench/http_engines/compile_times.txt
out=$(mktemp -d /tmp/http_engines.XXXXXX)
cw-build http_engine_cronwheel http_engine_beast http_engine_mhd http_engine_load > "$out/build.log"

for run in $(seq 1 "$runs"); do
  for server in "${servers[@]}"; do
    IFS=: read -r name target source <<< "$server"
    touch "$here/$source"
    : > "$compile_log"
    cw-build "$target" >> "$out/build.log"
    seconds=$(awk -v s="$source" 'index($1, s ".o") { t = $2 } END { print t }' "$compile_log")
    echo "COMPILE $name $seconds" | tee -a "$out/results.txt"
  done
  # What the baseline's one file does not show: the files of common/http's server, compiled with
  # their build commands (output discarded), lock held.
  flock "$lock" python3 - "$build/compile_commands.json" <<'PYTHON' | tee -a "$out/results.txt"
import json, re, shlex, subprocess, sys, time
files = ("http_server.cpp", "request_head.cpp", "worker_pool.cpp")
total = 0.0
for entry in json.load(open(sys.argv[1])):
    if not re.search(r"/common/http/(%s)$" % "|".join(map(re.escape, files)), entry["file"]):
        continue
    command = shlex.split(entry["command"])
    command[command.index("-o") + 1] = "/dev/null"
    started = time.monotonic()
    subprocess.run(command, cwd=entry["directory"], check=True)
    total += time.monotonic() - started
print(f"COMPILE_SERVER_FILES baseline {total:.2f}")
PYTHON
  # Each run starts with another server, so that no engine always meets the same moment of a
  # shared machine's background load.
  load=("$build/bin/http_engine_load" "${load_args[@]}")
  for i in "${!servers[@]}"; do
    IFS=: read -r name target source <<< "${servers[$(( (i + run - 1) % ${#servers[@]} ))]}"
    load+=(--server "$name=$build/bin/$target")
  done
  echo "run $run of $runs: $(date -u +%H:%M:%S)" >&2
  flock "$lock" "${load[@]}" | tee -a "$out/results.txt" | cut -c1-120 >&2
done

python3 - "$out/results.txt" <<'PYTHON'
import json, statistics, sys

compile_s, server_files_s, loads = {}, [], {}
for line in open(sys.argv[1]):
    kind, _, rest = line.strip().partition(" ")
    if kind == "COMPILE":
        name, seconds = rest.split()
        compile_s.setdefault(name, []).append(float(seconds))
    elif kind == "COMPILE_SERVER_FILES":
        server_files_s.append(float(rest.split()[1]))
    elif kind == "RESULT":
        result = json.loads(rest)
        loads.setdefault(result.pop("server"), []).append(result)

names = [n for n in ("baseline", "beast", "mhd") if n in loads]
def median(name, *path):
    values = []
    for result in loads[name]:
        for key in path:
            result = result[key]
        values.append(float(result))
    return statistics.median(values)

rows = [
    ("keep-alive, 1 connection: POST /run per s", ("keep_alive_1", "per_s"), "{:,.0f}"),
    ("keep-alive, 1 connection: p50 µs", ("keep_alive_1", "p50_us"), "{:.0f}"),
    ("keep-alive, 1 connection: p99 µs", ("keep_alive_1", "p99_us"), "{:.0f}"),
    ("keep-alive, 16 connections: POST /run per s", ("keep_alive_16", "per_s"), "{:,.0f}"),
    ("keep-alive, 16 connections: p50 µs", ("keep_alive_16", "p50_us"), "{:.0f}"),
    ("keep-alive, 16 connections: p99 µs", ("keep_alive_16", "p99_us"), "{:.0f}"),
    ("hostile: GET /healthz p50 ms", ("hostile", "healthz_p50_ms"), "{:.2f}"),
    ("hostile: GET /healthz p99 ms", ("hostile", "healthz_p99_ms"), "{:.2f}"),
    ("hostile: GET /healthz max ms", ("hostile", "healthz_max_ms"), "{:.2f}"),
    ("hostile: GET /healthz failed (of ~100)", ("hostile", "healthz_failed"), "{:.0f}"),
    ("hostile: peak RSS (VmHWM) MB", ("hostile", "hwm_kb"), "{:.1f}"),
    ("RSS at start MB", ("hostile", "rss_start_kb"), "{:.1f}"),
    ("hostile: server's open descriptors halfway", ("hostile", "open_descriptors"), "{:.0f}"),
    ("GET /slow answered in the window", ("hostile", "slow_ok"), "{:.0f}"),
    ("slowloris connections still open after 12 s (of 100)", ("hostile", "slowloris_open_after_12s"), "{:.0f}"),
    ("a newcomer from a full address (256 open): status", ("hostile", "full_address_newcomer_status"), "{:.0f}"),
]
header = "| | " + " | ".join(names) + " | " + " | ".join(f"{n} / {names[0]}" for n in names[1:]) + " |"
print(header)
print("|---|" + "---:|" * (2 * len(names) - 1))
def row(label, values, fmt, ratio=True):
    cells = [fmt.format(v) for v in values]
    ratios = [(f"{v / values[0]:.2f}" if ratio and values[0] else "") for v in values[1:]]
    print(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
for label, path, fmt in rows:
    values = [median(n, *path) for n in names]
    if path[-1].endswith("_kb"):
        values = [v / 1024 for v in values]
    ratio = not path[-1].startswith(("healthz_failed", "slowloris", "full_address", "slow_ok", "open_"))
    row(label, values, fmt, ratio)
row("compile of the server's translation unit, s", [statistics.median(compile_s[n]) for n in names], "{:.1f}")
if server_files_s:
    blank = " | ".join("" for _ in names[1:])
    print(f"| compile of common/http's server files (server, head, pool), s | "
          f"{statistics.median(server_files_s):.1f} | {blank} | {blank} |")
print(f"\nmedians of {len(loads[names[0]])} runs; raw lines in {sys.argv[1]}")
PYTHON
