#!/bin/sh
# Build klab's parser fuzzers with clang's libFuzzer and sanitizers, run
# each one's seed corpus and test data through it, then fuzz each for
# KLAB_FUZZ_SECONDS (default 20).  The targets:
#   resultproto  the result channel (what a hostile guest writes)
#   job          the job file parser (YAML bytes)
#   labconf      klab.conf
#   jobconf      the agent's job.conf reader (what the host writes)
#   lkp          LKP regression reports and lkp-tests job files (lkp.c)
#   perfprof     the agent's perf report parser (what a hostile guest's perf prints)
#   ksources     kbuild's .cmd files and sources.txt (a kernel's source set, ksources.c)
#   icecclog     icecc's client log of a build (where compiles went, icecc-log.c)
#   options      the command line (util/parse-options.c: argv, and synopsis forms)
# Exit 0 when nothing crashed, 1 when something did (the input is kept and
# a command to replay it printed), 77 only when clang with libFuzzer is not
# available here.
#
#   tests/fuzz/run-fuzz.sh [SOURCE-DIR [BUILD-DIR]]
#
# Without arguments the directories come from KLAB_SRCDIR / KLAB_BUILDDIR
# (make check sets them), else from where this script lives.
# Other knobs: CLANG (compiler), KLAB_FUZZ_SEED (libFuzzer -seed),
# KLAB_FUZZ_JOBS (parallel fuzzing processes, default 1), KLAB_FUZZ_TARGETS
# (a space-separated subset of the targets above, default all).
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=${1:-${KLAB_SRCDIR:-$here/../..}}
build=${2:-${KLAB_BUILDDIR:-$src}}
secs=${KLAB_FUZZ_SECONDS:-20}
jobs=${KLAB_FUZZ_JOBS:-1}
targets=${KLAB_FUZZ_TARGETS:-resultproto job labconf jobconf lkp perfprof ksources icecclog options}
src=$(cd "$src" && pwd) || exit 1
mkdir -p "$build/tests/fuzz/run" || exit 1
build=$(cd "$build" && pwd)
# everything this script makes, apart from the sources (srcdir may be builddir)
out=$build/tests/fuzz/run

case $secs in
''|*[!0-9]*) echo "run-fuzz: KLAB_FUZZ_SECONDS must be a number of seconds, not '$secs'" >&2; exit 1 ;;
esac

skip() {
	echo "run-fuzz: SKIP: $*" >&2
	exit 77
}

# ---- is libFuzzer here at all? (the only reasons to skip) -------------------
cc=${CLANG:-}
if [ -z "$cc" ]; then
	for c in clang clang-18 clang-17 clang-16 clang-15 clang-14; do
		if command -v "$c" >/dev/null 2>&1; then
			cc=$c
			break
		fi
	done
fi
[ -n "$cc" ] || skip "no clang found (libFuzzer comes with clang; on Debian: apt install clang libclang-rt-14-dev)"
command -v "$cc" >/dev/null 2>&1 || skip "CLANG='$cc' is not an executable"

probe=$out/probe-libfuzzer
cat > "$probe.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }
EOF
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" > "$probe.log" 2>&1; then
	sed 's/^/run-fuzz:   /' "$probe.log" >&2
	rm -f "$probe" "$probe.c" "$probe.log"
	skip "$cc cannot link -fsanitize=fuzzer,address,undefined (the compiler-rt fuzzer and sanitizer runtimes are missing; on Debian: apt install libclang-rt-14-dev)"
fi
rm -f "$probe" "$probe.c" "$probe.log"

if [ -f "$build/config.h" ]; then
	config="-include $build/config.h"
else
	config="-D_GNU_SOURCE"
fi
o=$src/orchestrator
util="$o/util/alloc.c $o/util/util.c $o/util/strbuf.c $o/util/run-command.c"
# the suites' parsers live with the rest of each suite (suite-*.c), whose
# job.conf half needs job.c and so libyaml and libgit2
suites="$o/job/suite.c $(echo "$o"/job/suite-*.c) $o/job/job.c $o/util/hash.c $o/core/bisect.c $o/job/monitor.c $(echo "$o"/job/monitor-*.c)"
yamlgit=$(pkg-config --cflags --libs yaml-0.1 libgit2 libcrypto) ||
	{ echo "run-fuzz: FAIL: pkg-config knows no yaml-0.1 or libgit2" >&2; exit 1; }

export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1"
# libFuzzer's own default exit code for a crash is 77, which would read as
# a skip: make every failure 1.  The parsers' error messages go to a
# closed stderr (-close_fd_mask=2; sanitizer reports still reach the log).
fuzz_flags="-error_exitcode=1 -timeout_exitcode=1 -timeout=20 -rss_limit_mb=2048 -close_fd_mask=2"

fail() {
	echo "run-fuzz: FAIL: $*" >&2
	echo "run-fuzz: replay one input with: $bin FILE" >&2
	exit 1
}

# fuzz_target NAME: build, seeds, fuzz; sets bin, art, srcs, libs, seeds, dict
fuzz_target() {
	name=$1
	bin=$out/fuzz-$name
	art=$out/artifacts-$name	# crash-*, leak-*, timeout-*, oom-* inputs libFuzzer keeps
	work=$out/corpus-$name		# what the fuzzer finds; the seeds are never written to
	# seeds: the files of seeddir unless a target names others
	dict= libs= incs="-I$o" cfg=$config seeds=
	case $name in
	resultproto)
		srcs="$src/guests/agent/procmon.c $o/job/resultproto.c $suites $util"
		incs="-I$o -I$src/guests/agent"
		libs=$yamlgit
		seeddir=$src/tests/fuzz/corpus
		seeds="$seeddir/* $src/tests/data/results/*.out $src/tests/data/monitors/*"
		dict="-dict=$src/tests/fuzz/resultproto.dict"
		max_len=16384 ;;
	job)
		srcs="$o/job/resultproto.c $suites $util"
		libs=$yamlgit
		seeddir="$src/jobs $src/tests/data/jobs"
		seeds="$src/jobs/*.yaml $src/tests/data/jobs/*.yaml"
		max_len=8192 ;;
	labconf)
		srcs="$o/lab/lab-config.c $util"
		seeddir=$src/tests/fuzz/corpus-labconf
		max_len=4096 ;;
	jobconf)
		srcs="$src/guests/agent/jobconf.c"
		incs="-I$src/guests/agent"
		cfg=	# a guest program: no klab config.h
		seeddir=$src/tests/fuzz/corpus-jobconf
		max_len=8192 ;;
	lkp)
		srcs="$o/job/lkp.c $o/job/lkp-table.c $o/job/resultproto.c $suites $util $o/util/json.c"
		libs=$yamlgit
		seeddir=$src/tests/data/lkp
		dict="-dict=$src/tests/fuzz/lkp.dict"
		max_len=16384 ;;
	perfprof)
		srcs="$src/guests/agent/perfprof.c $o/job/resultproto.c $suites $util"
		incs="-I$o -I$src/guests/agent"
		libs=$yamlgit
		seeddir=$src/tests/data/perf
		max_len=16384 ;;
	ksources)
		srcs="$o/kernel/ksources.c $util"
		seeddir=$src/tests/fuzz/corpus-ksources
		max_len=16384 ;;
	icecclog)
		srcs="$o/kernel/icecc-log.c $util"
		seeddir=$src/tests/fuzz/corpus-icecclog
		max_len=16384 ;;
	options)
		srcs="$o/util/parse-options.c $util"
		seeddir=$src/tests/fuzz/corpus-options
		max_len=4096 ;;
	*)
		fail "unknown fuzz target '$name' (KLAB_FUZZ_TARGETS)" ;;
	esac
	: "${seeds:=$seeddir/*}"
	echo "run-fuzz: building $bin with $cc"
	# shellcheck disable=SC2086
	if ! "$cc" -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-Wall -Wextra -Wno-unused-parameter $cfg $incs \
		"$src/tests/fuzz/fuzz-$name.c" $srcs $libs -lm -o "$bin"; then
		fail "the $name harness does not build"
	fi
	mkdir -p "$art" "$work" || exit 1

	# ---- the seed corpus and the test data, each file once -------------
	# shellcheck disable=SC2086
	set -- $seeds
	[ -e "$1" ] || fail "no seed corpus for $name in $seeddir"
	echo "run-fuzz: $name: running $# seed and data files through the harness"
	"$bin" $fuzz_flags -artifact_prefix="$art/" "$@" > "$out/seeds-$name.log" 2>&1 ||
		{ tail -n 40 "$out/seeds-$name.log" >&2; fail "a seed input crashed the $name harness (log: $out/seeds-$name.log)"; }

	# ---- fuzz -----------------------------------------------------------
	[ "$secs" -gt 0 ] || return 0
	# inputs kept by earlier runs stay where they are; only new ones count
	marker=$art/.start
	: > "$marker"
	seed=${KLAB_FUZZ_SEED:+-seed=$KLAB_FUZZ_SEED}
	echo "run-fuzz: $name: fuzzing for ${secs}s (corpus $work, seeds from $seeddir)"
	rm -f "$out"/fuzz-$name*.log
	# shellcheck disable=SC2086
	if [ "$jobs" -gt 1 ]; then
		(cd "$out" && "$bin" $fuzz_flags $dict -max_len=$max_len $seed -max_total_time="$secs" -jobs="$jobs" \
			-workers="$jobs" -print_final_stats=1 -artifact_prefix="$art/" "$work" $seeddir) > "$out/fuzz-$name.log" 2>&1
	else
		"$bin" $fuzz_flags $dict -max_len=$max_len $seed -max_total_time="$secs" -print_final_stats=1 \
			-artifact_prefix="$art/" "$work" $seeddir > "$out/fuzz-$name.log" 2>&1
	fi
	rc=$?
	grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs)' "$out"/fuzz-$name*.log |
		sed "s/^/run-fuzz: $name: /" >&2
	crashes=$(find "$art" -type f -newer "$marker" ! -name 'slow-unit-*' | tr '\n' ' ')
	if [ $rc -ne 0 ] || [ -n "$crashes" ]; then
		tail -n 60 "$out/fuzz-$name.log" >&2
		fail "the $name fuzzer found a crash (log: $out/fuzz-$name.log, inputs: $crashes)"
	fi
}

for t in $targets; do
	fuzz_target "$t"
done
[ "$secs" -gt 0 ] || { echo "run-fuzz: PASS (seeds only, KLAB_FUZZ_SECONDS=0)"; exit 0; }
echo "run-fuzz: PASS ($targets)"
exit 0
