#!/bin/sh
# klab init: state directory lookup order, idempotence, config, database.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

out=$("$KLAB" init --state "$T/lab" 2>&1)
check "init creates a lab" test -f "$T/lab/klab.db" -a -f "$T/lab/klab.conf"
case $out in *"created lab in $T/lab"*) ok "init says where";; *) fail "init output: $out";; esac
echo "# local tweak" >> "$T/lab/klab.conf"
out=$("$KLAB" init --state "$T/lab" 2>&1)
case $out in *"found existing lab"*) ok "init is idempotent";; *) fail "second init: $out";; esac
check "init keeps an existing config" grep -q "local tweak" "$T/lab/klab.conf"
# the schema's version is its newest migration's number
latest=$(ls "$KLAB_SRCDIR"/db/migrations/*.sql | sed 's,.*/0*\([0-9]*\)-[^/]*$,\1,' | sort -n | tail -n 1)
check "schema version recorded" test "$(sqlite3 "$T/lab/klab.db" 'PRAGMA user_version')" = "$latest"

# A lab made by the first release (schema 1) is migrated, its rows kept.
mkdir -p "$T/old"
"$KLAB" init --state "$T/old" >/dev/null
rm -f "$T/old/klab.db"*
sqlite3 "$T/old/klab.db" < "$KLAB_SRCDIR/db/schema.sql"
sqlite3 "$T/old/klab.db" "PRAGMA user_version = 1; INSERT INTO repos (path, created_at) VALUES ('/old/repo', 1)"
"$KLAB" --state "$T/old" bisect list >/dev/null 2>&1
check "schema 1 migrated to $latest" test "$(sqlite3 "$T/old/klab.db" 'PRAGMA user_version')" = "$latest"
check "migration keeps rows" test "$(sqlite3 "$T/old/klab.db" "SELECT path FROM repos")" = /old/repo
check "migration adds run_sets" sqlite3 "$T/old/klab.db" "SELECT count(*) FROM run_sets"
check "migration 3 adds track_fetches and run_sets.track_tip_id" \
	sqlite3 "$T/old/klab.db" "SELECT count(*) FROM track_fetches; SELECT track_tip_id FROM run_sets LIMIT 0"
check "migration 5 adds bisections.slots and steps.round" \
	sqlite3 "$T/old/klab.db" "SELECT slots FROM bisections LIMIT 0; SELECT round FROM steps LIMIT 0"
check "WAL mode" test "$(sqlite3 "$T/lab/klab.db" 'PRAGMA journal_mode')" = wal

# A database klab cannot trust is refused, naming the file, and left as
# it is: a version outside 0..latest (issue 16 item 3), a lab whose
# database is lost, empty or not a database (item 7) is never taken for
# a new lab, not even by init.
"$KLAB" init --state "$T/bad" >/dev/null
db="$T/bad/klab.db"
cp "$db" "$T/bad.db.saved"
refused() { # what, expected text, command...
	what=$1 want=$2; shift 2
	err=$("$@" 2>&1); rc=$?
	case $rc:$err in
	0:*) fail "$what: accepted (rc 0): $err";;
	*"'$db'"*"$want"*) ok "$what: refused, naming the file";;
	*) fail "$what: message: $err";;
	esac
}
for v in -1 -2147483648; do
	sqlite3 "$db" "PRAGMA user_version = $v"
	sum=$(sqlite3 "$db" .dump | sha256sum)
	refused "schema version $v" "schema version $v," "$KLAB" --state "$T/bad" bisect list
	check "schema version $v: nothing stored is touched" \
		test "$(sqlite3 "$db" .dump | sha256sum)" = "$sum" -a "$(sqlite3 "$db" 'PRAGMA user_version')" = "$v"
done
sqlite3 "$db" "PRAGMA user_version = $((latest + 1))"
refused "a newer schema" "made by a newer klab" "$KLAB" --state "$T/bad" bisect list
check "a newer schema is kept" test "$(sqlite3 "$db" 'PRAGMA user_version')" = $((latest + 1))
rm -f "$db"*
: > "$db"
refused "a 0-byte database" "is empty (0 bytes)" "$KLAB" --state "$T/bad" bisect list
refused "a 0-byte database, klab init" "is empty (0 bytes)" "$KLAB" --state "$T/bad" init
check "a 0-byte database stays 0 bytes" test ! -s "$db"
yes 'not a database' | head -c 8192 > "$db"
cp "$db" "$T/corrupt.saved"
refused "a corrupt database" "is not a SQLite database" "$KLAB" --state "$T/bad" bisect list
check "a corrupt database is kept as it was" cmp -s "$db" "$T/corrupt.saved"
rm -f "$db"
refused "a lost database" "is missing" "$KLAB" --state "$T/bad" bisect list
check "a lost database is not re-created" test ! -e "$db"
cp "$T/bad.db.saved" "$db"
check "the restored database is used" "$KLAB" --state "$T/bad" bisect list

KLAB_STATE="$T/env" "$KLAB" init >/dev/null && ok "KLAB_STATE honoured" || fail "KLAB_STATE"
check "KLAB_STATE lab exists" test -f "$T/env/klab.db"
XDG_STATE_HOME="$T/xdg" "$KLAB" init >/dev/null
check "XDG_STATE_HOME/klab used" test -f "$T/xdg/klab/klab.db"
HOME="$T/home" "$KLAB" init >/dev/null
check "~/.local/state/klab used" test -f "$T/home/.local/state/klab/klab.db"
"$KLAB" --state "$T/global" init >/dev/null
check "global --state works" test -f "$T/global/klab.db"

err=$("$KLAB" --state "$T/nowhere" bisect list 2>&1); rc=$?
check "a missing lab is an error" test "$rc" -ne 0
case $err in *"run 'klab init'"*) ok "a missing lab says how to create it";; *) fail "missing lab message: $err";; esac
check "a missing lab is not created by other commands" test ! -e "$T/nowhere"

echo "bogus line" >> "$T/lab/klab.conf"
err=$("$KLAB" --state "$T/lab" bisect list 2>&1); rc=$?
check "a broken config is refused" test "$rc" -ne 0
case $err in *"klab.conf:"*"expected 'key = value'"*) ok "config error has file:line";; *) fail "config error: $err";; esac

"$KLAB" --help >/dev/null && ok "--help exits 0" || fail "--help"
"$KLAB" nosuchcmd >/dev/null 2>&1; check "unknown command exits 2" test $? -eq 2
"$KLAB" --version | grep -q '^klab ' && ok "--version" || fail "--version"
finish
