#!/bin/sh
# CXX_COMPILER_LAUNCHER of the HTTP engine servers: runs the compile command given after the
# log file's name and appends "<object file> <seconds>" to that file (compare.sh reads it).
log=$1
shift
object=
previous=
for argument in "$@"; do
  [ "$previous" = "-o" ] && object=$argument
  previous=$argument
done
start=$(date +%s.%N)
"$@"
status=$?
end=$(date +%s.%N)
[ $status -eq 0 ] && awk -v o="$object" -v s="$start" -v e="$end" 'BEGIN { printf "%s %.2f\n", o, e - s }' >> "$log"
exit $status
