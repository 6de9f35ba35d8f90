#!/bin/sh
# Build the fuzzers with clang's libFuzzer and sanitizers -- the result
# channel (fuzz-resultproto) and LKP reports and job files (fuzz-lkp) --,
# run each one's seed corpus and the parsers' test data through it, then
# fuzz each for KLAB_FUZZ_SECONDS (default 20).  Exit 0 when nothing crashed, 1 when
# something did (the input is kept and a command to replay it printed), 77
# only when clang with libFuzzer is not available here.
#
#   tests/fuzz/run-fuzz.sh [SOURCE-DIR [BUILD-DIR]]
#
# Without arguments the directories come from KLAB_SRCDIR / KLAB_BUILDDIR
# (make check sets them), else from where this script lives.
# Other knobs: CLANG (compiler), KLAB_FUZZ_SEED (libFuzzer -seed),
# KLAB_FUZZ_JOBS (parallel fuzzing processes, default 1), KLAB_FUZZ_TARGETS
# (default "resultproto lkp").
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=${1:-${KLAB_SRCDIR:-$here/../..}}
build=${2:-${KLAB_BUILDDIR:-$src}}
secs=${KLAB_FUZZ_SECONDS:-20}
jobs=${KLAB_FUZZ_JOBS:-1}
src=$(cd "$src" && pwd) || exit 1
mkdir -p "$build/tests/fuzz/run" || exit 1
build=$(cd "$build" && pwd)
# everything this script makes, apart from the sources (srcdir may be builddir)
out=$build/tests/fuzz/run
art=$out/artifacts	# crash-*, leak-*, timeout-*, oom-* inputs libFuzzer keeps
targets=${KLAB_FUZZ_TARGETS:-resultproto lkp}

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

# ---- build: the sources themselves, so that all of it is instrumented -----
# (libklab.a may be built by gcc without sanitizers)
if [ -f "$build/config.h" ]; then
	config="-include $build/config.h"
else
	config="-D_GNU_SOURCE"
fi
# the suites' parsers live with the rest of each suite (suite-*.c), whose
# job.conf half needs job.c and so libyaml and libgit2; lkp.c checks
# every job it makes with job.c
o=$src/orchestrator
libs=$(pkg-config --cflags --libs yaml-0.1 libgit2) ||
	{ echo "run-fuzz: FAIL: pkg-config knows no yaml-0.1 or libgit2" >&2; exit 1; }

# sources, seeds and dictionary of one target
sources() {
	case $1 in
	resultproto) echo "$src/tests/fuzz/fuzz-resultproto.c";;
	lkp) echo "$src/tests/fuzz/fuzz-lkp.c $o/lkp.c";;
	esac
}
seeds() {
	case $1 in
	resultproto) echo "$src/tests/fuzz/corpus/* $src/tests/data/results/*.out";;
	lkp) echo "$src/tests/data/lkp/*";;
	esac
}
seed_dir() {
	case $1 in
	resultproto) echo "$src/tests/fuzz/corpus";;
	lkp) echo "$src/tests/data/lkp";;
	esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1"
# libFuzzer's own default exit code for a crash is 77, which would read as
# a skip: make every failure 1.
fuzz_flags="-error_exitcode=1 -timeout_exitcode=1 -timeout=20 -rss_limit_mb=2048"

mkdir -p "$art" || exit 1

fail() {
	echo "run-fuzz: FAIL: $*" >&2
	echo "run-fuzz: replay one input with: $bin FILE" >&2
	exit 1
}

for t in $targets; do
	bin=$out/fuzz-$t
	[ -n "$(sources "$t")" ] || fail "no fuzz target '$t' (known: resultproto lkp)"
	echo "run-fuzz: building $bin with $cc"
	# shellcheck disable=SC2086
	if ! "$cc" -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-Wall -Wextra -Wno-unused-parameter $config -I"$o" \
		$(sources "$t") "$o/resultproto.c" "$o/suite.c" "$o"/suite-*.c "$o/job.c" \
		"$o/monitor.c" "$o"/monitor-*.c "$o/util/util.c" "$o/util/strbuf.c" $libs -lm -o "$bin"; then
		echo "run-fuzz: FAIL: the $t harness does not build" >&2
		exit 1
	fi
done

for t in $targets; do
	bin=$out/fuzz-$t
	dict="-dict=$src/tests/fuzz/$t.dict"

	# ---- the seed corpus and the test data, each file once -----------------
	# shellcheck disable=SC2046
	set -- $(seeds "$t")
	[ -e "$1" ] || fail "no seed corpus for $t in $(seed_dir "$t")"
	echo "run-fuzz: $t: running $# seed and data files through the harness"
	# shellcheck disable=SC2086
	"$bin" $fuzz_flags -artifact_prefix="$art/" "$@" > "$out/seeds-$t.log" 2>&1 ||
		{ tail -n 40 "$out/seeds-$t.log" >&2; fail "a seed input crashed the $t harness (log: $out/seeds-$t.log)"; }

	# ---- fuzz ---------------------------------------------------------------
	[ "$secs" -gt 0 ] || { echo "run-fuzz: $t: seeds only, KLAB_FUZZ_SECONDS=0"; continue; }
	work=$out/corpus-$t	# what the fuzzer finds; the seeds are never written to
	mkdir -p "$work"
	# inputs kept by earlier runs stay where they are; only new ones count
	marker=$art/.start
	: > "$marker"
	seed=${KLAB_FUZZ_SEED:+-seed=$KLAB_FUZZ_SEED}
	echo "run-fuzz: $t: fuzzing for ${secs}s (corpus $work, seeds from $(seed_dir "$t"))"
	rm -f "$out/fuzz-$t.log" "$out"/fuzz-[0-9]*.log	# -jobs writes fuzz-N.log
	# shellcheck disable=SC2086
	if [ "$jobs" -gt 1 ]; then
		(cd "$out" && "$bin" $fuzz_flags $dict -max_len=16384 $seed -max_total_time="$secs" -jobs="$jobs" -workers="$jobs" \
			-print_final_stats=1 -artifact_prefix="$art/" "$work" "$(seed_dir "$t")") > "$out/fuzz-$t.log" 2>&1
	else
		"$bin" $fuzz_flags $dict -max_len=16384 $seed -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$art/" \
			"$work" "$(seed_dir "$t")" > "$out/fuzz-$t.log" 2>&1
	fi
	rc=$?
	cat "$out/fuzz-$t.log" "$out"/fuzz-[0-9]*.log 2>/dev/null |
		grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs)' | sed "s/^/$t: /" >&2
	crashes=$(find "$art" -type f -newer "$marker" ! -name 'slow-unit-*' | tr '\n' ' ')
	if [ $rc -ne 0 ] || [ -n "$crashes" ]; then
		tail -n 60 "$out/fuzz-$t.log" >&2
		fail "the $t fuzzer found a crash (log: $out/fuzz-$t.log, inputs: $crashes)"
	fi
done
echo "run-fuzz: PASS"
exit 0
