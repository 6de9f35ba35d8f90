#!/bin/sh
# The test harness's log compiler: runs one test (its argv) and ends its
# log with "# test-time: N s", which .ci/run's summary table reads, so a
# test that grows slower shows where CI's output is read.  The exit code
# is the test's own.
start=$(date +%s)
"$@"
rc=$?
echo "# test-time: $(($(date +%s) - start)) s"
exit "$rc"
