#!/bin/sh
# The demo's test command, run by klab in its checkout of each commit:
# a commit that does not compile is skipped (125), a failing test is bad.
cc -O1 -o rbtest test.c ringbuf.c stats.c >build.log 2>&1 || exit 125
./rbtest
