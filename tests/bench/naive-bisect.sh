#!/bin/sh
# Benchmark: time to culprit on the demo scenario (24 comment-only commits
# on the imported 6.1 tree, "mm: align larger anonymous mappings on THP
# boundaries" planted in the middle): klab against what a careful kernel
# developer scripts, side by side in one run, cold and then warm.
#
#   klab     `klab bisect start --job` (will-it-scale malloc1, 5 s, TCG
#            guests through libvirt), with its confirmation; the revert
#            check and the profile runs off (the script has neither)
#   careful  the script a careful developer writes: the kernel built in
#            the tree (incremental `make -j$(nproc) bzImage`, no ccache),
#            the good and the bad end booted 5 times each with a bare
#            `qemu-system-x86_64 -kernel` (same shape: 2 vCPUs, 2 NUMA
#            nodes, 1 GiB, THP always), then `git bisect run` of a step
#            that builds, boots 5 times and compares the median with the
#            midpoint of the ends' medians
#   clean    (NAIVE_CLEAN=1) the earlier strawman: `make mrproper` and a
#            clean build at every step, a fixed threshold
#
# cold: a new lab with an empty ccache for klab, a tree never built for
# the script.  warm: the same again where it ran before: klab's cold lab
# once more (its ccache, artifact store and worktree), the script in its
# cold run's build tree; and, a second klab row, a new lab with the cold
# run's ccache only (its artifact store empty).  Same culprit required.  Prints wall time,
# builds, boots and runs of each and the ratios (targets: klab >= 3x
# faster than the careful script cold, >= 6x warm).  Never fails on time.
#   KLAB_BENCH_DIR  work directory (default /var/tmp/klab-bench/naive)
#   NAIVE_N         commits in the generated history (default 24, the demo's)
#   NAIVE_CLEAN=1   also run the clean-build strawman (cold only)
#   NAIVE_PHASES    "cold warm" (default) or one of them (warm needs cold's
#                   directories)
#   NAIVE_REUSE_KLAB=1  cold: klab's figures from the last cold run in
#                   this directory ($W/cold-klab.result), the script's side
#                   measured again (the range is generated the same)
#   DEMO_HEADERS=1  issue 41's range: every other harmless commit a comment
#                   in a header most of the kernel includes (mm.h, fs.h,
#                   sched.h, ...), which make rebuilds in full and klab
#                   need not (target >= 2x cold); `make bench-naive-headers`
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
W=${KLAB_BENCH_DIR:-/var/tmp/klab-bench/naive}
PHASES=${NAIVE_PHASES:-cold warm}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@klab.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@klab.invalid
NPROC=$(nproc)

# ---- the range, once -----------------------------------------------------
if [ "$PHASES" != warm ] && [ "${NAIVE_REUSE_KLAB:-0}" != 1 ]; then
	rm -rf "$W"
	mkdir -p "$W"
	chmod 755 "$W"
	t0=$(date +%s)
	"$KLAB" --state "$W/import-lab" init >/dev/null
	"$KLAB" --state "$W/import-lab" tree import --dest "$W/tree" >/dev/null
	t_import=$(($(date +%s) - t0))
	planted=$(sh "$KLAB_SRCDIR/tests/demo/make-kernel-history.sh" "$W/tree" "$W/linux" "${NAIVE_N:-24}")
	t_hist=$(($(date +%s) - t0 - t_import))
	echo "planted=$planted t_import=$t_import t_hist=$t_hist" > "$W/range"
fi
. "$W/range"
sed -e 's/^runtime:.*/runtime: 5s/' "$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$W/job.yaml"
echo 'profile_runs: 0' >> "$W/job.yaml"
echo "bench: $(git -C "$W/linux" rev-list --count demo-good..demo-bad) commits, planted $planted"
echo "bench: tree import ${t_import} s, history ${t_hist} s (each lab checks the tree out again)"

# ---- klab ------------------------------------------------------------------
# klab_bisect LAB NAME: LAB bisects the range (output in $W/NAME-klab.out);
# sets k_time and what that bisection took: k_builds k_boots k_runs (the
# lab's rows since it was created) and k_culprit.
klab_bisect() {
	t0=$(date +%s)
	"$KLAB" --state "$1" bisect start --repo "$W/linux" --good demo-good --bad demo-bad \
		--job "$W/job.yaml" --no-revert-check > "$W/$2-klab.out" 2>&1 || true
	k_time=$(($(date +%s) - t0))
	kq() { sqlite3 "$1/klab.db" "$2"; }
	id=$(kq "$1" "SELECT max(id) FROM bisections")
	since=$(kq "$1" "SELECT created_at FROM bisections WHERE id = $id")
	k_culprit=$(kq "$1" "SELECT coalesce(culprit, '') FROM bisections WHERE id = $id")
	k_builds=$(kq "$1" "SELECT count(*) FROM builds WHERE status IN ('ok', 'build-failed') AND started_at >= $since")
	k_boots=$(kq "$1" "SELECT count(*) FROM boots WHERE started_at >= $since")
	k_runs=$(kq "$1" "SELECT count(*) FROM runs WHERE started_at >= $since")
	echo "k_time=$k_time k_builds=$k_builds k_boots=$k_boots k_runs=$k_runs k_culprit=$k_culprit" > "$W/$2-klab.result"
	echo "bench: $2 klab done in ${k_time} s (culprit ${k_culprit:-none})"
}

# klab_half NAME CCACHE: a new lab $W/NAME-lab building with CCACHE bisects
# the range (klab_bisect's k_*).
klab_half() {
	rm -rf "$W/$1-lab"
	"$KLAB" --state "$W/$1-lab" init >/dev/null
	printf 'ccache_dir = %s\n' "$2" >> "$W/$1-lab/klab.conf"
	klab_bisect "$W/$1-lab" "$1"
}

# ---- the bare-QEMU guest both scripts boot ---------------------------------
# /tmp: will-it-scale makes its files there
mkdir -p "$W/root/bin" "$W/root/proc" "$W/root/sys" "$W/root/dev" "$W/root/tmp"
cp /bin/busybox "$W/root/bin/busybox"
for a in sh mount poweroff; do ln -sf busybox "$W/root/bin/$a"; done
cp "$KLAB_SRCDIR/guests/bench/will-it-scale" "$W/root/bin/will-it-scale"
cat > "$W/root/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo always > /sys/kernel/mm/transparent_hugepage/enabled
/bin/will-it-scale --test malloc1 --tasks 2 --runtime 5 --warmup 2
poweroff -f
EOF
chmod 755 "$W/root/init"
(cd "$W/root" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$W/guest.cpio.gz"

# boot.sh: boot arch/x86/boot/bzImage 5 times, print the median of
# per_task_average (exit 125 when a boot gives no figure)
cat > "$W/boot.sh" <<EOF
#!/bin/sh
W=$W
EOF
cat >> "$W/boot.sh" <<'EOF'
vals=
for i in 1 2 3 4 5; do
	echo boot >> "$W/counts"
	rm -f "$W/console"
	timeout 600 qemu-system-x86_64 -machine pc -accel tcg,thread=multi -cpu max \
		-smp 2,sockets=2,cores=1,threads=1 -m 1024 \
		-object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M \
		-numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1 \
		-kernel arch/x86/boot/bzImage -initrd "$W/guest.cpio.gz" \
		-append "console=ttyS0 panic=-1" -display none -serial "file:$W/console" \
		-no-reboot -nodefaults >/dev/null 2>&1
	v=$(sed -n 's/^per_task_average:\([0-9]*\).*/\1/p' "$W/console" | head -n1)
	[ -n "$v" ] || exit 125
	echo run >> "$W/counts"
	vals="$vals $v"
done
echo $vals | tr ' ' '\n' | sort -n | sed -n 3p
EOF
chmod 755 "$W/boot.sh"

# ---- the careful developer's script ----------------------------------------
# careful_half NAME: in $W/careful (cloned and configured by the cold
# phase, built tree kept for warm) measure the ends, then git bisect run;
# sets c_time c_builds c_boots c_runs c_culprit.
careful_half() {
	d=$W/careful
	if [ ! -d "$d" ]; then
		git clone -q --shared "$W/linux" "$d"
		git -C "$d" fetch -q "$W/linux" 'refs/tags/*:refs/tags/*'
	fi
	git -C "$d" bisect reset -q >/dev/null 2>&1 || true
	: > "$W/counts"
	cat > "$W/step.sh" <<EOF
#!/bin/sh
# git bisect run's step: an incremental build, 5 boots, median vs midpoint
W=$W
EOF
	cat >> "$W/step.sh" <<'EOF'
echo build >> "$W/counts"
make -s -j"$(nproc)" bzImage > "$W/build.log" 2>&1 || exit 125
m=$("$W/boot.sh") || exit 125
echo "$(git rev-parse --short=12 HEAD) median $m" >> "$W/careful.log"
[ "$m" -lt "$(cat "$W/midpoint")" ] && exit 1
exit 0
EOF
	chmod 755 "$W/step.sh"
	t0=$(date +%s)
	(
		cd "$d"
		git checkout -q demo-good
		if [ ! -f .config ]; then
			cp "$W/config" .config
			make -s olddefconfig >/dev/null
		fi
		echo build >> "$W/counts"
		make -s -j"$NPROC" bzImage > "$W/build.log" 2>&1
		g=$("$W/boot.sh")
		git checkout -q demo-bad
		echo build >> "$W/counts"
		make -s -j"$NPROC" bzImage > "$W/build.log" 2>&1
		b=$("$W/boot.sh")
		echo $(((g + b) / 2)) > "$W/midpoint"
		echo "ends: good median $g, bad median $b, midpoint $(cat "$W/midpoint")" >> "$W/careful.log"
		git bisect start demo-bad demo-good > "$W/$1-careful.out" 2>&1
		git bisect run "$W/step.sh" >> "$W/$1-careful.out" 2>&1 || true
		git bisect reset -q >/dev/null 2>&1 || true
	)
	c_time=$(($(date +%s) - t0))
	c_culprit=$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p' "$W/$1-careful.out" | head -n1)
	c_builds=$(grep -c '^build$' "$W/counts" || true)
	c_boots=$(grep -c '^boot$' "$W/counts" || true)
	c_runs=$(grep -c '^run$' "$W/counts" || true)
	echo "bench: $1 careful script done in ${c_time} s (culprit ${c_culprit:-none})"
}

# ---- the clean-build strawman (optional) -----------------------------------
clean_half() {
	d=$W/clean
	rm -rf "$d"
	git clone -q --shared "$W/linux" "$d"
	git -C "$d" fetch -q "$W/linux" 'refs/tags/*:refs/tags/*'
	: > "$W/counts"
	cat > "$W/clean-step.sh" <<EOF
#!/bin/sh
W=$W
EOF
	cat >> "$W/clean-step.sh" <<'EOF'
make -s mrproper
cp "$W/config" .config
make -s olddefconfig >/dev/null
echo build >> "$W/counts"
make -s -j"$(nproc)" bzImage > "$W/build.log" 2>&1 || exit 125
m=$("$W/boot.sh") || exit 125
[ "$m" -lt 5800 ] && exit 1
exit 0
EOF
	chmod 755 "$W/clean-step.sh"
	t0=$(date +%s)
	(
		cd "$d"
		git bisect start demo-bad demo-good > "$W/clean.out" 2>&1
		git bisect run "$W/clean-step.sh" >> "$W/clean.out" 2>&1 || true
	)
	n_time=$(($(date +%s) - t0))
	n_culprit=$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p' "$W/clean.out" | head -n1)
	n_builds=$(grep -c '^build$' "$W/counts" || true)
	n_boots=$(grep -c '^boot$' "$W/counts" || true)
	echo "bench: clean strawman done in ${n_time} s (culprit ${n_culprit:-none})"
}

row() {
	printf '%-18s %9d %7d %6d %5d  %.12s %s\n' "$1" "$2" "$3" "$4" "$5" "${6:-none}" \
		"$([ "${6:-}" = "$planted" ] && echo planted || echo WRONG)"
}
ratio() { echo "scale=2; $1 / $2" | bc; }

ok=1
for phase in $PHASES; do
	if [ "$phase" = cold ]; then
		rm -rf "$W/careful"
		if [ "${NAIVE_REUSE_KLAB:-0}" = 1 ] && [ -f "$W/cold-klab.result" ]; then
			. "$W/cold-klab.result"
			echo "bench: klab's cold figures from $W/cold-klab.result (NAIVE_REUSE_KLAB)"
		else
			rm -rf "$W/ccache"
			klab_half cold "$W/ccache"
		fi
		sqlite3 "$W/cold-lab/klab.db" "SELECT config_text FROM builds WHERE status = 'ok' LIMIT 1" > "$W/config"
		[ -s "$W/config" ] || { echo "bench: no .config from klab's builds" >&2; exit 1; }
	else
		# warm is klab's cold lab once more (a lab that built this range
		# before: its ccache, artifact store and worktree), as the
		# script's is its cold run's built tree; a new lab with only the
		# warm ccache is the second klab row
		klab_half warm "$W/ccache"
		w_time=$k_time w_builds=$k_builds w_boots=$k_boots w_runs=$k_runs w_culprit=$k_culprit
		klab_bisect "$W/cold-lab" again
	fi
	careful_half "$phase"
	echo
	echo "$phase:"
	printf '%-18s %9s %7s %6s %5s  %s\n' "" "wall(s)" "builds" "boots" "runs" "culprit"
	row klab "$k_time" "$k_builds" "$k_boots" "$k_runs" "$k_culprit"
	[ "$phase" = cold ] ||
		row "klab, a new lab" "$w_time" "$w_builds" "$w_boots" "$w_runs" "$w_culprit"
	row careful "$c_time" "$c_builds" "$c_boots" "$c_runs" "$c_culprit"
	echo "careful/klab wall time, $phase: $(ratio "$c_time" "$k_time") (target >= $([ "$phase" = warm ] && echo 6 || { [ "${DEMO_HEADERS:-0}" = 1 ] && echo 2 || echo 3; }))"
	[ "$k_culprit" = "$planted" ] && [ "$c_culprit" = "$planted" ] || ok=0
	if [ "$phase" = warm ]; then
		echo "careful/klab wall time, warm, klab in a new lab with the warm ccache: $(ratio "$c_time" "$w_time")"
		[ "$w_culprit" = "$planted" ] || ok=0
	fi
	if [ "$phase" = cold ] && [ "${NAIVE_CLEAN:-0}" = 1 ]; then
		clean_half
		row "clean builds" "$n_time" "$n_builds" "$n_boots" "$n_boots" "$n_culprit"
		echo "clean/klab wall time, cold: $(ratio "$n_time" "$k_time")"
		[ "$n_culprit" = "$planted" ] || ok=0
	fi
	echo
done
echo "klab cold demo (import + history + bisection) would add ${t_import} + ${t_hist} s"
[ "$ok" = 1 ]
