#!/bin/sh
# The guest programs on the host: klab-agent in --test mode (records, exit
# statuses, timeouts, hostile output) and the usemem / will-it-scale output.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

: "${top_builddir:=${KLAB_BUILDDIR:-.}}"
: "${KLAB_AGENT:=$top_builddir/guests/agent/klab-agent}"
: "${KLAB_USEMEM:=$top_builddir/guests/bench/usemem}"
: "${KLAB_WIS:=$top_builddir/guests/bench/will-it-scale}"
: "${KLAB_KBUILD:=$top_builddir/guests/bench/kbuild-run}"
: "${KLAB_VMS:=$top_builddir/guests/bench/vm-scalability}"
: "${KLAB_REPEAT:=$top_builddir/guests/bench/repeat}"
: "${KLAB_NETPERF:=$top_builddir/guests/bench/klab-netperf}"

# TAP-style numbered lines, counted the way lib.sh's finish expects
ok() { checks=$((checks + 1)); echo "ok $checks - $*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "not ok $checks - $*"; }

for prog in "$KLAB_AGENT" "$KLAB_USEMEM" "$KLAB_WIS" "$KLAB_KBUILD" "$KLAB_VMS" "$KLAB_REPEAT" "$KLAB_NETPERF"; do
	if [ ! -x "$prog" ]; then
		echo "not ok - $prog is not built (set top_builddir or KLAB_AGENT/KLAB_USEMEM/KLAB_WIS)"
		exit 1
	fi
done

# agent NAME: job.conf from stdin; records in $T/NAME.out, log in
# $T/NAME.err, the wall time in seconds in $elapsed
agent() {
	cat > "$T/$1.conf"
	t0=$(date +%s)
	"$KLAB_AGENT" --test --conf "$T/$1.conf" --out "$T/$1.out" 2> "$T/$1.err"
	rc=$?
	elapsed=$(($(date +%s) - t0))
}

# has NAME LINE: the records contain exactly that line
has() { grep -qxF "$2" "$T/$1.out"; }

# The record types in order, one mon line per phase: the shape of a run.
shape() {
	awk '{ t = $2; if (t == "mon") t = t "-" $3; if (t != last) printf "%s%s", sep, t; last = t; sep = " " }' "$T/$1.out"
}

# ---- the agent -------------------------------------------------------------

agent echo <<EOF
version 1
name echo-test
timeout 10
argv /bin/echo
argv hello
EOF
check "agent --test exits 0 after a clean run" test "$rc" -eq 0
s=$(shape echo)
if [ "$s" = "hello env mon-before start out exit mon-after done" ]; then
	ok "records come in protocol order"
else
	fail "record order: $s"
fi
check "hello carries the agent version" has echo "KLAB1 hello 1"
check "the output line is forwarded" has echo "KLAB1 out hello"
check "exit exited 0" has echo "KLAB1 exit exited 0"
check "done 1" has echo "KLAB1 done 1"
for key in kernel cpus numa_nodes mem_total_kb cmdline; do
	check "env $key sent" grep -q "^KLAB1 env $key " "$T/echo.out"
done
check "mon before has vmstat, meminfo and stat" \
	sh -c "grep -q '^KLAB1 mon before vmstat [a-z_0-9]* [0-9][0-9]*\$' '$T/echo.out' &&
	       grep -q '^KLAB1 mon before meminfo MemTotal [0-9][0-9]*\$' '$T/echo.out' &&
	       grep -q '^KLAB1 mon before stat cpu.user [0-9][0-9]*\$' '$T/echo.out' &&
	       grep -q '^KLAB1 mon before stat processes [0-9][0-9]*\$' '$T/echo.out'"
check "mon after has interrupts and softirqs per CPU and summed, LKP's names" \
	sh -c "grep -q '^KLAB1 mon after interrupts CPU0.LOC:Local_timer_interrupts [0-9][0-9]*\$' '$T/echo.out' &&
	       grep -q '^KLAB1 mon after interrupts LOC:Local_timer_interrupts [0-9][0-9]*\$' '$T/echo.out' &&
	       grep -q '^KLAB1 mon after softirqs CPU0.TIMER [0-9][0-9]*\$' '$T/echo.out' &&
	       grep -q '^KLAB1 mon after stat cpu0.user [0-9][0-9]*\$' '$T/echo.out'"
if [ -r /sys/devices/system/node/node0/meminfo ]; then
	check "mon before has numa-meminfo per node" grep -q '^KLAB1 mon before numa-meminfo node0.MemTotal [0-9][0-9]*$' "$T/echo.out"
fi
check "start carries a unix time in ms" grep -q '^KLAB1 start [0-9]\{13\}$' "$T/echo.out"
check "the console log says started" grep -q '^klab-agent: started$' "$T/echo.err"

# a job that chooses its monitors: only those are read, and none is none
agent mon-some <<EOF
version 1
timeout 10
monitors meminfo interrupts
argv /bin/true
EOF
check "monitors meminfo interrupts: exit 0" test "$rc" -eq 0
check "monitors meminfo interrupts: only those two sources" \
	test "$(awk '$2 == "mon" { print $4 }' "$T/mon-some.out" | sort -u | tr '\n' ' ')" = "interrupts meminfo "
agent mon-none <<EOF
version 1
timeout 10
monitors none
argv /bin/true
EOF
check "monitors none: exit 0" test "$rc" -eq 0
check "monitors none: no mon record, and done" \
	sh -c "! grep -q '^KLAB1 mon ' '$T/mon-none.out' && grep -q '^KLAB1 done 1' '$T/mon-none.out'"
agent mon-twice <<EOF
version 1
timeout 10
monitors vmstat
monitors meminfo
argv /bin/true
EOF
check "two monitors lines: refused" test "$rc" -ne 0

# a swap disk: in --test mode the host's swap is left alone; a path that is
# not a device is refused
agent swap-test <<EOF
version 1
timeout 10
swap /dev/vda
argv /bin/true
EOF
check "swap line in --test mode: run goes on, swap not enabled" \
	sh -c "test $rc -eq 0 && grep -q 'test mode: swap on /dev/vda not enabled' '$T/swap-test.err'"
agent swap-bad <<EOF
version 1
timeout 10
swap /etc/passwd
argv /bin/true
EOF
check "swap on a path outside /dev: refused" test "$rc" -ne 0

# a scratch disk (a job's fs:): in --test mode no disk is touched; a line
# that is not "fs <serial> xfs|ext4|btrfs /klab/<dir>" is refused
agent fs-test <<EOF
version 1
timeout 10
fs klab-disk xfs /klab/disk
argv /bin/true
EOF
check "fs line in --test mode: run goes on, nothing made" \
	sh -c "test $rc -eq 0 && grep -q 'test mode: no xfs made on disk klab-disk' '$T/fs-test.err'"
for bad in "fs klab-disk zfs /klab/disk" "fs klab-disk xfs /etc" "fs KLAB xfs /klab/disk" "fs klab-disk xfs"; do
	printf 'version 1\ntimeout 10\n%s\nargv /bin/true\n' "$bad" > "$T/fs-bad.in"
	agent fs-bad < "$T/fs-bad.in"
	check "'$bad': refused" test "$rc" -ne 0
done

# 9p shares (a kbuild job's): in --test mode nothing is mounted on the
# host (what mounts in the guest is checked only there); the lines are
# checked all the same: a tag of [a-z0-9_], a directory under /klab/
mounts_before=$(wc -l < /proc/self/mountinfo)
agent share-test <<EOF
version 1
timeout 10
mount9p usr /klab/root/usr
mount9p src /klab/root/src
argv /bin/true
EOF
check "mount9p in --test mode: run goes on, nothing mounted" \
	sh -c "test $rc -eq 0 && grep -q 'test mode: 9p share usr not mounted on /klab/root/usr' '$T/share-test.err' &&
	       grep -q 'test mode: 9p share src not mounted on /klab/root/src' '$T/share-test.err'"
check "mount9p in --test mode: the host's mounts are as they were" \
	test "$(wc -l < /proc/self/mountinfo)" -eq "$mounts_before"
check "mount9p in --test mode: no /klab directory made on the host" test ! -e /klab/root/usr
for bad in "usr /usr" "usr /klab/../usr" "Usr /klab/root/usr" "u-s /klab/root/usr" "usr" \
	   "abcdefghijklmnopqrstuvwxyz012345 /klab/x" "usr /klab/root//usr" "usr /klab/root/usr extra"; do
	agent share-bad <<EOF
version 1
timeout 10
mount9p $bad
argv /bin/true
EOF
	check "mount9p '$bad': refused" sh -c "test $rc -ne 0 && grep -q \"expected 'mount9p <tag> /klab/<dir>'\" '$T/share-bad.out'"
done

agent exit3 <<EOF
version 1
timeout 10
argv /bin/sh
argv -c
argv exit 3
EOF
check "a benchmark's exit code is reported" has exit3 "KLAB1 exit exited 3"
check "a failing benchmark is not an agent failure" has exit3 "KLAB1 done 1"

agent signal <<EOF
version 1
timeout 10
argv /bin/sh
argv -c
argv kill -9 \$\$
EOF
check "a killed benchmark is signaled 9" has signal "KLAB1 exit signaled 9"

agent noexec <<EOF
version 1
timeout 10
argv /nonexistent/klab-benchmark
EOF
check "a missing program is exec-failed ENOENT" has noexec "KLAB1 exit exec-failed 2"
check "exec-failed still ends with done 1" has noexec "KLAB1 done 1"

agent timeout <<EOF
version 1
timeout 2
argv sleep
argv 100
EOF
check "the timeout kills the benchmark" has timeout "KLAB1 exit timeout 0"
check "the timeout run ends with done 1" has timeout "KLAB1 done 1"
check "the timeout is kept (took ${elapsed}s)" test "$elapsed" -le 5

agent junk <<'EOF'
version 1
timeout 10
argv /bin/sh
argv -c
argv head -c 10000 /dev/zero | tr '\0' a; echo; printf 'tab\tcr\resc\033[1mdel\177nul\000end\n'; head -c 4000 /dev/urandom
EOF
check "junk run ends with done 1" has junk "KLAB1 done 1"
long=$(LC_ALL=C awk 'length($0) >= 4096 { n++ } END { print n + 0 }' "$T/junk.out")
check "no record is longer than 4096 bytes" test "$long" -eq 0
ctl=$(LC_ALL=C tr -d '\n\040-\176\200-\377' < "$T/junk.out" | wc -c)
check "no control characters in the records" test "$ctl" -eq 0
as=$(grep '^KLAB1 out aaaa' "$T/junk.out" | LC_ALL=C awk '{ n += length($3) } END { print n + 0 }')
check "a 10000-byte line is split, not cut ($as bytes)" test "$as" -eq 10000
check "control characters become '?'" has junk "KLAB1 out tab?cr?esc?[1mdel?nul?end"

agent background <<EOF
version 1
timeout 30
argv /bin/sh
argv -c
argv sleep 100 & echo \$! > $T/background.pid; echo x
EOF
check "a child holding the pipe does not hold the agent (took ${elapsed}s)" test "$elapsed" -le 4
check "its output still arrives" has background "KLAB1 out x"
check "its exit is the shell's" has background "KLAB1 exit exited 0"
if [ -s "$T/background.pid" ] && ! kill -0 "$(cat "$T/background.pid")" 2>/dev/null; then
	ok "the leftover child was killed"
else
	fail "the leftover child is still running"
	kill "$(cat "$T/background.pid")" 2>/dev/null
fi

agent unknown <<EOF
version 1
timeout 10
frobnicate 7
argv /bin/true
EOF
check "an unknown key is a warning" grep -q "^KLAB1 warn .*unknown key 'frobnicate'" "$T/unknown.out"
check "an unknown key does not stop the run" has unknown "KLAB1 exit exited 0"

agent badsetting <<EOF
version 1
timeout 10
sysfs /sys/klab-test-nonexistent/knob 1
argv /bin/true
EOF
check "a setting that cannot be applied is a warning" \
	grep -q '^KLAB1 warn .*/sys/klab-test-nonexistent/knob' "$T/badsetting.out"
check "... and done 0" has badsetting "KLAB1 done 0"
check "... without running the benchmark" sh -c "! grep -q '^KLAB1 start' '$T/badsetting.out'"
check "agent --test exits 1 after done 0" test "$rc" -eq 1

agent badconf <<EOF
version 1
timeout soon
argv /bin/true
EOF
check "a malformed value is refused with done 0" has badconf "KLAB1 done 0"

agent monitor <<EOF
version 1
timeout 10
monitor_interval 1
argv sleep
argv 1.5
EOF
check "monitor_interval samples vmstat during the run" grep -q '^KLAB1 mon t1 vmstat ' "$T/monitor.out"
check "monitor_interval samples meminfo during the run" grep -q '^KLAB1 mon t1 meminfo MemFree ' "$T/monitor.out"
check "monitor_interval does not sample interrupts (before/after only)" sh -c "! grep -q '^KLAB1 mon t1 interrupts ' '$T/monitor.out'"

# perf-profile: perf record around the benchmark, perf report reduced to
# LKP's rows; only when the job names it
check "the default monitors send no profile" \
	sh -c "! grep -q '^KLAB1 mon [a-z0-9]* perf-profile ' '$T/echo.out' && ! grep -q '^KLAB1 env perf_event ' '$T/echo.out'"
if [ ! -x /usr/bin/perf ]; then
	echo "# SKIP perf-profile checks: no /usr/bin/perf (the Debian package linux-perf)"
elif ! /usr/bin/perf record -q -a -g -e cpu-clock -o "$T/probe.data" -- true > "$T/probe.log" 2>&1; then
	echo "# SKIP perf-profile checks: perf cannot record system-wide here: $(head -n 1 "$T/probe.log")"
else
	# malloc1: mmap, touch, munmap, so kernel call chains with symbols
	agent profile <<EOF
version 1
timeout 60
monitors perf-profile
argv $KLAB_WIS
argv --test
argv malloc1
argv --tasks
argv 1
argv --runtime
argv 1
argv --warmup
argv 0
EOF
	check "perf-profile: exit 0 and done 1" sh -c "test $rc -eq 0 && grep -qx 'KLAB1 done 1' '$T/profile.out'"
	check "perf-profile: the event is said" grep -Eqx 'KLAB1 env perf_event (cycles|cpu-clock)' "$T/profile.out"
	check "perf-profile: no warning" sh -c "! grep '^KLAB1 warn' '$T/profile.out'"
	for kind in self children calltrace; do
		n=$(grep -c "^KLAB1 mon after perf-profile $kind\.cycles-pp\." "$T/profile.out")
		check "perf-profile: $n $kind rows, 1 to 50" test "$n" -ge 1 -a "$n" -le 50
	done
	bad=$(awk '$2 == "mon" && $4 == "perf-profile" &&
		!($3 == "after" && $5 ~ /^(self|children|calltrace)\.cycles-pp\.[A-Za-z0-9_.:+()\/-]+$/ &&
		  length($5) <= 120 && $6 ~ /^[0-9]+\.[0-9][0-9]$/ && $6 >= 0.5 && $6 <= 100 && NF == 6)' "$T/profile.out")
	check "perf-profile: every row a name the host takes, 0.5 to 100 %" test -z "$bad"
	check "perf-profile: a call trace has a caller" \
		grep -q '^KLAB1 mon after perf-profile calltrace\.cycles-pp\.[^.]*\.' "$T/profile.out"
	check "perf-profile: the benchmark's munmap is in the profile" \
		grep -q '^KLAB1 mon after perf-profile children\.cycles-pp\.__x64_sys_munmap ' "$T/profile.out"
	check "perf-profile: only the monitors named" \
		test "$(awk '$2 == "mon" { print $4 }' "$T/profile.out" | sort -u)" = perf-profile
	first=$(grep -n -m 1 ' perf-profile ' "$T/profile.out" | cut -d: -f1)
	exit_at=$(grep -n '^KLAB1 exit ' "$T/profile.out" | cut -d: -f1)
	check "perf-profile: the rows come after the benchmark's exit" test "${first:-0}" -gt "${exit_at:-0}"
	check "perf-profile: its data is removed" test ! -e "$T/profile.out.perf.data"
	check "perf-profile: the run took ${elapsed}s" test "$elapsed" -le 30
	agent both <<'EOF'
version 1
timeout 30
monitors vmstat perf-profile
argv /bin/true
EOF
	check "perf-profile beside vmstat: vmstat before and after, and the event" \
		sh -c "grep -q '^KLAB1 mon before vmstat ' '$T/both.out' && grep -q '^KLAB1 mon after vmstat ' '$T/both.out' &&
		       grep -q '^KLAB1 env perf_event ' '$T/both.out' && grep -qx 'KLAB1 done 1' '$T/both.out'"
fi

# ---- usemem ----------------------------------------------------------------

out=$("$KLAB_USEMEM" -n 2 --runtime 1 16m); rc=$?
check "usemem -n 2 exits 0" test "$rc" -eq 0
n=$(printf '%s\n' "$out" | grep -c '^[1-9][0-9]* bytes / [1-9][0-9]* usecs = [1-9][0-9]* KB/s$')
check "usemem -n 2 prints two result lines" test "$n" -eq 2 -a "$(printf '%s\n' "$out" | wc -l)" -eq 2
out=$("$KLAB_USEMEM" -t 2 8m); rc=$?
check "usemem -t 2 prints one line per thread (each a task, as vm-scalability's)" \
	test "$rc" -eq 0 -a "$(printf '%s\n' "$out" | grep -c ' KB/s$')" -eq 2
# the options vm-scalability's cases use, each task on its own line
truncate -s 16m "$T/sparse"
for args in "-n 2 --readonly --random 8m" "-t 2 --prealloc --prefault 8m" "-n 2 --prealloc --prefault --random 8m" \
	    "-t 2 -f $T/sparse --readonly 8m" "-t 2 -f $T/sparse --prealloc --remap --readonly --random 8m" \
	    "-n 2 -f $T/sparse --prealloc --prefault --open-rw --msync 8m" "-n 2 --readonly --unit 40k 4m"; do
	# shellcheck disable=SC2086
	out=$("$KLAB_USEMEM" $args); rc=$?
	check "usemem $args: exit 0, a line a task" \
		test "$rc" -eq 0 -a "$(printf '%s\n' "$out" | grep -c '^[1-9][0-9]* bytes / [1-9][0-9]* usecs = [0-9]* KB/s$')" -eq 2
done
for args in "" "16x" "-n 0 16m" "--runtime x 16m" "16m 16m" "0" "--remap 8m" "-f $T/sparse --hugetlb 8m"; do
	# shellcheck disable=SC2086
	"$KLAB_USEMEM" $args >/dev/null 2>&1
	check "usemem refuses '$args'" test $? -ne 0
done

# ---- will-it-scale ---------------------------------------------------------

for mode in process thread; do
	out=$("$KLAB_WIS" --test malloc1 --mode $mode --tasks 2 --runtime 2 --warmup 1); rc=$?
	check "will-it-scale $mode exits 0" test "$rc" -eq 0
	check "will-it-scale $mode names the run" test "$(printf '%s\n' "$out" | head -n 1)" = \
		"will-it-scale: testcase=malloc1 mode=$mode tasks=2 warmup=1 runtime=2"
	check "will-it-scale $mode warms up" test "$(printf '%s\n' "$out" | grep -c '^warmup:1 total:[0-9]*$')" -eq 1
	n=$(printf '%s\n' "$out" | grep -c '^second:[12] min:[1-9][0-9]* max:[1-9][0-9]* total:[1-9][0-9]*$')
	check "will-it-scale $mode prints two measured seconds" test "$n" -eq 2
	check "will-it-scale $mode average > 0" sh -c "printf '%s\n' '$out' | grep -q '^average:[1-9][0-9]*\$'"
	check "will-it-scale $mode per_task_average > 0" \
		sh -c "printf '%s\n' '$out' | grep -q '^per_task_average:[1-9][0-9]*\$'"
done
# testcases of each kind in both modes: a helper task (context_switch1),
# the program break (brk1), a shared file (pread2), the open file limit
# (poll2), signals
out=$("$KLAB_WIS" --test context_switch1 --test brk1 --test pread2 --test poll2 --test signal1 --mode both \
	--tasks 2 --runtime 1 --warmup 0); rc=$?
check "will-it-scale: five testcases in both modes exit 0" test "$rc" -eq 0
check "will-it-scale: a section and a positive per-task figure for each" \
	test "$(printf '%s\n' "$out" | grep -c '^will-it-scale: testcase=[a-z0-9_]* mode=[a-z]* ')" -eq 10 -a \
	     "$(printf '%s\n' "$out" | grep -c '^per_task_average:[1-9][0-9]*$')" -eq 10
check "will-it-scale: the tests leave no file behind" test -z "$(ls /tmp/willitscale.* 2>/dev/null)"
check "will-it-scale --list names every testcase of LKP's jobs (60)" test "$("$KLAB_WIS" --list | wc -l)" -eq 60
"$KLAB_WIS" --test nosuch --tasks 1 >/dev/null 2>&1
check "will-it-scale refuses an unknown test with 2" test $? -eq 2
"$KLAB_WIS" --test malloc1 --tasks 1 --mode fork >/dev/null 2>&1
check "will-it-scale refuses an unknown mode with 2" test $? -eq 2

# ---- vm-scalability, repeat, klab-netperf -----------------------------------
# The cases on the host with their sizes cut down (the host's memory is
# not a guest's): runs after "./case-NAME" lines, usemem's lines in them.

mkdir -p "$T/sparse-root" "$T/shm"
usemem_abs=$(cd "$(dirname "$KLAB_USEMEM")" && pwd)/usemem
for c in anon-w-seq anon-cow-seq-mt anon-r-rand-mt lru-file-readtwice mmap-pread-seq msync-mt small-allocs; do
	out=$("$KLAB_VMS" --case $c --tasks 2 --runtime 1 --usemem "$usemem_abs" \
		--sparse-dir "$T/sparse-root" --shm-dir "$T/shm" --unit-size 16777216 --task-size 8388608); rc=$?
	check "vm-scalability $c: exit 0, runs and their tasks' lines" \
		test "$rc" -eq 0 -a "$(printf '%s\n' "$out" | grep -c "^./case-$c\$")" -ge 1 -a \
		     "$(printf '%s\n' "$out" | grep -c ' bytes / [0-9]* usecs = [0-9]* KB/s$')" -ge 1
done
out=$("$KLAB_VMS" --case truncate-seq --tasks 2 --runtime 1 --sparse-dir "$T/sparse-root"); rc=$?
check "vm-scalability truncate-seq: faulted and truncated" \
	sh -c "[ $rc -eq 0 ] && printf '%s\n' '$out' | grep -q '^faulted: ' && printf '%s\n' '$out' | grep -q '^truncated: '"
check "vm-scalability: no sparse file left" test -z "$(ls "$T/sparse-root")"
"$KLAB_VMS" --case migrate --tasks 1 >/dev/null 2>&1
check "vm-scalability refuses a case it does not have with 2" test $? -eq 2
check "vm-scalability --list: the cases of LKP's jobs (51)" test "$("$KLAB_VMS" --list | wc -l)" -eq 51

out=$("$KLAB_REPEAT" --iterations 3 -- echo run); rc=$?
check "repeat --iterations 3: three runs, each after its Iterations line" \
	test "$rc" -eq 0 -a "$(printf '%s\n' "$out" | tr '\n' ' ')" = "Iterations: 1 run Iterations: 2 run Iterations: 3 run "
t0=$(date +%s)
"$KLAB_REPEAT" --runtime 2 -- sleep 0.5 >/dev/null; rc=$?
check "repeat --runtime 2: runs until 2 s have passed" test "$rc" -eq 0 -a $(($(date +%s) - t0)) -ge 2
"$KLAB_REPEAT" --iterations 2 -- false >/dev/null 2>&1
check "repeat: a failing run ends it with 1" test $? -eq 1

for t in TCP_RR TCP_CRR TCP_STREAM UDP_RR UDP_STREAM; do
	out=$("$KLAB_NETPERF" --test $t --clients 2 --runtime 1); rc=$?
	check "klab-netperf $t: exit 0, says it is not netperf, a line a client" \
		test "$rc" -eq 0 -a "$(printf '%s\n' "$out" | grep -c 'not netperf')" -eq 1 -a \
		     "$(printf '%s\n' "$out" | grep -c '^client:[01] elapsed:')" -eq 2
done
"$KLAB_NETPERF" --test SCTP_RR >/dev/null 2>&1
check "klab-netperf refuses a test it does not run with 2" test $? -eq 2

# ---- kbuild-run -------------------------------------------------------------
# Without --root it mounts nothing and runs make as told: a stand-in make
# here (a real build is the guest test's), so the timing, the iteration
# loop, the first error and the build timeout are checked on the host.

mkdir -p "$T/kb/src" "$T/kb/build"
cat > "$T/kb/make" <<'EOF'
#!/bin/sh
# a target builds only in a configured build directory that holds no
# earlier build's output (LKP's mrproper and config each iteration)
for a; do case $a in O=*) o=${a#O=} ;; esac; t=$a; done
case $t in
tinyconfig) mkdir -p "$o/include/config" && echo CONFIG_X=y > "$o/.config" ;;
broken/) echo "  CC broken/x.o"; echo "broken/x.c:3:1: error: expected ';' before '}' token" >&2; exit 2 ;;
slow/) sleep 30 ;;
*) [ -f "$o/.config" ] || { echo "stand-in make: not configured" >&2; exit 2; }
   [ ! -e "$o/mm/x.o" ] || { echo "stand-in make: an earlier build's output is there" >&2; exit 2; }
   mkdir -p "$o/mm" && : > "$o/mm/x.o"
   i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; echo "iteration:99 real=1 user=1 sys=1" ;;
esac
EOF
chmod +x "$T/kb/make"
kb() { "$KLAB_KBUILD" --src "$T/kb/src" --build "$T/kb/build" --make "$T/kb/make" --config tinyconfig --jobs 2 "$@"; }
out=$(kb --target mm/ --runtime 1); rc=$?
check "kbuild-run exits 0" test "$rc" -eq 0
check "kbuild-run names the run" test "$(printf '%s\n' "$out" | head -n 1)" = "kbuild: config=tinyconfig target=mm/ jobs=2 runtime=1"
check "kbuild-run warms up once" test "$(printf '%s\n' "$out" | grep -c '^warmup: real=[0-9.]* user=[0-9.]* sys=[0-9.]*$')" -eq 1
n=$(printf '%s\n' "$out" | grep -c '^iteration:[1-9][0-9]* real=[0-9.]* user=[0-9.]* sys=[0-9.]*$')
check "kbuild-run builds until the runtime has passed" test "$n" -ge 1
check "kbuild-run counts its iterations" sh -c "printf '%s\n' '$out' | grep -qx 'iterations:$n'"
check "kbuild-run starts each iteration afresh: mrproper, then config" \
	test "$(printf '%s\n' "$out" | grep -c '^mrproper: real=[0-9.]*$'):$(printf '%s\n' "$out" | grep -c '^config: real=[0-9.]*$')" = "$n:$((n + 1))"
check "make's own lines are marked, never read as the runner's" sh -c "printf '%s\n' '$out' | grep -q '^| iteration:99 '"
out=$(kb --target mm/ --runtime 1 --no-warmup); rc=$?
check "kbuild-run --no-warmup exits 0" test "$rc" -eq 0
n=$(printf '%s\n' "$out" | grep -c '^iteration:[1-9][0-9]* real=[0-9.]* user=[0-9.]* sys=[0-9.]*$')
check "kbuild-run --no-warmup: no warm-up, each iteration mrproper, config, build" \
	test "$(printf '%s\n' "$out" | grep -c '^warmup:'):$n:$(printf '%s\n' "$out" | grep -c '^mrproper: real=[0-9.]*$'):$(printf '%s\n' "$out" | grep -c '^config: real=[0-9.]*$')" = "0:$n:$n:$n"
check "kbuild-run --no-warmup: at least one iteration" test "$n" -ge 1
out=$(kb --target broken/ --runtime 1); rc=$?
check "kbuild-run: a target that fails to build exits 1" test "$rc" -eq 1
case $out in
*"kbuild: first error: broken/x.c:3:1: error: expected ';' before '}' token"*) ok "kbuild-run: the compiler's first error is named" ;;
*) fail "kbuild-run: first error: $out" ;;
esac
t0=$(date +%s)
out=$(kb --target slow/ --runtime 1 --build-timeout 1); rc=$?
check "kbuild-run: a build past its timeout is killed, exit 1" test "$rc" -eq 1 -a $(($(date +%s) - t0)) -lt 10
case $out in
*"still running after 1 s, killed"*) ok "kbuild-run: the timeout is said" ;;
*) fail "kbuild-run: timeout: $out" ;;
esac
for args in "" "--config tinyconfig --target x --jobs 0 --runtime 1" "--config tinyconfig --target -x --jobs 1 --runtime 1" \
	    "--config tinyconfig --target x --jobs 1 --runtime x" "--config tinyconfig --target x --jobs 1 --runtime 1 extra"; do
	# shellcheck disable=SC2086
	"$KLAB_KBUILD" $args >/dev/null 2>&1
	check "kbuild-run refuses '$args' with 2" test $? -eq 2
done

# The guest's root for a build, on the host: in a private mount namespace
# (nothing of it reaches the host's mount table), the host's /usr, a
# stand-in tree and /etc/alternatives bind-mounted read-only as the agent's
# 9p mounts would be; kbuild-run --root adds proc, dev, tmpfs /tmp and
# /build and the merged-/usr links, chroots, and the host's sh, awk (a link
# into /etc/alternatives on Debian) and gcc must run there without /etc,
# while the tree stays unwritable.  Needs root and unshare(1).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 && [ -x /usr/bin/gcc ]; then
	mkdir -p "$T/kbsrc" "$T/kbroot"
	printf 'int f(int x) { return x * 2; }\n' > "$T/kbsrc/x.c"
	printf 'config X\n\tbool "x"\n' > "$T/kbsrc/Kconfig"
	cat > "$T/kbsrc/Makefile" <<'EOF'
O ?= .
tinyconfig:
	echo CONFIG_X=y > $(O)/.config
mm/:
	awk 'BEGIN { print "awk runs" }'
	gcc -O2 -c -o $(O)/x.o $(CURDIR)/x.c && echo "gcc runs"
	touch $(CURDIR)/written 2>/dev/null && echo "tree WRITABLE" || echo "tree read-only"
EOF
	cat > "$T/kbroot.sh" <<EOF
set -e
mount -t tmpfs tmpfs "$T/kbroot"
for d in usr src etc/alternatives; do mkdir -p "$T/kbroot/\$d"; done
mount --bind /usr "$T/kbroot/usr" && mount -o remount,bind,ro "$T/kbroot/usr"
mount --bind "$T/kbsrc" "$T/kbroot/src" && mount -o remount,bind,ro "$T/kbroot/src"
if [ -d /etc/alternatives ]; then
	mount --bind /etc/alternatives "$T/kbroot/etc/alternatives"
	mount -o remount,bind,ro "$T/kbroot/etc/alternatives"
fi
exec "$KLAB_KBUILD" --root "$T/kbroot" --config tinyconfig --target mm/ --jobs 2 --runtime 1 --build-timeout 60
EOF
	mounts_before=$(wc -l < /proc/self/mountinfo)
	out=$(unshare -m --propagation private sh "$T/kbroot.sh" 2>&1); rc=$?
	check "kbuild-run --root: builds in the chroot, exit 0" test "$rc" -eq 0
	for want in "| awk runs" "| gcc runs" "| tree read-only"; do
		case $out in
		*"$want"*) ok "kbuild-run --root: '$want'" ;;
		*) fail "kbuild-run --root: no '$want' in: $out" ;;
		esac
	done
	check "kbuild-run --root: the host's mounts are as they were" test "$(wc -l < /proc/self/mountinfo)" -eq "$mounts_before"
	check "kbuild-run --root: nothing written into the tree" test ! -e "$T/kbsrc/written"
else
	echo "# kbuild-run --root not checked: needs root, unshare(1) and gcc"
fi

finish
