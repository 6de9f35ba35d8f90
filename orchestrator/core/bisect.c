/* Next-commit choice over a DAG, reproducing git bisect's algorithm
 * (bisect.c in git): the same candidate order, weights, halfway
 * short-cut, tie-breaks and skip_away, so klab needs no more steps than
 * git and names the same culprit. */
#include "core/bisect.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

KLAB_ENUM_IMPL(bisect_mark, BISECT_MARK_LAST, NULL, "good", "bad", "skip")

void bisect_dag_init(struct bisect_dag *dag)
{
	memset(dag, 0, sizeof(*dag));
}

void bisect_dag_release(struct bisect_dag *dag)
{
	for (size_t i = 0; i < dag->nr; i++)
		free(dag->commits[i].parents);
	free(dag->commits);
	bisect_dag_init(dag);
}

int bisect_dag_add(struct bisect_dag *dag, const unsigned char oid[20], int64_t date)
{
	struct bisect_commit *c;

	ALLOC_GROW(dag->commits, dag->nr + 1, dag->alloc);
	c = &dag->commits[dag->nr];
	memset(c, 0, sizeof(*c));
	memcpy(c->oid, oid, 20);
	c->date = date;
	return (int)dag->nr++;
}

void bisect_state_init(struct bisect_state *st, const struct bisect_dag *dag, int bad)
{
	st->bad = bad;
	st->marks = xcalloc(dag->nr ? dag->nr : 1, 1);
	st->nr_skipped = 0;
}

void bisect_state_release(struct bisect_state *st)
{
	free(st->marks);
	st->marks = NULL;
}

void bisect_mark(struct bisect_state *st, int commit, enum bisect_mark mark)
{
	if (mark == BISECT_SKIP)
		st->nr_skipped++;
	if (commit < 0)
		return;
	st->marks[commit] = (unsigned char)mark;
	if (mark == BISECT_BAD)
		st->bad = commit;
}

void bisect_choice_release(struct bisect_choice *c)
{
	free(c->candidates);
	c->candidates = NULL;
	c->nr_candidates = 0;
}

void bisect_next_both(const struct bisect_dag *dag, struct bisect_state *st, int commit, int next[2])
{
	static const enum bisect_mark as[2] = { BISECT_GOOD, BISECT_BAD };
	unsigned char was = st->marks[commit];
	int bad = st->bad;

	for (int i = 0; i < 2; i++) {
		struct bisect_choice c;

		bisect_mark(st, commit, as[i]);
		bisect_choose(dag, st, &c);
		next[i] = c.outcome == BISECT_TEST ? c.commit : -1;
		bisect_choice_release(&c);
		st->marks[commit] = was;
		st->bad = bad;
	}
}

int bisect_estimate_steps(int all)
{
	int n = 0, e, x;

	if (all < 3)
		return 0;
	while ((1 << (n + 1)) <= all)
		n++;
	e = 1 << n;
	x = all - e;
	return (e < 3 * x) ? n : n - 1;
}

/* Working data for one choice. */
struct walk {
	const struct bisect_dag *dag;
	const struct bisect_state *st;
	unsigned char *interesting;	/* in the current candidate set */
	int *weight;
	unsigned *counted;		/* generation marks for count_distance */
	unsigned gen;
	int *stack;
};

/* The walk's per-commit arrays for a DAG of n commits. */
static void walk_alloc(struct walk *w, size_t n)
{
	w->interesting = xcalloc(n, 1);
	w->weight = xcalloc(n, sizeof(int));
	w->counted = xcalloc(n, sizeof(unsigned));
	w->stack = xmalloc((n + 1) * sizeof(int));
}

static void walk_release(struct walk *w)
{
	FREE_MANY(w->interesting, w->weight, w->counted, w->stack);
}

static int nparents(const struct walk *w, const struct bisect_commit *c)
{
	return w->dag->first_parent && c->nr_parents > 1 ? 1 : c->nr_parents;
}

/* Candidates: reachable from bad within the DAG, minus everything
 * reachable from a commit marked good. Paths never leave the DAG: any
 * commit outside it is reachable from an initial good commit. */
static void mark_interesting(struct walk *w)
{
	const struct bisect_dag *dag = w->dag;
	size_t n = dag->nr, sp = 0;
	unsigned char *from_good = xcalloc(n, 1);

	for (size_t i = 0; i < n; i++) {
		if (w->st->marks[i] != BISECT_GOOD || from_good[i])
			continue;
		from_good[i] = 1;
		w->stack[sp++] = (int)i;
		while (sp) {
			const struct bisect_commit *c = &dag->commits[w->stack[--sp]];
			for (int p = 0; p < nparents(w, c); p++) {
				int q = c->parents[p];
				if (q >= 0 && !from_good[q]) {
					from_good[q] = 1;
					w->stack[sp++] = q;
				}
			}
		}
	}
	if (!from_good[w->st->bad]) {
		w->interesting[w->st->bad] = 1;
		w->stack[sp++] = w->st->bad;
	}
	while (sp) {
		const struct bisect_commit *c = &dag->commits[w->stack[--sp]];
		for (int p = 0; p < nparents(w, c); p++) {
			int q = c->parents[p];
			if (q >= 0 && !from_good[q] && !w->interesting[q]) {
				w->interesting[q] = 1;
				w->stack[sp++] = q;
			}
		}
	}
	free(from_good);
}

/* The order git's limited revision walk emits candidates in: pop the
 * newest commit from a date-ordered list, insert its parents after every
 * entry of equal or newer date (commit_list_insert_by_date). */
static int walk_order(struct walk *w, int *order)
{
	const struct bisect_dag *dag = w->dag;
	size_t n = dag->nr;
	int *queue = xmalloc(n * sizeof(int));
	unsigned char *seen = xcalloc(n, 1);
	size_t head = 0, tail = 0;
	int nr = 0;

	/* The queue is kept sorted in queue[head..tail); inserting shifts. */
	queue[tail++] = w->st->bad;
	seen[w->st->bad] = 1;
	while (head < tail) {
		int ci = queue[head++];
		const struct bisect_commit *c = &dag->commits[ci];

		order[nr++] = ci;
		for (int p = 0; p < nparents(w, c); p++) {
			int q = c->parents[p];
			size_t pos;

			if (q < 0 || !w->interesting[q] || seen[q])
				continue;
			seen[q] = 1;
			for (pos = head; pos < tail; pos++)
				if (dag->commits[queue[pos]].date < dag->commits[q].date)
					break;
			memmove(&queue[pos + 1], &queue[pos], (tail - pos) * sizeof(int));
			queue[pos] = q;
			tail++;
		}
	}
	free(queue);
	free(seen);
	return nr;
}

/* Candidates reachable from `start` (itself included) that are not
 * TREESAME: git's count_distance. */
static int count_distance(struct walk *w, int start)
{
	const struct bisect_dag *dag = w->dag;
	size_t sp = 0;
	int nr = 0;

	w->gen++;
	w->stack[sp++] = start;
	w->counted[start] = w->gen;
	while (sp) {
		const struct bisect_commit *c = &dag->commits[w->stack[--sp]];
		if (!(c->flags & BISECT_TREESAME))
			nr++;
		for (int p = 0; p < c->nr_parents; p++) {
			int q = c->parents[p];
			if (q < 0 || !w->interesting[q] || w->counted[q] == w->gen)
				continue;
			w->counted[q] = w->gen;
			w->stack[sp++] = q;
		}
	}
	return nr;
}

static int approx_halfway(const struct walk *w, int c, int nr)
{
	int diff;

	if (w->dag->commits[c].flags & BISECT_TREESAME)
		return 0;
	diff = 2 * w->weight[c] - nr;
	if (diff >= -1 && diff <= 1)
		return 1;
	return abs(diff) < nr / 1024;
}

struct dist {
	int commit;
	int distance;
	const unsigned char *oid;
};

static int cmp_dist(const void *a_, const void *b_)
{
	const struct dist *a = a_, *b = b_;

	if (a->distance != b->distance)
		return b->distance - a->distance;
	return memcmp(a->oid, b->oid, 20);
}

/* git's PRN and integer square root used to pick a commit away from a
 * skipped one. */
static unsigned get_prn(unsigned count)
{
	count = count * 1103515245u + 12345u;
	return (count / 65536) % 32768;
}

static int sqrti(int val)
{
	float d, x = (float)val;

	if (!val)
		return 0;
	do {
		float y = (x + (float)val / x) / 2;
		d = (y > x) ? y - x : x - y;
		x = y;
	} while (d >= 0.5);
	return (int)x;
}

/* Candidates in find_bisection's order (oldest first) into list; the
 * number of them that are not TREESAME into *nr.  Returns the list's
 * length. */
static int candidate_list(struct walk *w, int *order, int *list, int *nr)
{
	int on_list;

	mark_interesting(w);
	on_list = walk_order(w, order);
	*nr = 0;
	/* find_bisection reverses the walk's list: oldest first. */
	for (int i = 0; i < on_list; i++) {
		list[i] = order[on_list - 1 - i];
		if (!(w->dag->commits[list[i]].flags & BISECT_TREESAME))
			(*nr)++;
	}
	return on_list;
}

/* How far commit c is from cutting the nr candidates in half: the
 * smaller side of its weight (git's weight vs nr - weight). */
static int halfway_distance(const struct walk *w, int c, int nr)
{
	int d = w->weight[c];

	return nr - d < d ? nr - d : d;
}

/* git's do_find_bisection: every candidate's weight (the candidates it
 * reaches).  Without find_all it stops at the first commit about halfway
 * and returns it; otherwise (or when none is) -1. */
static int compute_weights(struct walk *w, const int *list, int on_list, int nr, int find_all)
{
	const struct bisect_dag *dag = w->dag;
	int counted = 0;

	/* Initial weights: 1 for roots of the set, -1 one parent, -2 merges. */
	for (int i = 0; i < on_list; i++) {
		const struct bisect_commit *c = &dag->commits[list[i]];
		int cnt = 0;

		for (int p = 0; p < c->nr_parents; p++) {
			if (c->parents[p] >= 0 && w->interesting[c->parents[p]])
				cnt++;
			if (dag->first_parent)
				break;
		}
		if (cnt == 0) {
			w->weight[list[i]] = 0;
			if (!(c->flags & BISECT_TREESAME)) {
				w->weight[list[i]] = 1;
				counted++;
			}
		} else {
			w->weight[list[i]] = cnt == 1 ? -1 : -2;
		}
	}
	for (int i = 0; i < on_list; i++) {
		int c = list[i];
		if (w->weight[c] != -2)
			continue;
		w->weight[c] = count_distance(w, c);
		if (!find_all && approx_halfway(w, c, nr))
			return c;
		counted++;
	}
	while (counted < nr) {
		int progress = 0;
		for (int i = 0; i < on_list; i++) {
			int c = list[i], known = -1;
			const struct bisect_commit *cm = &dag->commits[c];

			if (w->weight[c] >= 0)
				continue;
			for (int p = 0; p < cm->nr_parents; p++) {
				int q = cm->parents[p];
				if (q >= 0 && w->interesting[q] && w->weight[q] >= 0) {
					known = q;
					break;
				}
				if (dag->first_parent)
					break;
			}
			if (known < 0)
				continue;
			progress = 1;
			if (!(cm->flags & BISECT_TREESAME)) {
				w->weight[c] = w->weight[known] + 1;
				counted++;
			} else {
				w->weight[c] = w->weight[known];
			}
			if (!find_all && approx_halfway(w, c, nr))
				return c;
		}
		if (!progress)
			break;	/* cannot happen on a DAG; never spin */
	}
	return -1;
}

void bisect_choose(const struct bisect_dag *dag, const struct bisect_state *st,
		   struct bisect_choice *out)
{
	struct walk w = { .dag = dag, .st = st };
	size_t n = dag->nr;
	int *order, *list, on_list, nr = 0, best = -1;
	int find_all = st->nr_skipped > 0;
	struct dist *sorted = NULL;
	int nsorted = 0;

	memset(out, 0, sizeof(*out));
	out->commit = -1;
	walk_alloc(&w, n);
	order = xmalloc(n * sizeof(int));
	list = xmalloc(n * sizeof(int));

	on_list = candidate_list(&w, order, list, &nr);
	out->all = nr;
	best = compute_weights(&w, list, on_list, nr, find_all);
	if (best >= 0)
		goto chosen;

	if (!find_all) {
		int best_distance = -1;
		best = on_list ? list[0] : -1;
		for (int i = 0; i < on_list; i++) {
			int c = list[i], d;
			if (dag->commits[c].flags & BISECT_TREESAME)
				continue;
			d = halfway_distance(&w, c, nr);
			if (d > best_distance) {
				best = c;
				best_distance = d;
			}
		}
	} else {
		sorted = xmalloc((on_list + 1) * sizeof(*sorted));
		for (int i = 0; i < on_list; i++) {
			int c = list[i], d;
			if (dag->commits[c].flags & BISECT_TREESAME)
				continue;
			d = halfway_distance(&w, c, nr);
			sorted[nsorted].commit = c;
			sorted[nsorted].distance = d;
			sorted[nsorted].oid = dag->commits[c].oid;
			nsorted++;
		}
		qsort(sorted, nsorted, sizeof(*sorted), cmp_dist);
	}

chosen:
	if (!find_all) {
		if (nr == 0 || best < 0) {
			out->outcome = BISECT_NO_TESTABLE;
			goto cleanup;
		}
	} else {
		/* managed_skipped: drop skipped commits; if the best one was
		 * skipped, pick one away from it (skip_away). */
		int *kept = xmalloc((nsorted + 1) * sizeof(int));
		int nkept = 0, skipped_first = 0;

		out->candidates = xmalloc((nsorted + 2) * sizeof(int));
		for (int i = 0; i < nsorted; i++) {
			int c = sorted[i].commit;
			if (st->marks[c] == BISECT_SKIP) {
				if (nkept == 0)
					skipped_first = 1;
				out->candidates[out->nr_candidates++] = c;
			} else {
				kept[nkept++] = c;
				if (!skipped_first)
					break;
			}
		}
		if (!skipped_first) {
			/* first non-skipped commit wins; skipped ones before it: none */
			out->nr_candidates = 0;
			best = nkept ? kept[0] : -1;
		} else if (nkept) {
			unsigned prn = get_prn((unsigned)nkept);
			int index = (int)(((int64_t)nkept * prn / 32768) * sqrti((int)prn) / sqrti(32768));
			best = kept[0];
			for (int i = 0; i < nkept; i++) {
				if (i == index) {
					if (kept[i] != st->bad)
						best = kept[i];
					else if (i > 0)
						best = kept[i - 1];
					else
						best = kept[0];
					break;
				}
			}
		} else {
			best = -1;
		}
		free(kept);
		if (best < 0) {
			out->outcome = out->nr_candidates ? BISECT_SKIPPED_ONLY : BISECT_NO_TESTABLE;
			goto cleanup;
		}
		if (nr == 0) {
			out->outcome = BISECT_NO_TESTABLE;
			goto cleanup;
		}
	}

	out->commit = best;
	if (best == st->bad) {
		if (out->nr_candidates) {
			out->candidates[out->nr_candidates++] = best;
			out->outcome = BISECT_SKIPPED_ONLY;
		} else {
			out->outcome = BISECT_FOUND;
		}
		goto cleanup;
	}
	out->outcome = BISECT_TEST;
	out->remaining = nr - w.weight[best] - 1;
	out->steps = bisect_estimate_steps(nr);
	out->nr_candidates = 0;

cleanup:
	if (out->outcome != BISECT_SKIPPED_ONLY) {
		free(out->candidates);
		out->candidates = NULL;
		out->nr_candidates = 0;
	}
	free(sorted);
	walk_release(&w);
	free(order);
	free(list);
}

int bisect_dag_find(const struct bisect_dag *dag, const unsigned char oid[20])
{
	for (size_t i = 0; i < dag->nr; i++)
		if (!memcmp(dag->commits[i].oid, oid, 20))
			return (int)i;
	return -1;
}

/* ---- multisection: k commits at once ------------------------------------ */

int bisect_estimate_rounds(int all, int k)
{
	int n = 0;

	if (k <= 1)
		return bisect_estimate_steps(all);
	/* each round leaves about a (k+1)th of the candidates; the round
	 * about to run is not counted, as for git's steps */
	while (all > 1) {
		all = (all + k) / (k + 1);
		n++;
	}
	return n ? n - 1 : 0;
}

struct pick {
	int commit;
	int weight;
	int pos;	/* in find_bisection's order */
};

static int cmp_pick_weight(const void *a_, const void *b_)
{
	const struct pick *a = a_, *b = b_;

	if (a->weight != b->weight)
		return a->weight - b->weight;
	return a->pos - b->pos;
}

int bisect_choose_k(const struct bisect_dag *dag, const struct bisect_state *st, int k,
		    struct bisect_choice *out, int *commits)
{
	struct walk w = { .dag = dag, .st = st };
	size_t n = dag->nr;
	int *order, *list, on_list, nr = 0, npicked = 0, ncand = 0;
	struct pick *cand, *picked;

	bisect_choose(dag, st, out);
	if (out->outcome != BISECT_TEST)
		return 0;
	commits[0] = out->commit;
	if (k <= 1)
		return 1;

	walk_alloc(&w, n);
	order = xmalloc(n * sizeof(int));
	list = xmalloc(n * sizeof(int));
	cand = xmalloc((n + 1) * sizeof(*cand));
	picked = xmalloc((size_t)k * sizeof(*picked));

	on_list = candidate_list(&w, order, list, &nr);
	compute_weights(&w, list, on_list, nr, 1);
	/* Testable: counted, not skipped, not the bad commit itself. */
	for (int i = 0; i < on_list; i++) {
		int c = list[i];
		if ((dag->commits[c].flags & BISECT_TREESAME) || st->marks[c] == BISECT_SKIP || c == st->bad)
			continue;
		cand[ncand].commit = c;
		cand[ncand].weight = w.weight[c];
		cand[ncand].pos = i;
		ncand++;
	}
	/* The i-th pick splits off about i/(k+1) of the candidates: the
	 * closest weight to i*nr/(k+1) not taken yet; ties go to the earlier
	 * commit in git's order. */
	for (int i = 1; i <= k && npicked < ncand; i++) {
		int64_t target2 = 2 * (int64_t)i * nr;	/* 2(k+1) x the target */
		int best = -1;
		int64_t best_d = 0;

		for (int j = 0; j < ncand; j++) {
			int64_t d;
			int taken = 0;
			for (int q = 0; q < npicked; q++)
				taken |= picked[q].commit == cand[j].commit;
			if (taken)
				continue;
			d = 2 * (int64_t)(k + 1) * cand[j].weight - target2;
			if (d < 0)
				d = -d;
			if (best < 0 || d < best_d) {
				best = j;
				best_d = d;
			}
		}
		if (best < 0)
			break;
		picked[npicked++] = cand[best];
	}
	qsort(picked, npicked, sizeof(*picked), cmp_pick_weight);
	for (int i = 0; i < npicked; i++)
		commits[i] = picked[i].commit;
	out->commit = commits[0];
	out->remaining = nr - 1 - npicked;
	out->steps = bisect_estimate_rounds(nr, k);

	walk_release(&w);
	free(order);
	free(list);
	free(cand);
	free(picked);
	return npicked;
}

int bisect_dag_reaches(const struct bisect_dag *dag, int from, int to)
{
	unsigned char *seen;
	int *stack, sp = 0, found = 0;

	if (from < 0 || to < 0)
		return 0;
	if (from == to)
		return 1;
	seen = xcalloc(dag->nr, 1);
	stack = xmalloc((dag->nr + 1) * sizeof(int));
	stack[sp++] = from;
	seen[from] = 1;
	while (sp && !found) {
		const struct bisect_commit *c = &dag->commits[stack[--sp]];
		int np = dag->first_parent && c->nr_parents > 1 ? 1 : c->nr_parents;
		for (int p = 0; p < np; p++) {
			int q = c->parents[p];
			if (q < 0 || seen[q])
				continue;
			if (q == to) {
				found = 1;
				break;
			}
			seen[q] = 1;
			stack[sp++] = q;
		}
	}
	free(seen);
	free(stack);
	return found;
}

int bisect_mark_round(const struct bisect_dag *dag, struct bisect_state *st, const int *commits,
		      const enum bisect_mark *marks, int n, int *ignored)
{
	int first_bad = -1, nr_ignored = 0;

	for (int i = 0; i < n; i++)
		ignored[i] = 0;
	/* The first bad: one that reaches no other bad of the round (the
	 * earliest in topological order); several unrelated ones: the first
	 * in the round's order. */
	for (int i = 0; i < n && first_bad < 0; i++) {
		int earliest = marks[i] == BISECT_BAD && commits[i] >= 0;
		for (int j = 0; j < n && earliest; j++)
			if (j != i && marks[j] == BISECT_BAD && commits[j] >= 0 &&
			    commits[j] != commits[i] && bisect_dag_reaches(dag, commits[i], commits[j]))
				earliest = 0;
		if (earliest)
			first_bad = i;
	}
	for (int i = 0; i < n; i++) {
		if (marks[i] == BISECT_SKIP) {
			bisect_mark(st, commits[i], BISECT_SKIP);
		} else if (marks[i] == BISECT_GOOD && commits[i] >= 0) {
			/* a good commit that descends from a bad one of the same
			 * round: git would refuse; the bad one wins */
			for (int j = 0; j < n && !ignored[i]; j++)
				if (marks[j] == BISECT_BAD && commits[j] >= 0 &&
				    bisect_dag_reaches(dag, commits[i], commits[j]))
					ignored[i] = 1;
			if (ignored[i])
				nr_ignored++;
			else
				bisect_mark(st, commits[i], BISECT_GOOD);
		} else if (marks[i] == BISECT_BAD && commits[i] >= 0 && i != first_bad) {
			bisect_mark(st, commits[i], BISECT_BAD);
		}
	}
	if (first_bad >= 0)
		bisect_mark(st, commits[first_bad], BISECT_BAD);
	return nr_ignored;
}
