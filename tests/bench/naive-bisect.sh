#!/bin/sh
# Benchmark: time to culprit on the demo scenario (24 comment-only commits
# on the imported 6.1 tree, "mm: align larger anonymous mappings on THP
# boundaries" planted in the middle), klab against a naive baseline, in
# one run:
#   klab   `klab bisect start --job` from a fresh lab and an EMPTY ccache
#          (cold: the first kernel compiled from scratch), the demo's job
#          (will-it-scale malloc1, 5 s, TCG guests through libvirt)
#   naive  `git bisect run` of a script that, per commit, runs
#          `make mrproper`, copies klab's final .config, builds bzImage
#          from clean (no ccache), boots it with a bare qemu-system-x86_64
#          (same shape: 2 vCPUs, 2 NUMA nodes, 1 GiB, THP always) 5 times
#          and compares the mean with a fixed threshold (the midpoint of
#          the report's good and bad figures, as a person would)
# Same culprit required.  Prints wall time, builds, boots and runs of each
# and the ratio (target: klab >= 3x faster).  Never fails on time.
#   KLAB_BENCH_DIR  work directory (default /var/tmp/klab-bench/naive)
#   NAIVE_THRESHOLD per_process_ops below this is bad (default 5800)
#   NAIVE_N         commits in the generated history (default 24, the demo's)
#   NAIVE_SKIP_KLAB=1  keep the klab half measured by an earlier run
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
W=${KLAB_BENCH_DIR:-/var/tmp/klab-bench/naive}
THRESHOLD=${NAIVE_THRESHOLD:-5800}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

q() { sqlite3 "$W/lab/klab.db" "$1"; }
if [ "${NAIVE_SKIP_KLAB:-0}" = 1 ] && [ -s "$W/klab.result" ]; then
	# the klab half measured earlier (its figures kept in klab.result)
	. "$W/klab.result"
	rm -rf "$W/naive" "$W/root" "$W/counts" "$W/naive.log"
else
rm -rf "$W"
mkdir -p "$W"
chmod 755 "$W"
# ---- klab, cold: a new lab imports the tree, writes the history, bisects
# with an empty ccache (what ./bootstrap demo does on a fresh machine,
# apt and the klab build aside)
t0=$(date +%s)
"$KLAB" --state "$W/lab" init >/dev/null
printf 'ccache_dir = %s\n' "$W/ccache-empty" >> "$W/lab/klab.conf"
"$KLAB" --state "$W/lab" tree import --dest "$W/tree" >/dev/null
t_import=$(($(date +%s) - t0))
planted=$(sh "$KLAB_SRCDIR/tests/demo/make-kernel-history.sh" "$W/tree" "$W/linux" "${NAIVE_N:-24}")
t_hist=$(($(date +%s) - t0 - t_import))
sed -e 's/^runtime:.*/runtime: 5s/' "$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$W/job.yaml"
echo "bench: $(git -C "$W/linux" rev-list --count demo-good..demo-bad) commits, planted $planted"
echo "bench: tree import ${t_import} s, history ${t_hist} s"
t0=$(date +%s)
"$KLAB" --state "$W/lab" bisect start --repo "$W/linux" --good demo-good --bad demo-bad \
	--job "$W/job.yaml" > "$W/klab.out" 2>&1 || true
t1=$(date +%s)
k_culprit=$(q "SELECT coalesce(culprit, '') FROM bisections WHERE id = 1")
k_builds=$(q "SELECT count(*) FROM builds WHERE status IN ('ok', 'build-failed')")
k_boots=$(q "SELECT count(*) FROM boots")
k_runs=$(q "SELECT count(*) FROM runs")
k_time=$((t1 - t0))
echo "bench: klab done in ${k_time} s (culprit ${k_culprit:-none})"
cat > "$W/klab.result" <<EOF
planted=$planted t_import=$t_import t_hist=$t_hist k_time=$k_time k_builds=$k_builds k_boots=$k_boots
k_runs=$k_runs k_culprit=$k_culprit
EOF
fi

# ---- naive ---------------------------------------------------------------
q "SELECT config_text FROM builds WHERE commit_hash = '$(git -C "$W/linux" rev-parse demo-good)'" > "$W/config"
[ -s "$W/config" ] || { echo "bench: no .config from klab's build of demo-good" >&2; exit 1; }
mkdir -p "$W/root/bin" "$W/root/proc" "$W/root/sys" "$W/root/dev"
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
(cd "$W/root" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$W/naive.cpio.gz"
: > "$W/counts"

cat > "$W/step.sh" <<EOF
#!/bin/sh
# git bisect run's script: clean build, 5 bare boots, fixed threshold
W=$W
EOF
cat >> "$W/step.sh" <<'EOF'
make -s mrproper
cp "$W/config" .config
make -s olddefconfig >/dev/null
echo build >> "$W/counts"
if ! make -s -j"$(nproc)" bzImage > "$W/build.log" 2>&1; then
	exit 125
fi
sum=0
for i in 1 2 3 4 5; do
	echo boot >> "$W/counts"
	rm -f "$W/console"
	timeout 600 qemu-system-x86_64 -machine pc -accel tcg,thread=multi -cpu max \
		-smp 2,sockets=2,cores=1,threads=1 -m 1024 \
		-object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M \
		-numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1 \
		-kernel arch/x86/boot/bzImage -initrd "$W/naive.cpio.gz" \
		-append "console=ttyS0 panic=-1" -display none -serial "file:$W/console" \
		-no-reboot -nodefaults >/dev/null 2>&1
	v=$(sed -n 's/^per_task_average:\([0-9]*\).*/\1/p' "$W/console" | head -n1)
	[ -n "$v" ] || exit 125
	echo run >> "$W/counts"
	sum=$((sum + v))
done
echo "$(git rev-parse --short=12 HEAD) mean $((sum / 5))" >> "$W/naive.log"
[ $((sum / 5)) -lt "$THRESHOLD" ] && exit 1
exit 0
EOF
sed -i "s/\"\$THRESHOLD\"/$THRESHOLD/" "$W/step.sh"
chmod 755 "$W/step.sh"
git clone -q --shared "$W/linux" "$W/naive"
git -C "$W/naive" fetch -q "$W/linux" 'refs/tags/*:refs/tags/*'	# the demo-* tags
t0=$(date +%s)
(
	cd "$W/naive"
	# (git 2.39's bisect start has no -q: it took "-q" for a revision
	# and then waited for good and bad, so the first runs of this
	# benchmark ended at once with no culprit)
	git bisect start demo-bad demo-good > "$W/naive.out" 2>&1
	git bisect run "$W/step.sh" >> "$W/naive.out" 2>&1 || true
)
t1=$(date +%s)
n_culprit=$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p' "$W/naive.out" | head -n1)
n_time=$((t1 - t0))
n_builds=$(grep -c '^build$' "$W/counts" || true)
n_boots=$(grep -c '^boot$' "$W/counts" || true)
n_runs=$(grep -c '^run$' "$W/counts" || true)

echo
printf '%-7s %9s %7s %6s %5s  %s\n' "" "wall(s)" "builds" "boots" "runs" "culprit"
printf '%-7s %9d %7d %6d %5d  %.12s %s\n' klab "$k_time" "$k_builds" "$k_boots" "$k_runs" "${k_culprit:-none}" \
	"$([ "$k_culprit" = "$planted" ] && echo planted || echo WRONG)"
printf '%-7s %9d %7d %6d %5d  %.12s %s\n' naive "$n_time" "$n_builds" "$n_boots" "$n_runs" "${n_culprit:-none}" \
	"$([ "$n_culprit" = "$planted" ] && echo planted || echo WRONG)"
echo "klab cold demo (import + history + bisection): $((t_import + t_hist + k_time)) s"
echo "naive/klab wall time: $(echo "scale=2; $n_time / $k_time" | bc) (target >= 3)"
echo "klab steps: $(grep -c '^step ' "$W/klab.out" || true) bisect steps + references + confirmation"
[ "$k_culprit" = "$planted" ] && [ "$n_culprit" = "$planted" ]
