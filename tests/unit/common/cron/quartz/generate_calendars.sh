#!/usr/bin/env bash
# Regenerates ../testdata/quartz_calendar_cases.txt, the golden data quartz_calendar_test.cpp
# compares common/cron/business_calendar against, from the real Quartz 2.3.2.
#
# What it writes: twenty-five calendars, each one CalendarSpec beside the Quartz chain of
# HolidayCalendar, WeeklyCalendar, DailyCalendar and AnnualCalendar that means the same (in
# UTC, America/New_York, Europe/Berlin, Australia/Sydney and Asia/Shanghai, the last in 1988
# when it still had daylight saving); for each, isTimeIncluded around day boundaries, range
# ends +-1 ms and the zone's transitions, and the first 10 fire times of CronTriggers (some in
# another zone than the calendar's) with the calendar, as TriggerUtils.computeFireTimes gives
# them. Instants where DailyCalendar and cronwheel's wall-time ranges differ on purpose are
# written as "quirk" lines. QuartzCalendarOracle.java says how the two models map; the file's
# header explains the format.
#
# When to re-run: after changing the cases in QuartzCalendarOracle.java. The output is
# deterministic; commit it. Tests never need Java.
#
# Needs (this script installs nothing): Java 11+ (javac, java) and Quartz 2.3.2, Debian's
# libquartz2-java (apt-get install libquartz2-java), by default /usr/share/java/quartz2.jar;
# override with QUARTZ_JAR. slf4j-api is added when present.
#
# Time zone data: Java uses its own bundled tzdb while cronwheel reads the system's
# (/usr/share/zoneinfo). The five zones used here have identical transitions 1980-2040 in
# OpenJDK 17.0.15's tzdb 2025a and Debian 12's tzdata 2025b, which is what the file was
# generated and checked with. If a later tzdata changes one of these zones' rules, cases of the
# changed years will fail: regenerate with a Java whose tzdb matches, or move the cases to years
# the change does not touch. Do not add zones whose rules changed recently without comparing
# both databases (e.g. Java's ZoneRules.nextTransition against `zdump -v`).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
quartz_jar="${QUARTZ_JAR:-/usr/share/java/quartz2.jar}"
if [[ ! -f "$quartz_jar" ]]; then
  echo "Quartz 2.3.2 not found at $quartz_jar: apt-get install libquartz2-java, or set QUARTZ_JAR" >&2
  exit 1
fi
classpath="$quartz_jar"
if [[ -f /usr/share/java/slf4j-api.jar ]]; then
  classpath="$classpath:/usr/share/java/slf4j-api.jar"
fi

build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT

javac -d "$build" -cp "$classpath" "$here/QuartzCalendarOracle.java"
java -cp "$build:$classpath" QuartzCalendarOracle "$here/../testdata/quartz_calendar_cases.txt"
