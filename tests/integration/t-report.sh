#!/bin/sh
# klab report on a real bisection whose commit subjects are hostile:
# the text stays text (escaped in the HTML, no element in Chromium's DOM),
# every page is valid for tidy, regenerating rewrites only what changed,
# bad arguments get one line.  Needs Debian's chromium and tidy
# (./bootstrap installs them); fails, never skips, without them.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
: "${KLAB_BUILDDIR:=$KLAB_SRCDIR}"

require_tools chromium tidy sqlite3

lab="$T/lab"
k() { "$KLAB" --state "$lab" "$@"; }
"$KLAB" --state "$lab" init >/dev/null

hostile='<script>alert(1)</script><img src=x onerror=alert(2)>'
# 20 commits; the 13th (the culprit) has the hostile subject, the others
# quotes, ampersands and markup; commit 13 on adds 'broken'.
subject_of() {
	case $1 in
	13) printf '%s' "$hostile" ;;
	*) echo "commit $1: fix \"quoted\" & 'single' <b>bold</b> &amp; done" ;;
	esac
}
make_linear_repo "$T/repo" 20 13 subject_of "R&D \"Team\" O'Neil <rd@klab.invalid>"
write_test_script "$T/test.sh"
culprit=$(git -C "$T/repo" rev-parse main~7)

k bisect start --repo "$T/repo" --good main~19 --bad main -- "$T/test.sh" >"$T/bisect.out" 2>&1
check "the bisection names the hostile commit" grep -q "$culprit is the first bad commit" "$T/bisect.out"

out="$T/report"
k report -o "$out" >"$T/r1.out" 2>&1; rc=$?
check "klab report exits 0" test "$rc" -eq 0
check "first run writes index and the bisection page" grep -q "^report: 2 pages written, 0 unchanged" "$T/r1.out"
check "index.html and bisect-1.html exist" test -s "$out/index.html" -a -s "$out/bisect-1.html"
check "the steps' logs are copied" test "$(ls "$out/logs/bisect-1" | wc -l)" -eq "$(sqlite3 "$lab/klab.db" "SELECT count(*) FROM steps WHERE bisection_id = 1")"

escaped='&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;'
check "the hostile subject is escaped on the bisection page" grep -qF "$escaped" "$out/bisect-1.html"
check "the hostile subject is escaped on the index" grep -qF "$escaped" "$out/index.html"
check "quotes and ampersands are escaped" grep -qF ': fix &quot;quoted&quot; &amp; &#39;single&#39; &lt;b&gt;bold&lt;/b&gt; &amp;amp; done' "$out/bisect-1.html"
check "the author is escaped" grep -qF 'R&amp;D &quot;Team&quot; O&#39;Neil' "$out/bisect-1.html"
check "no raw markup from the repository" sh -c "! grep -q -e '<script' -e '<img' -e '<b>bold' '$out'/*.html"

# A golden page of test-report.c holds the page's <title> line and its
# body: tidy reads it put back into web/page.html with web/style.css.
golden_page() {
	awk -v golden="$1" -v css="$KLAB_SRCDIR/web/style.css" '
		index($0, "{{title}}") { getline line <golden; print line; next }
		index($0, "{{style}}") == 1 { while ((getline line <css) > 0) print line; $0 = substr($0, 10) }
		index($0, "{{body}}") == 1 { while ((getline line <golden) > 0) print line; $0 = substr($0, 9) }
		{ print }' "$KLAB_SRCDIR/web/page.html"
}
mkdir -p "$T/golden"
for golden in "$KLAB_SRCDIR"/tests/data/report/*.html; do
	golden_page "$golden" >"$T/golden/$(basename "$golden")"
done

# tidy: no errors and no warnings on every page
for page in "$out"/*.html "$T"/golden/*.html; do
	tidy -q -e "$page" >"$T/tidy.out" 2>&1; rc=$?
	check "tidy: $(basename "$page") is clean" test "$rc" -eq 0 || cat "$T/tidy.out"
done

# a real browser: the text is text (no script, no img element)
chrome() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$T/chromium" "$@" 2>>"$T/chromium.err"
}
for page in index.html bisect-1.html; do
	chrome --dump-dom "file://$out/$page" >"$T/dom-$page"
	check "chromium renders $page" grep -q '</html>' "$T/dom-$page"
	check "$page: no <script> element in the DOM" sh -c "! grep -qi '<script' '$T/dom-$page'"
	check "$page: no element carries onerror" sh -c "! grep -Eqi '<[^>]*onerror' '$T/dom-$page'"
	check "$page: the hostile subject is a text node" grep -qF "$escaped" "$T/dom-$page"
done
shot="$KLAB_BUILDDIR/tests/integration/t-report-bisect.png"
mkdir -p "$(dirname "$shot")"
rm -f "$shot"
chrome --screenshot="$shot" --window-size=1100,1600 "file://$out/bisect-1.html" >/dev/null
check "a screenshot is kept as a test artifact ($shot)" test -s "$shot"

# the chart, on a job bisection: the fixed lab of the unit test, checked
# by the script t-perf-bisect can use on a real one
jlab="$T/joblab"
"$KLAB" --state "$jlab" init >/dev/null
sqlite3 "$jlab/klab.db" <"$KLAB_SRCDIR/tests/data/report/lab.sql"
check "report-check: one point group per tested commit" sh "$KLAB_SRCDIR/tests/report-check.sh" "$jlab" "$T/jobreport"
chrome --dump-dom "file://$T/jobreport/bisect-1.html" >"$T/dom-job.html"
check "chromium: the chart is an <svg> in the DOM" grep -q '<svg' "$T/dom-job.html"
check "chromium: 9 point groups in the chart" test "$(grep -o '<g class="step [a-z]*">' "$T/dom-job.html" | wc -l)" -eq 9
check "chromium: no <script> on the job page" sh -c "! grep -qi '<script' '$T/dom-job.html'"
shot2="$KLAB_BUILDDIR/tests/integration/t-report-chart.png"
rm -f "$shot2"
chrome --screenshot="$shot2" --window-size=1100,1400 "file://$T/jobreport/bisect-1.html" >/dev/null
check "a screenshot of the chart is kept ($shot2)" test -s "$shot2"
for page in "$T/jobreport"/*.html; do
	tidy -q -e "$page" >"$T/tidy.out" 2>&1; rc=$?
	check "tidy: job lab $(basename "$page") is clean" test "$rc" -eq 0 || cat "$T/tidy.out"
done

# regenerating: nothing changed, nothing written
k report -o "$out" >"$T/r2.out" 2>&1
check "a second run rewrites 0 pages" grep -q "^report: 0 pages written, 2 unchanged" "$T/r2.out"
before=$(stat -c %Y.%i "$out/bisect-1.html")

# one more bisection: only the index and its page are written
k bisect start --repo "$T/repo" --good main~19 --bad main~3 -- "$T/test.sh" >/dev/null 2>&1
k report -o "$out" >"$T/r3.out" 2>&1
check "after one more bisection: 2 pages written (index, new page), 1 unchanged" \
	grep -q "^report: 2 pages written, 1 unchanged" "$T/r3.out" || cat "$T/r3.out"
check "the old page was not touched" test "$(stat -c %Y.%i "$out/bisect-1.html")" = "$before"
check "the new page exists" test -s "$out/bisect-2.html"

# --since: an old date keeps all, a future one none
k report -o "$T/since" --since 2000-01-01 >/dev/null 2>&1
check "--since 2000-01-01 keeps both bisections" test -s "$T/since/bisect-2.html" -a -s "$T/since/bisect-1.html"
k report -o "$T/since2" --since 2999-01-01 >/dev/null 2>&1
check "--since 2999-01-01 keeps none" sh -c "! ls '$T/since2'/bisect-*.html >/dev/null 2>&1"

# a log that went away is said, not fatal
rm -rf "$lab/logs/bisect-2"
rm -rf "$T/gone"
k report -o "$T/gone" >"$T/gone.out" 2>&1; rc=$?
check "missing logs do not fail the report" test "$rc" -eq 0
check "missing logs read 'log gone'" grep -q 'log gone' "$T/gone/bisect-2.html"

# bad input: non-zero, one line on stderr
: >"$T/a-file"
one_line_error() {
	desc=$1; shift
	"$@" >"$T/err.out" 2>"$T/err.err"; rc=$?
	if [ "$rc" -ne 0 ] && [ "$(wc -l <"$T/err.err")" -eq 1 ] && [ ! -s "$T/err.out" ]; then
		ok "$desc: exit $rc, one line"
	else
		fail "$desc: exit $rc, stderr: $(cat "$T/err.err")"
	fi
}
one_line_error "no -o" k report
one_line_error "-o without a value" k report -o
one_line_error "unknown option" k report -o "$T/x" --colour
one_line_error "stray argument" k report -o "$T/x" extra
one_line_error "bad --since" k report -o "$T/x" --since yesterday
one_line_error "output is a file" k report -o "$T/a-file"
one_line_error "output under a file (unwritable)" k report -o "$T/a-file/sub"
one_line_error "no lab" "$KLAB" --state "$T/no-lab" report -o "$T/x"
"$KLAB" report --help >"$T/help.out" 2>&1; rc=$?
check "--help exits 0 and shows usage" sh -c "test $rc -eq 0 && grep -q '^usage: klab report -o DIR' '$T/help.out'"
finish
