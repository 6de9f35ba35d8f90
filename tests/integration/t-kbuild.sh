#!/bin/sh
# The kernel-build job (suite kbuild) in a real guest (TCG here, KVM where
# the host has it): the host's toolchain and a kernel tree reach the guest
# read-only through 9p, the guest builds into its own tmpfs and the three
# kbuild metrics arrive; the guest, as root, cannot write the shares
# (kbuild-run's probe, asserted here); a source or toolchain path that
# does not exist is refused before anything boots; a target that fails
# to build ends as run-failed with the compiler's first error, fast.
# One guest kernel (the default recipe plus jobs/kbuild.config, built
# once into the shared store), one short real build.  Fails (never
# skips) when libvirt does not answer.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_libvirt
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
KSTORE="$KLAB_TEST_CACHE/artifacts"
guest_cpus_lock shared

kernel_lab
# QEMU's user reads the shares (squash mode): the test's own trees must be
# reachable by others, as job.c checks
chmod 755 "$T"

# kbuild_job NAME SOURCE TARGET [EXTRA-PARAM-LINE]: the shipped job with
# another tree and target, allnoconfig (tinyconfig's merge_config.sh runs
# dozens of shell tools, each exec a trip over 9p), a 1 s runtime (one
# measured build), one boot, no warm-up build (LKP's way: the first
# config and the warm-up took 187 s of this test's 360 s of guest time;
# t-agent.sh checks the warm-up with a stand-in make)
kbuild_job() {
	sed -e "s|^  source:.*|  source: $2|" -e "s|^  target:.*|  target: $3|" \
	    -e 's/^  build_kconfig:.*/  build_kconfig: allnoconfig/' \
	    -e 's/^runtime:.*/runtime: 1s/' -e 's/^repeat:.*/repeat: 1/' \
	    -e 's/^  build-timeout:.*/  build-timeout: 10m/' -e 's/^  warmup:.*/  warmup: no/' \
	    -e "s|^kconfig:.*|kconfig: [ $KLAB_SRCDIR/jobs/kbuild.config ]|" \
	    "$KLAB_SRCDIR/jobs/kbuild.yaml" > "$T/$1.yaml"
	[ -z "${4:-}" ] || sed -i "/^params:/a\\  $4" "$T/$1.yaml"
}
# the guest's output of the lab's last run
last_output() { cat "$(q "SELECT raw_path FROM runs ORDER BY id DESC LIMIT 1")"; }

# ---- a real build: the imported 6.1 tree, the shipped job's config --------------
# (init/ is the smallest real target: one iteration is mostly kbuild's
# prepare step and a handful of objects)
kbuild_job ok "$KTREE" init/
k run --job "$T/ok.yaml" --repo "$KTREE" --rev HEAD > "$T/ok.out" 2>&1
rc=$?
check "kbuild run exits 0" test "$rc" -eq 0 || tail -40 "$T/ok.out"
for tag in usr src; do
	check "run says how share '$tag' reaches the guest: 9p, read-only" \
		grep -q "^share: .* as /klab/root/$tag in the guest (9p, read-only)\$" "$T/ok.out"
done
for m in kbuild.buildtime_per_iteration kbuild.user_time kbuild.sys_time; do
	check "run prints $m" grep -Eq " $m( |\$)" "$T/ok.out"
	v=$(q "SELECT value FROM samples WHERE metric = '$m' ORDER BY id DESC LIMIT 1")
	check "$m stored, > 0" awk -v v="${v:-0}" 'BEGIN { exit !(v > 0) }'
done
last_output > "$T/ok.guest"
# the guest, as root, tried to create a file in each share and to open an
# existing one for writing: both refused by the read-only 9p share
for dir in /src /usr; do
	check "guest cannot write share $dir (EROFS/EACCES)" \
		grep -Eq "^kbuild: share $dir is read-only \(create: (EROFS|EACCES|EPERM), write: (EROFS|EACCES|EPERM)\)\$" "$T/ok.guest"
done
check "nothing written into the shared tree (git status clean)" \
	test -z "$(git -C "$KTREE" status --porcelain --ignored=no 2>&1)"
check "no probe file left in the tree" test ! -e "$KTREE/.klab-write-probe"
check "no warm-up build (warmup: no)" sh -c "! grep -q '^warmup:' '$T/ok.guest'"
echo "# $(grep -E '^(config|warmup|mrproper|iteration):' "$T/ok.guest" | tr '\n' ' ')"

# ---- bad input: paths that do not exist, refused before a boot ------------------
boots=$(q "SELECT count(*) FROM boots")
kbuild_job nosrc "$T/no-such-tree" init/
k run --job "$T/nosrc.yaml" --repo "$KTREE" --rev HEAD > "$T/nosrc.out" 2>&1
rc=$?
check "a source that does not exist: exit 1" test "$rc" -eq 1
check "a source that does not exist: one line naming it" \
	sh -c "[ \"\$(grep -c . '$T/nosrc.out')\" -eq 1 ] && grep -q \"params.source: '$T/no-such-tree' does not exist\" '$T/nosrc.out'" ||
	cat "$T/nosrc.out"
kbuild_job notc "$KTREE" init/ "toolchain: $T/no-such-usr"
k run --job "$T/notc.yaml" --repo "$KTREE" --rev HEAD > "$T/notc.out" 2>&1
rc=$?
check "a toolchain that does not exist: exit 1, one line naming it" \
	sh -c "[ $rc -eq 1 ] && [ \"\$(grep -c . '$T/notc.out')\" -eq 1 ] && grep -q \"params.toolchain: '$T/no-such-usr' does not exist\" '$T/notc.out'" ||
	cat "$T/notc.out"
check "nothing booted for the bad paths" test "$(q "SELECT count(*) FROM boots")" -eq "$boots"

# ---- a target that fails to build: run-failed with the compiler's error ---------
# A stand-in tree (a Makefile with the runner's targets and a C file with
# an error): the real toolchain in the real guest fails within seconds.
mkdir -p "$T/badtree"
printf 'config X\n\tbool "x"\n' > "$T/badtree/Kconfig"
printf 'int f(int x)\n{\n\treturn x * 2\n}\n' > "$T/badtree/broken.c"
cat > "$T/badtree/Makefile" <<'EOF'
O ?= .
allnoconfig tinyconfig:
	echo CONFIG_X=y > $(O)/.config
broken/:
	gcc -c -o $(O)/broken.o $(CURDIR)/broken.c
EOF
chmod -R a+rX "$T/badtree"
kbuild_job bad "$T/badtree" broken/
t0=$(date +%s)
k run --job "$T/bad.yaml" --repo "$KTREE" --rev HEAD > "$T/bad.out" 2>&1
rc=$?
took=$(($(date +%s) - t0))
check "a target that fails to build: exit 1" test "$rc" -eq 1
check "a target that fails to build: the boot is run-failed" \
	test "$(q "SELECT outcome FROM boots ORDER BY id DESC LIMIT 1")" = run-failed
check "a target that fails to build: the reason is the compiler's first error" \
	grep -qx "  the benchmark exited with status 1: /src/broken.c:3:21: error: expected ';' before '}' token" "$T/bad.out" ||
	tail -20 "$T/bad.out"
check "a target that fails to build: the boot's stored reason says it too" \
	test "$(q "SELECT reason FROM boots ORDER BY id DESC LIMIT 1")" = \
	     "the benchmark exited with status 1: /src/broken.c:3:21: error: expected ';' before '}' token"
# fast: the first failing make ends the run (no second make, no wait for
# the 10 m build-timeout); the time is a figure, never a threshold
last_output > "$T/bad.guest"
check "a target that fails to build: one make of it, ended by its error (not killed)" \
	sh -c "test \"\$(grep -c '^kbuild: error: make broken/ exited 2\$' '$T/bad.guest')\" -eq 1 &&
	       ! grep -q 'still running after' '$T/bad.guest'" || grep '^kbuild:' "$T/bad.guest"
echo "# a target that fails to build: klab run took ${took} s"
boots_summary
finish
