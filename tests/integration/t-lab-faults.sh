#!/bin/sh
# A lab in trouble, for real: an empty --state, klab.conf line numbers, the
# lab's file modes, a read-only lab (tmpfs remounted read-only, and a
# read-only bind mount while another process writes) and a full one (a
# tiny tmpfs filled with dd: real ENOSPC).  The mounts need root.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

# has TEXT PATTERN: TEXT matches the shell pattern
has() { case $1 in $2) return 0;; esac; return 1; }
# mode PATH: its permission bits in octal
mode() { stat -c %a "$1"; }

# ---- --state "" and KLAB_STATE="" ------------------------------------------
mkdir -p "$T/home"
err=$(HOME="$T/home" "$KLAB" --state "" bisect list 2>&1); rc=$?
check "--state '' exits 2" test "$rc" -eq 2
check "--state '' says so in one line" has "$err" "*error: --state needs a directory, not an empty string"
check "--state '' prints one line" test "$(printf '%s\n' "$err" | wc -l)" -eq 1
err=$(HOME="$T/home" KLAB_STATE= "$KLAB" bisect list 2>&1); rc=$?
check "KLAB_STATE='' exits 2" test "$rc" -eq 2
check "KLAB_STATE='' says so" has "$err" "*KLAB_STATE is set but empty*"
err=$(HOME="$T/home" "$KLAB" init --state "" 2>&1); rc=$?
check "init --state '' exits 2" test "$rc" -eq 2
HOME="$T/home" KLAB_STATE= "$KLAB" init >/dev/null 2>&1
check "no default lab was made" test ! -e "$T/home/.local/state/klab"

# ---- klab.conf line numbers ------------------------------------------------
"$KLAB" --state "$T/conf" init >/dev/null
printf 'accel = auto\n\n\n\nbogus_key = 1\n' > "$T/conf/klab.conf"
err=$("$KLAB" --state "$T/conf" bisect list 2>&1)
check "an error after three blank lines is at line 5" has "$err" "*klab.conf:5: unknown key 'bogus_key'*"
printf '# comment\n\n   \n\t\nbuild_jobs = 2\n\naccel = fast\n' > "$T/conf/klab.conf"
err=$("$KLAB" --state "$T/conf" bisect list 2>&1)
check "blank, space-only and comment lines count" has "$err" "*klab.conf:7: accel must be auto, kvm or tcg*"
printf 'accel = tcg\n\n\n' > "$T/conf/klab.conf"
check "trailing blank lines are fine" "$KLAB" --state "$T/conf" bisect list

# ---- modes ----------------------------------------------------------------
"$KLAB" --state "$T/m/lab" init >/dev/null
check "the lab is 0700" test "$(mode "$T/m/lab")" = 700
check "klab.db is 0600" test "$(mode "$T/m/lab/klab.db")" = 600
check "klab.conf is 0600" test "$(mode "$T/m/lab/klab.conf")" = 600
check "logs/ is 0700" test "$(mode "$T/m/lab/logs")" = 700
make_linear_repo "$T/repo" 8 5
write_test_script "$T/test.sh"
(umask 022 && "$KLAB" --state "$T/m/lab" bisect start --repo "$T/repo" --good HEAD~7 --bad HEAD -- "$T/test.sh") \
	> "$T/bisect.out" 2>&1
check "a bisection runs" grep -q "first bad commit" "$T/bisect.out"
check "locks are 0600 whatever the umask" test "$(mode "$T/m/lab/locks/bisect-1.lock")" = 600
check "a step's log dir is 0700" test "$(mode "$T/m/lab/logs/bisect-1")" = 700
log=$(ls "$T"/m/lab/logs/bisect-1/*.log | head -n 1)
check "a step's log is 0600" test -n "$log" -a "$(mode "$log")" = 600
# -wal/-shm exist while a connection is open: they take klab.db's mode
(umask 022 && (echo "SELECT count(*) FROM repos;"; sleep 2) | sqlite3 "$T/m/lab/klab.db" >/dev/null) &
sleep 1
check "klab.db-shm is 0600" test "$(mode "$T/m/lab/klab.db-shm")" = 600
wait
# a lab made by an older klab (0755, 0644): warned about, made private by init
chmod 755 "$T/m/lab"
chmod 644 "$T/m/lab/klab.db" "$T/m/lab/klab.conf"
err=$("$KLAB" --state "$T/m/lab" bisect list 2>&1 >/dev/null)
check "a lab open to others is warned about" has "$err" "*warning: the lab '$T/m/lab' is open to other users (mode 0755)*'klab init' makes it private*"
out=$("$KLAB" --state "$T/m/lab" init 2>&1)
check "init says what it made private" has "$out" "*made '$T/m/lab' private (mode 0700, was 0755)*"
check "init makes the lab 0700" test "$(mode "$T/m/lab")" = 700
check "init makes klab.db 0600" test "$(mode "$T/m/lab/klab.db")" = 600
check "init makes klab.conf 0600" test "$(mode "$T/m/lab/klab.conf")" = 600
err=$("$KLAB" --state "$T/m/lab" bisect list 2>&1 >/dev/null)
check "no warning once private" test -z "$err"

# ---- another user: permission denied, with the path -------------------------
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	chmod 711 "$T" "$T/m"
	err=$(as_nobody "$KLAB" --state "$T/m/lab" bisect list 2>&1); rc=$?
	check "another user's private lab is refused" test "$rc" -eq 1
	check "with the path and 'Permission denied'" \
		has "$err" "*cannot read the lab's database '$T/m/lab/klab.db': Permission denied*"
	# readable but not writable for that user: readers work, writers say why
	chmod 755 "$T/m/lab" "$T/m/lab/locks"
	chmod 644 "$T/m/lab/klab.db" "$T/m/lab/klab.conf" "$T/m/lab/locks/bisect-1.lock"
	out=$(as_nobody "$KLAB" --state "$T/m/lab" bisect list 2>/dev/null); rc=$?
	check "a reader works on a lab it may only read" test "$rc" -eq 0
	check "and lists the bisection" has "$out" "1	done	culprit*"
	err=$(as_nobody "$KLAB" --state "$T/m/lab" bisect resume 1 2>&1); rc=$?
	check "a writer is refused on a lab it may only read" test "$rc" -eq 1
	check "with the path and 'Permission denied'" has "$err" "*cannot write to the lab '$T/m/lab': Permission denied*"
	"$KLAB" --state "$T/m/lab" init >/dev/null
	chmod 700 "$T"
fi

# ---- read-only and full labs: real mounts ----------------------------------
if [ "$(id -u)" -ne 0 ]; then
	echo "# not root: the read-only and full lab checks need mounts (skipped)"
	finish
fi
mounts=
cleanup() {
	for m in $mounts; do umount -l "$m" 2>/dev/null; done
}
trap cleanup EXIT
mount_tmpfs() {	# DIR SIZE
	mkdir -p "$1" && mount -t tmpfs -o "size=$2,mode=0755" klab-test "$1" && mounts="$1 $mounts"
}
if ! mount_tmpfs "$T/ro" 4m; then
	echo "# cannot mount a tmpfs here: the read-only and full lab checks are skipped"
	finish
fi

lab=$T/ro/lab
"$KLAB" --state "$lab" init >/dev/null
"$KLAB" --state "$lab" bisect start --repo "$T/repo" --good HEAD~7 --bad HEAD -- "$T/test.sh" >/dev/null 2>&1
for c in "bisect list" "bisect show 1" "bisect log 1" "status" "track list" "host list" "notify list"; do
	# shellcheck disable=SC2086
	"$KLAB" --state "$lab" $c > "$T/rw-$(echo "$c" | tr ' ' -).out" 2>&1
done
# an older schema cannot be migrated read-only; an empty database is no lab
latest=$(ls "$KLAB_SRCDIR"/db/migrations/*.sql | sed 's,.*/0*\([0-9]*\)-[^/]*$,\1,' | sort -n | tail -n 1)
"$KLAB" --state "$T/ro/old" init >/dev/null
sqlite3 "$T/ro/old/klab.db" "PRAGMA user_version = $((latest - 1))"
"$KLAB" --state "$T/ro/empty" init >/dev/null
rm -f "$T/ro/empty/klab.db"*
: > "$T/ro/empty/klab.db"
mount -o remount,ro "$T/ro"
err=$("$KLAB" --state "$T/ro/old" bisect list 2>&1); rc=$?
check "an older schema on a read-only lab is an error" test "$rc" -eq 1
check "it says to migrate on a writable lab" has "$err" "*schema version $((latest - 1)) and this klab reads $latest: run a klab command on a writable lab once*"
err=$("$KLAB" --state "$T/ro/empty" bisect list 2>&1); rc=$?
check "an empty database on a read-only lab is an error" test "$rc" -eq 1
check "it names the file" has "$err" "*database '$T/ro/empty/klab.db' has no klab schema*"
check "the lab's file system is read-only now" sh -c "! touch '$lab/x' 2>/dev/null"
for c in "bisect list" "bisect show 1" "bisect log 1" "status" "track list" "host list" "notify list"; do
	f=$(echo "$c" | tr ' ' -)
	# shellcheck disable=SC2086
	"$KLAB" --state "$lab" $c > "$T/ro-$f.out" 2>&1; rc=$?
	check "'$c' works on a read-only lab" test "$rc" -eq 0
	check "'$c' prints what it printed on the writable lab" cmp -s "$T/rw-$f.out" "$T/ro-$f.out"
done
check "list shows the bisection" grep -q "^1	done	culprit" "$T/ro-bisect-list.out"
out=$("$KLAB" --state "$lab" report -o "$T/report" 2>&1); rc=$?
check "report to another directory works on a read-only lab" test "$rc" -eq 0 -a -f "$T/report/index.html"
check "the report has the bisection's page" test -f "$T/report/bisect-1.html"
for c in "bisect resume 1" "cancel 1" "worker --once" "init"; do
	# shellcheck disable=SC2086
	err=$("$KLAB" --state "$lab" $c 2>&1); rc=$?
	check "'$c' is refused on a read-only lab" test "$rc" -eq 1
	check "'$c' says the file system is read-only, with the path" \
		has "$err" "*the lab '$lab' is on a read-only file system*"
	check "'$c' does not say 'unable to open database file'" sh -c "! printf '%s' '$err' | grep -q 'unable to open'"
done
mount -o remount,rw "$T/ro"

# a read-only view of a lab another process is writing: its WAL is read
mkdir -p "$T/view"
if mount --bind "$lab" "$T/view" && mounts="$T/view $mounts" && mount -o remount,bind,ro "$T/view"; then
	(printf "INSERT INTO repos (path, created_at) VALUES ('/seen/through/the/wal', 2);\n"; sleep 3) |
		sqlite3 "$lab/klab.db" &
	sleep 1
	check "the writer's WAL is there" test -s "$lab/klab.db-wal"
	out=$("$KLAB" --state "$T/view" bisect list 2>&1); rc=$?
	check "list works on a read-only view of a live lab" test "$rc" -eq 0
	check "and shows the bisection" has "$out" "1	done	culprit*"
	err=$("$KLAB" --state "$T/view" bisect resume 1 2>&1); rc=$?
	check "a writer is refused on the read-only view" has "$err" "*'$T/view' is on a read-only file system*"
	wait
	umount "$T/view"
fi

# ---- full --------------------------------------------------------------------
if mount_tmpfs "$T/full" 2m; then
	lab=$T/full/lab
	"$KLAB" --state "$lab" init >/dev/null
	"$KLAB" --state "$lab" bisect start --repo "$T/repo" --good HEAD~7 --bad HEAD -- "$T/test.sh" >/dev/null 2>&1
	"$KLAB" --state "$lab" bisect list > "$T/full-before.out" 2>&1
	dd if=/dev/zero of="$T/full/filler" bs=64k 2>/dev/null
	check "the lab's file system is full (dd hit ENOSPC)" test "$(df -k --output=avail "$T/full" | tail -n 1 | tr -d ' ')" -eq 0
	out=$("$KLAB" --state "$lab" bisect list 2>&1); rc=$?
	check "list works on a full lab" test "$rc" -eq 0
	check "list on a full lab prints what it did before" test "$out" = "$(cat "$T/full-before.out")"
	err=$("$KLAB" --state "$lab" bisect resume 1 2>&1); rc=$?
	check "a writer is refused on a full lab" test "$rc" -eq 1
	check "it says no space is left, with the path" has "$err" "*no space left on device for the lab '$lab' (0 KiB free)*"
	check "and not 'disk I/O error'" sh -c "! printf '%s' '$err' | grep -q 'disk I/O'"
	rm -f "$T/full/filler"
	out=$("$KLAB" --state "$lab" bisect resume 1 2>&1); rc=$?
	check "once space is back the lab is writable again" has "$out" "*bisection 1 is already done*"
fi
cleanup
trap - EXIT
finish
