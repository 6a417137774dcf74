#!/usr/bin/env bash
# Regenerates ../testdata/quartz_next_times.txt, the golden data the cron unit tests
# (quartz_golden_test.cpp) compare common/cron against, from the real Quartz 2.3.2.
#
# What it writes: for about a thousand (expression, zone, start instant) cases, the next 10
# fire times Quartz's CronExpression.getTimeAfter gives with setTimeZone(zone), covering every
# construct of the dialect, the daylight-saving transitions of 2024-2027 (and some in 2040)
# in zones of both hemispheres and with 30/45-minute offsets, leap days, year rollovers and
# seeded random expressions; then expressions Quartz refuses ("reject") and expressions it
# accepts but cronwheel refuses on purpose ("lenient"). The file's header explains the format.
#
# When to re-run: after changing the cases in QuartzOracle.java, or to check a new Quartz
# version. The output is deterministic; commit it. Tests never need Java.
#
# Needs: Java 11+ (javac, java) and Quartz 2.3.2 (Debian: libquartz2-java), by default
# /usr/share/java/quartz2.jar; override with QUARTZ_JAR. slf4j-api is added when present.
#
# Time zone data: Java uses its own bundled tzdb while cronwheel reads the system's
# (/usr/share/zoneinfo). The zones used here (UTC, America/New_York, Europe/London,
# Europe/Berlin, Australia/Sydney, Australia/Lord_Howe, Asia/Kolkata, America/Sao_Paulo,
# Pacific/Chatham) have identical transitions 1990-2110 in OpenJDK 17.0.15's tzdb 2025a and
# Debian 12's tzdata 2025b, which is what the file was generated and checked with. If a later
# tzdata changes one of these zones' rules, golden cases for the changed years will fail:
# regenerate with a Java whose tzdb matches, or move the cases to years the change does not
# touch. Do not add zones whose rules changed recently without comparing both databases.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
quartz_jar="${QUARTZ_JAR:-/usr/share/java/quartz2.jar}"
classpath="$quartz_jar"
if [[ -f /usr/share/java/slf4j-api.jar ]]; then
  classpath="$classpath:/usr/share/java/slf4j-api.jar"
fi

build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT

javac -d "$build" -cp "$classpath" "$here/QuartzOracle.java"
java -cp "$build:$classpath" QuartzOracle "$here/../testdata/quartz_next_times.txt"
