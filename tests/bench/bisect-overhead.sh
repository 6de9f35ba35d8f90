#!/usr/bin/env bash
# Benchmark: per-step overhead of `klab bisect` (choose next + checkout +
# record) against `git bisect` (next + checkout), side by side as a ratio.
# Target: klab <= 1.0x git.
#
#   KLAB=/path/to/klab bash tests/bench/bisect-overhead.sh [--commits N] [--repeat N]
#
# It PRINTS figures and never fails on timing; it fails only when a tool
# errors or names a first bad commit other than the planted one.
#
# Repositories (built once, cached under ${KLAB_BENCH_DIR:-/var/tmp/klab-bench}):
#  - generated: N commits (default 50000) from one `git fast-import` stream,
#    2000 files in a directory tree, each commit changing 1-3 of them, a
#    side branch merged every ~100 commits, and a file `bad` present from
#    one commit in the middle of the history onwards.  Repacked, with a
#    commit-graph (both tools are measured with and without it).
#  - kernel: Debian's linux-source-6.1 tree, if available: $KLAB_KERNEL_REPO
#    (a git repository of it), else /usr/src/linux-source-6.1.tar.xz is
#    imported once.  30 small commits are made on top and bisected: there
#    the checkout of ~78k files dominates.
#
# Both tools run the same test script, `[ ! -e bad ]` (exit 0 good, 1 bad).
# Its own cost (fork + exec of /bin/sh) is measured separately and
# subtracted from both totals.  Each measurement is repeated (default 3)
# and the median reported.
#
# Figures: wall time per step, total / steps, for git (`git bisect start`
# + `git bisect run` in a `git clone --shared`) and for klab (`klab bisect
# start`, which includes its one-time ancestry check and DAG load; that
# part is estimated as 2 x `bisect start --no-run` and also shown taken
# out).  klab's choose/checkout/test split comes from its database (steps
# table); "record+other" is what is left.  CPU time (user + sys, children
# included) is shown too: on a busy machine it is steadier than wall time.
# File writes dominate checkout, so the file system of the bench dir
# (printed) matters.
set -euo pipefail

COMMITS=50000
REPEAT=3
usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
	exit "${1:-0}"
}
while [ $# -gt 0 ]; do
	case "$1" in
	--commits) COMMITS=${2:?--commits needs a number}; shift 2 ;;
	--commits=*) COMMITS=${1#*=}; shift ;;
	--repeat) REPEAT=${2:?--repeat needs a number}; shift 2 ;;
	--repeat=*) REPEAT=${1#*=}; shift ;;
	-h|--help) usage 0 ;;
	*) echo "bisect-overhead.sh: unknown argument '$1'" >&2; usage 2 >&2 ;;
	esac
done
case "$COMMITS" in ''|*[!0-9]*) echo "--commits takes a number" >&2; exit 2 ;; esac
case "$REPEAT" in ''|*[!0-9]*|0) echo "--repeat takes a number >= 1" >&2; exit 2 ;; esac
if [ "$COMMITS" -lt 200 ]; then
	echo "--commits: at least 200" >&2
	exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)
KLAB=${KLAB:-$here/../../orchestrator/klab}
if [ ! -x "$KLAB" ]; then
	echo "bisect-overhead.sh: klab not found at '$KLAB' (set KLAB=)" >&2
	exit 1
fi
KLAB=$(cd "$(dirname "$KLAB")" && pwd)/$(basename "$KLAB")
BENCH=${KLAB_BENCH_DIR:-/var/tmp/klab-bench}
mkdir -p "$BENCH"
BENCH=$(cd "$BENCH" && pwd)
for tool in git python3 sqlite3; do
	command -v "$tool" >/dev/null || { echo "bisect-overhead.sh: needs $tool" >&2; exit 1; }
done

# No user or system configuration for git or libgit2.
export LC_ALL=C
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export HOME="$BENCH/home" XDG_CONFIG_HOME="$BENCH/home/.config"
mkdir -p "$HOME"
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.invalid
export GIT_AUTHOR_DATE='1600000000 +0000' GIT_COMMITTER_DATE='1600000000 +0000'
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
unset KLAB_STATE

RUN="$BENCH/run.$$"
rm -rf "$RUN"
mkdir -p "$RUN"
STATUS=0
MOVED_CG=""
cleanup() {
	# a commit-graph moved aside for the "without" pass goes back
	if [ -n "$MOVED_CG" ] && [ -f "$MOVED_CG.aside" ]; then
		mv -f "$MOVED_CG.aside" "$MOVED_CG"
	fi
	rm -rf "$RUN"
}
trap cleanup EXIT

# ---- helpers -------------------------------------------------------------

now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$t"; }
# timed LOG CMD...: run CMD, output to LOG; set T_REAL (wall) and T_CPU
# (user + sys of CMD and its children), in seconds; return CMD's status
timed() {
	local log=$1 tf="$RUN/time.out" rc=0 u s TIMEFORMAT='%3R %3U %3S'
	shift
	{ time "$@" > "$log" 2>&1; } 2> "$tf" || rc=$?
	read -r T_REAL u s < "$tf"
	T_CPU=$(calc "$u + $s")
	return "$rc"
}
# median of the numbers given as arguments
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# calc EXPR: floating point with awk
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
fmt() { awk -v v="$1" -v f="$2" 'BEGIN { printf f, v }'; }
die() { echo "bisect-overhead.sh: $*" >&2; exit 1; }
show_log() { echo "---- $1 (last 20 lines) ----" >&2; tail -n 20 "$1" >&2; }

# The test script both tools run.  It counts its runs in COUNTER.
COUNTER="$RUN/counter"
SCRIPT="$RUN/test-bad.sh"
cat > "$SCRIPT" <<EOF
#!/bin/sh
echo >> '$COUNTER'
[ ! -e bad ]
EOF
chmod +x "$SCRIPT"

# Cost of one run of the test script as a parent pays it (fork + exec +
# /bin/sh + wait), the same work both tools do per step: sets
# COST_REAL and COST_CPU, in seconds.
script_runs() {
	local dir=$1 i
	for ((i = 0; i < 200; i++)); do
		(cd "$dir" && exec "$SCRIPT") || true
	done
}
script_cost() {
	timed /dev/null script_runs "$1"
	COST_REAL=$(calc "$T_REAL / 200")
	COST_CPU=$(calc "$T_CPU / 200")
	: > "$COUNTER"
}

# ---- the generated repository ------------------------------------------

GEN_PY='
import random, sys
n_commits = int(sys.argv[1])
meta_path = sys.argv[2]
rnd = random.Random(4242)
out = sys.stdout.buffer
NDIR, NSUB, NFILE, LINES = 20, 10, 10, 40
paths = ["src/d%02d/s%d/f%d.c" % (d, s, f) for d in range(NDIR) for s in range(NSUB) for f in range(NFILE)]
content = {p: ["/* %s line %02d: initial text of the klab bisect benchmark tree */\n" % (p, j) for j in range(LINES)] for p in paths}
T0 = 1600000000
st = {"mark": 0, "total": 0, "tip": 0, "main": 0, "merges": 0, "bad_mark": 0}
bad_at = rnd.randint(int(n_commits * 0.4), int(n_commits * 0.6))

def data(b):
    return b"data %d\n" % len(b) + b + b"\n"

def commit(ref, msg, frm, merge, mods):
    st["mark"] += 1
    st["total"] += 1
    t = T0 + st["total"] * 60
    parts = [b"commit " + ref + b"\n", b"mark :%d\n" % st["mark"],
             b"author Bench <bench@example.invalid> %d +0000\n" % t,
             b"committer Bench <bench@example.invalid> %d +0000\n" % t,
             data(msg.encode())]
    if frm:
        parts.append(b"from :%d\n" % frm)
    if merge:
        parts.append(b"merge :%d\n" % merge)
    for p, lines in mods:
        parts.append(b"M 100644 inline " + p.encode() + b"\n")
        parts.append(data("".join(lines).encode()))
    parts.append(b"\n")
    out.write(b"".join(parts))
    return st["mark"]

def change(lines, p):
    j = rnd.randrange(LINES)
    lines[j] = "/* %s line %02d: changed by commit %d */\n" % (p, j, st["total"] + 1)

def main_commit():
    k = rnd.choice((1, 1, 1, 2, 2, 3))
    files = rnd.sample(paths, k)
    for p in files:
        change(content[p], p)
    mods = [(p, content[p]) for p in files]
    msg = "change %s" % ", ".join(files)
    if not st["bad_mark"] and st["total"] + 1 >= bad_at:
        mods.append(("bad", ["from this commit on, the test fails\n"]))
        msg = "introduce the regression (" + msg + ")"
    m = commit(b"refs/heads/main", msg, st["tip"], 0, mods)
    if not st["bad_mark"] and any(p == "bad" for p, _ in mods):
        st["bad_mark"] = m
    st["tip"] = m
    st["main"] += 1

out.write(b"feature done\n")
st["tip"] = commit(b"refs/heads/main", "initial tree", 0, 0, [(p, content[p]) for p in paths])
root = st["tip"]
while st["total"] < n_commits:
    left = n_commits - st["total"]
    if st["main"] % 100 == 99 and left >= 12:
        # a side branch forks here, gets 3 commits while main gets 5,
        # and is merged back (its version of its files wins)
        fork = st["tip"]
        side_files = rnd.sample(paths, 3)
        snap = {p: list(content[p]) for p in side_files}
        for _ in range(5):
            main_commit()
        side = fork
        for p in side_files:
            change(snap[p], p)
            side = commit(b"refs/heads/side", "side: change " + p, side, 0, [(p, snap[p])])
        content.update(snap)
        st["tip"] = commit(b"refs/heads/main", "Merge branch side", st["tip"], side,
                           [(p, content[p]) for p in side_files])
        st["merges"] += 1
        st["main"] += 1
    else:
        main_commit()
out.write(b"done\n")
with open(meta_path, "w") as f:
    f.write("commits=%d\nmerges=%d\nfiles=%d\nroot_mark=%d\ntip_mark=%d\nbad_mark=%d\n" %
            (st["total"], st["merges"], len(paths), root, st["tip"], st["bad_mark"]))
'

mark_hash() { awk -v m=":$2" '$1 == m { print $2 }' "$1"; }

# Build (once) the generated repository; sets GEN_DIR.
prepare_generated() {
	GEN_DIR="$BENCH/generated-v1-$COMMITS"
	if [ ! -f "$GEN_DIR/ready" ]; then
		echo "generating a $COMMITS-commit repository in $GEN_DIR (once) ..."
		rm -rf "$GEN_DIR"
		mkdir -p "$GEN_DIR"
		git init -q --bare --initial-branch=main "$GEN_DIR/repo.git"
		local t0 t1
		t0=$(now_us)
		python3 -c "$GEN_PY" "$COMMITS" "$GEN_DIR/gen.meta" |
			git -C "$GEN_DIR/repo.git" fast-import --quiet --export-marks="$GEN_DIR/marks"
		git -C "$GEN_DIR/repo.git" update-ref -d refs/heads/side
		git -C "$GEN_DIR/repo.git" repack -a -d -q
		git -C "$GEN_DIR/repo.git" prune-packed
		git -C "$GEN_DIR/repo.git" pack-refs --all
		git -C "$GEN_DIR/repo.git" commit-graph write --reachable --no-progress
		t1=$(now_us)
		# shellcheck disable=SC1091
		. "$GEN_DIR/gen.meta"
		{
			cat "$GEN_DIR/gen.meta"
			echo "good=$(mark_hash "$GEN_DIR/marks" "$root_mark")"
			echo "bad=$(mark_hash "$GEN_DIR/marks" "$tip_mark")"
			echo "culprit=$(mark_hash "$GEN_DIR/marks" "$bad_mark")"
		} > "$GEN_DIR/meta"
		echo "  done in $(fmt "$(calc "($t1 - $t0) / 1e6")" '%.0f') s"
		touch "$GEN_DIR/ready"
	fi
	# an interrupted earlier run may have left the commit-graph aside
	local cg="$GEN_DIR/repo.git/objects/info/commit-graph"
	[ -f "$cg.aside" ] && mv -f "$cg.aside" "$cg"
	[ -f "$cg" ] || git -C "$GEN_DIR/repo.git" commit-graph write --reachable --no-progress
	return 0
}

# ---- the kernel repository ---------------------------------------------

KERNEL_FILES="mm/mmap.c mm/memory.c kernel/fork.c kernel/exit.c fs/namei.c fs/open.c
init/main.c lib/string.c net/socket.c kernel/sched/core.c mm/page_alloc.c fs/read_write.c"
KERNEL_COMMITS=30

# A git repository of the kernel tree: $KLAB_KERNEL_REPO, or one imported
# (once) from Debian's linux-source-6.1 tarball.  Sets KBASE or returns 1.
find_kernel_base() {
	if [ -n "${KLAB_KERNEL_REPO:-}" ]; then
		git -C "$KLAB_KERNEL_REPO" rev-parse -q --verify 'HEAD^{commit}' >/dev/null 2>&1 ||
			die "KLAB_KERNEL_REPO=$KLAB_KERNEL_REPO is not a git repository with a commit"
		KBASE=$(cd "$KLAB_KERNEL_REPO" && pwd)
		return 0
	fi
	local tarball
	tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1 || true)
	[ -n "$tarball" ] || return 1
	KBASE="$BENCH/linux-source-6.1-import/repo.git"
	if [ ! -f "$BENCH/linux-source-6.1-import/ready" ] ||
	   [ "$(cat "$BENCH/linux-source-6.1-import/ready")" != "$(stat -c '%s %Y' "$tarball")" ]; then
		echo "importing $tarball into $KBASE (once) ..."
		local imp="$BENCH/linux-source-6.1-import" t0 t1 top
		rm -rf "$imp"
		mkdir -p "$imp/tree"
		t0=$(now_us)
		tar -xf "$tarball" -C "$imp/tree"
		top=$(ls "$imp/tree")
		git init -q --bare --initial-branch=main "$KBASE"
		# -f: Debian's .gitignore ignores everything at the top level
		GIT_DIR="$KBASE" GIT_WORK_TREE="$imp/tree/$top" git add -A -f
		GIT_DIR="$KBASE" GIT_WORK_TREE="$imp/tree/$top" \
			git commit -q -m "$(basename "$tarball") ($top)" ||
			die "cannot import $tarball (is it complete?)"
		rm -rf "$imp/tree"
		git -C "$KBASE" repack -a -d -q
		git -C "$KBASE" prune-packed
		t1=$(now_us)
		echo "  done in $(fmt "$(calc "($t1 - $t0) / 1e6")" '%.0f') s"
		stat -c '%s %Y' "$tarball" > "$imp/ready"
	fi
	return 0
}

# KERNEL_COMMITS small commits on top of the kernel tree; sets KDIR.
prepare_kernel() {
	local base_head
	base_head=$(git -C "$KBASE" rev-parse 'HEAD^{commit}')
	KDIR="$BENCH/kernel-v1-${base_head:0:12}"
	if [ -f "$KDIR/ready" ]; then
		return 0
	fi
	echo "making $KERNEL_COMMITS commits on top of the kernel tree in $KDIR (once) ..."
	rm -rf "$KDIR"
	mkdir -p "$KDIR"
	git clone -q --bare --shared "$KBASE" "$KDIR/repo.git"
	local files="" f
	for f in $KERNEL_FILES; do
		git -C "$KDIR/repo.git" cat-file -e "$base_head:$f" 2>/dev/null && files="$files $f"
	done
	[ -n "$files" ] || die "none of the kernel files to modify exist in $KBASE"
	python3 - "$KDIR/repo.git" "$base_head" "$KERNEL_COMMITS" $files > "$KDIR/stream" <<'PY'
import random, subprocess, sys
repo, base, n, files = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
rnd = random.Random(61)
content = {f: subprocess.run(["git", "-C", repo, "cat-file", "blob", base + ":" + f],
                             check=True, capture_output=True).stdout for f in files}
out = sys.stdout.buffer
bad_at = n // 2 - 2
def data(b):
    return b"data %d\n" % len(b) + b + b"\n"
out.write(b"feature done\n")
for i in range(1, n + 1):
    t = 1700000000 + i * 60
    chosen = rnd.sample(files, rnd.choice((1, 2, 3)))
    msg = "klab bench: touch " + ", ".join(chosen)
    parts = [b"commit refs/heads/klab-bench\n", b"mark :%d\n" % i,
             b"author Bench <bench@example.invalid> %d +0000\n" % t,
             b"committer Bench <bench@example.invalid> %d +0000\n" % t]
    mods = []
    for f in chosen:
        content[f] += b"/* klab bench: commit %d */\n" % i
        mods.append(b"M 100644 inline " + f.encode() + b"\n" + data(content[f]))
    if i == bad_at:
        msg = "introduce the regression (" + msg + ")"
        mods.append(b"M 100644 inline bad\n" + data(b"from this commit on, the test fails\n"))
    parts.append(data(msg.encode()))
    parts.append(b"from " + (base.encode() if i == 1 else b":%d" % (i - 1)) + b"\n")
    parts += mods
    parts.append(b"\n")
    out.write(b"".join(parts))
out.write(b"done\n")
PY
	local bad_at
	bad_at=$(python3 -c "print($KERNEL_COMMITS // 2 - 2)")
	git -C "$KDIR/repo.git" fast-import --quiet --export-marks="$KDIR/marks" < "$KDIR/stream"
	rm -f "$KDIR/stream"
	git -C "$KDIR/repo.git" symbolic-ref HEAD refs/heads/klab-bench
	git -C "$KDIR/repo.git" commit-graph write --reachable --no-progress
	{
		echo "commits=$KERNEL_COMMITS"
		echo "good=$base_head"
		echo "bad=$(mark_hash "$KDIR/marks" "$KERNEL_COMMITS")"
		echo "culprit=$(mark_hash "$KDIR/marks" "$bad_at")"
		echo "files=$(git -C "$KDIR/repo.git" ls-tree -r --name-only HEAD | wc -l)"
	} > "$KDIR/meta"
	touch "$KDIR/ready"
}

# ---- one measurement of each tool ----------------------------------------

git_bisect() {
	git -C "$1" bisect start "$3" "$2" && git -C "$1" bisect run "$SCRIPT"
}

# git_once CLONE GOOD BAD: sets G_TIME, G_CPU (s), G_STEPS, G_CULPRIT
git_once() {
	local clone=$1 good=$2 bad=$3 log="$RUN/git.log"
	git -C "$clone" bisect reset >/dev/null 2>&1 || true
	: > "$COUNTER"
	timed "$log" git_bisect "$clone" "$good" "$bad" || { show_log "$log"; die "git bisect failed"; }
	G_TIME=$T_REAL
	G_CPU=$T_CPU
	G_STEPS=$(wc -l < "$COUNTER")
	G_CULPRIT=$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit.*/\1/p' "$log" | head -n 1)
	git -C "$clone" bisect reset >/dev/null 2>&1
}

# klab_once STATE REPO GOOD BAD: sets K_TIME, K_CPU, K_STEPS, K_CULPRIT
# and the per-step sums from the database K_CHOOSE, K_CHECKOUT, K_TEST (ms)
klab_once() {
	local state=$1 repo=$2 good=$3 bad=$4 log="$RUN/klab.log" row
	: > "$COUNTER"
	timed "$log" "$KLAB" --state "$state" bisect start --repo "$repo" --good "$good" --bad "$bad" \
		-- "$SCRIPT" || { show_log "$log"; die "klab bisect failed"; }
	K_TIME=$T_REAL
	K_CPU=$T_CPU
	K_STEPS=$(wc -l < "$COUNTER")
	K_CULPRIT=$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit.*/\1/p' "$log" | head -n 1)
	row=$(sqlite3 -separator ' ' "$state/klab.db" \
		"SELECT count(*), coalesce(sum(choose_ms),0), coalesce(sum(checkout_ms),0), coalesce(sum(test_ms),0)
		 FROM steps WHERE bisection_id = (SELECT max(id) FROM bisections)")
	read -r K_DBSTEPS K_CHOOSE K_CHECKOUT K_TEST <<< "$row"
	[ "$K_DBSTEPS" = "$K_STEPS" ] ||
		echo "  note: klab recorded $K_DBSTEPS steps but the script ran $K_STEPS times"
}

# klab_startup STATE REPO GOOD BAD: sets K_START, the time of
# `bisect start --no-run` (open, resolve, ancestry check, DAG load, insert)
klab_startup() {
	timed "$RUN/klab-norun.log" "$KLAB" --state "$1" bisect start --no-run --repo "$2" \
		--good "$3" --bad "$4" -- "$SCRIPT" || { show_log "$RUN/klab-norun.log"; die "klab bisect start --no-run failed"; }
	K_START=$T_REAL
}

new_state() {
	local s
	s=$(mktemp -d "$RUN/klab-state.XXXXXX")
	"$KLAB" --state "$s" init > /dev/null
	echo "$s"
}

# bench LABEL REPO GOOD BAD CULPRIT MODE [CACHE]
# MODE fresh: every klab run gets a new state directory (its worktree is
#             created and filled by the first checkout);
#      warm:  one state directory, a first (untimed) bisection fills the
#             worktree, as the git clone was filled by `git clone`.  The
#             clone and the state directory are kept in CACHE for the next
#             run of this script (filling and deleting 78k files is slow).
bench() {
	local label=$1 repo=$2 good=$3 bad=$4 expect=$5 mode=$6 cache=${7:-$RUN}
	local clone="$cache/git-clone" cost cost_cpu
	local -a gt=() gc=() gs=() kt=() kcpu=() ks=() kc=() kk=() kx=() kz=()
	local warm_state="" i st st2 who

	if [ "$mode" = warm ] && [ -f "$cache/git-clone.ready" ]; then
		git -C "$clone" bisect reset >/dev/null 2>&1 || true
		git -C "$clone" reset -q --hard
	else
		rm -rf "$clone" "$cache/git-clone.ready"
		git clone -q --shared "$repo" "$clone"
		git -C "$clone" config gc.auto 0
		touch "$cache/git-clone.ready"
	fi
	script_cost "$clone"
	cost=$COST_REAL
	cost_cpu=$COST_CPU
	if [ "$mode" = warm ]; then
		warm_state="$cache/klab-state"
		if [ -f "$warm_state/warm" ]; then
			echo "  klab state dir reused from an earlier run: $warm_state"
		else
			rm -rf "$warm_state"
			mkdir -p "$warm_state"
			"$KLAB" --state "$warm_state" init > /dev/null
			timed "$RUN/klab-warmup.log" "$KLAB" --state "$warm_state" bisect start --repo "$repo" \
				--good "$good" --bad "$bad" -- "$SCRIPT" || { show_log "$RUN/klab-warmup.log"; die "klab bisect failed"; }
			printf '  klab cold run (fresh state dir, worktree filled from empty): %.2f s, cpu %.2f s (not counted)\n' \
				"$T_REAL" "$T_CPU"
			touch "$warm_state/warm"
		fi
	fi
	for ((i = 1; i <= REPEAT; i++)); do
		git_once "$clone" "$good" "$bad"
		if [ "$mode" = warm ]; then
			st=$warm_state
		else
			st=$(new_state)
		fi
		klab_once "$st" "$repo" "$good" "$bad"
		st2=$(new_state)
		klab_startup "$st2" "$repo" "$good" "$bad"
		rm -rf "$st2"
		[ "$mode" = warm ] || rm -rf "$st"
		for who in git:"$G_CULPRIT" klab:"$K_CULPRIT"; do
			if [ "${who#*:}" != "$expect" ]; then
				echo "  ERROR: ${who%%:*} named '${who#*:}' as first bad commit, expected $expect"
				STATUS=1
			fi
		done
		printf '  run %d: git %2d steps %7.3f s (cpu %6.3f) | klab %2d steps %7.3f s (cpu %6.3f; choose %d ms, checkout %d ms, test %d ms; start --no-run %.3f s)\n' \
			"$i" "$G_STEPS" "$G_TIME" "$G_CPU" "$K_STEPS" "$K_TIME" "$K_CPU" "$K_CHOOSE" "$K_CHECKOUT" "$K_TEST" "$K_START"
		gt+=("$G_TIME"); gc+=("$G_CPU"); gs+=("$G_STEPS")
		kt+=("$K_TIME"); kcpu+=("$K_CPU"); ks+=("$K_STEPS")
		kc+=("$K_CHOOSE"); kk+=("$K_CHECKOUT"); kx+=("$K_TEST"); kz+=("$K_START")
	done
	[ "$mode" = warm ] || rm -rf "$clone"

	local GT GC GS KT KCPU KS KC KK KX KZ
	GT=$(median "${gt[@]}"); GC=$(median "${gc[@]}"); GS=$(median "${gs[@]}")
	KT=$(median "${kt[@]}"); KCPU=$(median "${kcpu[@]}"); KS=$(median "${ks[@]}")
	KC=$(median "${kc[@]}"); KK=$(median "${kk[@]}"); KX=$(median "${kx[@]}"); KZ=$(median "${kz[@]}")
	local g_step g_cpu k_step k_cpu k_step_nostart k_other k_once
	# overhead per step: total minus the test script's own cost, per step
	g_step=$(calc "($GT - $GS * $cost) / $GS")
	g_cpu=$(calc "($GC - $GS * $cost_cpu) / $GS")
	k_step=$(calc "($KT - $KS * $cost) / $KS")
	k_cpu=$(calc "($KCPU - $KS * $cost_cpu) / $KS")
	# klab's one-time part: `start` checks ancestry and loads the DAG,
	# then the run does both again before its first step: ~2x --no-run
	k_once=$(calc "2 * $KZ")
	k_step_nostart=$(calc "($KT - $k_once - $KS * $cost) / $KS")
	k_other=$(calc "($KT - $k_once - ($KC + $KK + $KX) / 1000) / $KS")
	echo
	echo "  $label (median of $REPEAT)"
	printf '  test script cost (fork+exec+wait, subtracted from both): %.1f ms per run (cpu %.1f ms)\n' \
		"$(calc "$cost * 1000")" "$(calc "$cost_cpu * 1000")"
	printf '  git bisect:  %2d steps, %7.3f s total, %.3f s/step (cpu %.3f s/step)\n' "$GS" "$GT" "$g_step" "$g_cpu"
	printf '  klab bisect: %2d steps, %7.3f s total, %.3f s/step incl. start-up (cpu %.3f s/step)\n' \
		"$KS" "$KT" "$k_step" "$k_cpu"
	printf '               per step: choose %.1f ms, checkout %.1f ms, test %.1f ms, record+other ~%.1f ms\n' \
		"$(calc "$KC / $KS")" "$(calc "$KK / $KS")" "$(calc "$KX / $KS")" "$(calc "$k_other * 1000")"
	printf '               one-time start-up ~%.3f s (2 x `start --no-run` %.3f s: ancestry check + DAG load); %.3f s/step without it\n' \
		"$k_once" "$KZ" "$k_step_nostart"
	printf '  ratio klab/git per step: %.2fx (target <= 1.0x); without klab start-up %.2fx; cpu %.2fx\n' \
		"$(calc "$k_step / $g_step")" "$(calc "$k_step_nostart / $g_step")" "$(calc "$k_cpu / $g_cpu")"
	echo
}

# ---- run -----------------------------------------------------------------

echo "klab bisect per-step overhead vs git bisect"
echo "klab: $KLAB ($("$KLAB" --version 2>&1 | head -n 1)); $(git --version); libgit2: $(ldd "$KLAB" 2>/dev/null | sed -n 's/.*\(libgit2\.so[^ ]*\).*/\1/p' | head -n 1)"
echo "cpus: $(nproc), load average: $(cut -d' ' -f1-3 /proc/loadavg), repeats: $REPEAT (medians reported)"
echo "bench dir: $BENCH ($(findmnt -n -o FSTYPE,OPTIONS -T "$BENCH" 2>/dev/null || echo 'file system unknown'))"
echo

prepare_generated
# shellcheck disable=SC1091
. "$GEN_DIR/meta"
CG="$GEN_DIR/repo.git/objects/info/commit-graph"
echo "== generated repository: $commits commits ($merges merges), $files files =="
echo "   $GEN_DIR/repo.git (packed), good $good (root), bad $bad (tip), first bad $culprit"
echo
echo "-- with commit-graph ($( [ -f "$CG" ] && echo "present: $CG" || echo MISSING)) --"
bench "generated, $commits commits, commit-graph present" "$GEN_DIR/repo.git" "$good" "$bad" "$culprit" fresh

echo "-- without commit-graph (moved aside for this pass) --"
MOVED_CG=$CG
mv "$CG" "$CG.aside"
bench "generated, $commits commits, no commit-graph" "$GEN_DIR/repo.git" "$good" "$bad" "$culprit" fresh
mv "$CG.aside" "$CG"
MOVED_CG=""

if find_kernel_base; then
	prepare_kernel
	# shellcheck disable=SC1091
	. "$KDIR/meta"
	echo "== kernel tree: $KBASE + $commits commits, $files files (commit-graph present) =="
	echo "   $KDIR/repo.git, good $good, bad $bad, first bad $culprit"
	echo "   klab keeps its worktree between bisections (warm): measured so, after one untimed run"
	echo
	bench "kernel tree, $commits commits on top, warm worktrees" "$KDIR/repo.git" "$good" "$bad" "$culprit" warm "$KDIR"
else
	echo "== kernel tree not available: set KLAB_KERNEL_REPO (a git repository of Debian's"
	echo "   linux-source-6.1), or install linux-source-6.1 (/usr/src/linux-source-6.1.tar.xz) =="
fi

if [ "$STATUS" -ne 0 ]; then
	echo "bisect-overhead.sh: the tools disagreed on the first bad commit (see ERROR above)" >&2
fi
exit "$STATUS"
