#!/usr/bin/env python3
"""Checks docs/jobs-file.schema.json against the YAML examples in the docs.

Every ```yaml block with a `groups:` key in docs/*.md and README.md must be valid under the
schema, and a few files that break it must be refused (so the check can fail). Run by ctest
(label unit) with the source directory as the argument; Debian's python3-yaml and
python3-jsonschema."""
import glob
import json
import os
import re
import sys

import jsonschema
import yaml

source = sys.argv[1]
schema = json.load(open(os.path.join(source, "docs", "jobs-file.schema.json")))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

failures = 0
examples = 0
for path in sorted(glob.glob(os.path.join(source, "docs", "*.md")) + [os.path.join(source, "README.md")]):
    text = open(path, encoding="utf-8").read()
    for block in re.findall(r"```yaml\n(.*?)```", text, re.S):
        if "groups:" not in block:
            continue
        examples += 1
        for error in validator.iter_errors(yaml.safe_load(block)):
            failures += 1
            print(f"{os.path.relpath(path, source)}: {'/'.join(map(str, error.absolute_path))}: {error.message}")

refused = [
    "groups: [{appName: ab}]",                                            # app name too short
    "groups: [{appName: billing, jobs: {Nightly: {jobDesc: x}}}]",        # upper-case job name
    "groups: [{appName: billing, jobs: {a: {author: x}}}]",               # no jobDesc
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, schedule: CRON}}}]",  # unknown key
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, glueSource: y, scriptFile: z}}}]",
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, executorTimeout: -1}}}]",
    "groups: [{appName: billing, workflows: {etl: {description: x}}}]",                  # no nodes
    "groups: [{appName: billing, workflows: {etl: {nodes: {a: {after: [b]}}}}}]",          # a node without its job
    "groups: [{appName: billing, workflows: {etl: {nodes: {a: {job: x}}, edges: []}}}]",   # edges are nodes' after
    "groups: [{appName: billing, workflows: {etl: {scheduleType: FIX_DELAY, nodes: {a: {job: x}}}}}]",
    "groups: [{appName: billing, workflows: {etl: {nodes: {1a: {job: x}}}}}]",             # a node key starts with a letter
    "calendars: [{description: x}]\ngroups: []",                                            # a calendar without its name
    "calendars: [{name: cn, excludedDates: [{date: '2026-13-01'}]}]\ngroups: []",           # no 13th month
    "calendars: [{name: cn, excludedTimes: [{start: '9:00', end: '10:00'}]}]\ngroups: []",  # HH:MM
    "calendars: [{name: cn, businessDays: [Monday]}]\ngroups: []",
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, calendar: cn, calendarMode: ONLY}}}]",
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, calendarMode: only}}}]",            # a mode without its calendar
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, dstGap: fire_after}}}]",            # a DST policy is a CRON job's
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, scheduleType: FIX_RATE, dstRepeat: both}}}]",
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, scheduleType: CRON, dstGap: FIRE_AFTER}}}]",  # lower case
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, retryMultiplier: 3}}}]",              # an exponential back-off's
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, retryBackoff: fixed, retryMaxInterval: 60}}}]",
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, retryBackoff: EXPONENTIAL}}}]",       # lower case
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, retryBackoff: exponential, retryMultiplier: 11}}}]",
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, priority: 1001}}}]",
    "groups: [{appName: billing, jobs: {a: {jobDesc: x, maxConcurrent: -1}}}]",
    "groups: [{appName: billing, maxRunning: 10001}]",
]
for bad in refused:
    if validator.is_valid(yaml.safe_load(bad)):
        failures += 1
        print(f"the schema accepts what the format refuses: {bad}")

if examples == 0:
    print("no examples found")
    failures += 1
print(f"{examples} examples checked, {failures} problems")
sys.exit(1 if failures else 0)
