#!/bin/sh
# report-check.sh LAB_STATE OUTDIR [ID]: run `klab report -o OUTDIR` on a
# lab and check the page of each job bisection (or of bisection ID): an
# inline <svg> chart with one point group (<g class="step ...">) per
# tested commit, as many as the bisection's rows in `steps`.
# Prints ok/not ok lines; exits 0 when all hold.  For tests that have a
# real job-bisection lab (t-perf-bisect.sh):
#   check "report chart" sh "$KLAB_SRCDIR/tests/report-check.sh" "$lab" "$T/report"
set -u
lab=$1 out=$2 only=${3:-}
: "${KLAB:=klab}"
bad=0

if ! "$KLAB" --state "$lab" report -o "$out" >"$out.log" 2>&1; then
	echo "not ok - klab report failed: $(cat "$out.log")"
	exit 1
fi
if [ -n "$only" ]; then
	ids=$only
else
	ids=$(sqlite3 "$lab/klab.db" "SELECT id FROM bisections WHERE kind = 'job' ORDER BY id")
fi
[ -n "$ids" ] || { echo "not ok - no job bisection in $lab"; exit 1; }
for id in $ids; do
	page="$out/bisect-$id.html"
	steps=$(sqlite3 "$lab/klab.db" "SELECT count(*) FROM steps WHERE bisection_id = $id")
	if [ ! -s "$page" ]; then
		echo "not ok - bisection $id: no page $page"
		bad=1
		continue
	fi
	svgs=$(grep -c '<svg' "$page")
	# the chart: from <svg to </svg>, one group per step
	groups=$(sed -n '/<svg/,/<\/svg>/p' "$page" | grep -o '<g class="step [a-z]*">' | wc -l)
	if [ "$svgs" -ge 1 ] && [ "$steps" -gt 0 ] && [ "$groups" -eq "$steps" ]; then
		echo "ok - bisection $id: chart with $groups point groups for $steps tested commits"
	else
		echo "not ok - bisection $id: $svgs svg, $groups point groups, $steps steps in the database"
		bad=1
	fi
done
exit $bad
