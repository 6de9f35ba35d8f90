/* libgit2 wrappers: resolve revisions, commit facts, merge bases, the
 * candidate DAG, and klab's own worktree.  Every libgit2 error is turned
 * into one klab message by git_fail(). */
#include "lab/gitrepo.h"
#include "util/util.h"
#include "util/strbuf.h"
#include "util/run-command.h"

#include <dirent.h>
#include <errno.h>
#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct gitrepo {
	git_repository *repo;
	char *path;
	char *objects_dir;
};

struct worktree {
	git_repository *repo;
	char *path;
};

/* libgit2's reason for the last failure. */
static const char *git_msg(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown libgit2 error";
}

static int git_fail(const char *what, const char *subject)
{
	return error("%s '%s': %s", what, subject, git_msg());
}

void gitrepo_global_init(void)
{
	git_libgit2_init();
	/* Objects come from a repository we trust as much as git does; git
	 * itself does not re-hash every object it reads either. */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, (ssize_t)256 * 1024 * 1024);
}

void oid_to_hex41(const unsigned char oid[20], char hex[41])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 20; i++) {
		hex[2 * i] = digits[oid[i] >> 4];
		hex[2 * i + 1] = digits[oid[i] & 15];
	}
	hex[40] = '\0';
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hex_to_oid(const char *hex, unsigned char oid[20])
{
	for (int i = 0; i < 20; i++) {
		int hi = hexval((unsigned char)hex[2 * i]);
		int lo = hi < 0 ? -1 : hexval((unsigned char)hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		oid[i] = (unsigned char)(hi << 4 | lo);
	}
	return hex[40] == '\0' ? 0 : -1;
}

int gitrepo_open(struct gitrepo **out, const char *path)
{
	struct gitrepo *r;
	git_repository *repo = NULL;
	const char *p;
	struct stat st;

	*out = NULL;
	if (stat(path, &st) < 0)
		return error("cannot open repository '%s': %s", path, strerror(errno));
	if (git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		return error("'%s' is not a git repository", path);
	r = xcalloc(1, sizeof(*r));
	r->repo = repo;
	p = git_repository_workdir(repo);
	if (!p)
		p = git_repository_path(repo);
	r->path = xstrdup(p);
	if (r->path[0] && r->path[strlen(r->path) - 1] == '/' && strlen(r->path) > 1)
		r->path[strlen(r->path) - 1] = '\0';
	r->objects_dir = xstrfmt("%sobjects", git_repository_commondir(repo));
	*out = r;
	return 0;
}

void gitrepo_free(struct gitrepo *r)
{
	if (!r)
		return;
	git_repository_free(r->repo);
	FREE_MANY(r->path, r->objects_dir, r);
}

const char *gitrepo_path(const struct gitrepo *r)
{
	return r->path;
}

const char *gitrepo_objects_dir(const struct gitrepo *r)
{
	return r->objects_dir;
}

int gitrepo_resolve(struct gitrepo *r, const char *rev, char hex[41])
{
	git_object *obj = NULL, *peeled = NULL;
	int ret = -1;

	if (!*rev || rev[0] == '-')
		return error("unknown revision '%s'", rev);
	/* libgit2 says why: no such ref, an ambiguous prefix, bad syntax */
	if (git_revparse_single(&obj, r->repo, rev) < 0)
		return error("unknown revision '%s' in '%s': %s", rev, r->path, git_msg());
	if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) < 0) {
		error("revision '%s' is not a commit: %s", rev, git_msg());
		goto cleanup;
	}
	git_oid_tostr(hex, 41, git_object_id(peeled));
	ret = 0;
cleanup:
	git_object_free(peeled);
	git_object_free(obj);
	return ret;
}

int gitrepo_is_ancestor(struct gitrepo *r, const char *anc, const char *desc)
{
	git_oid a, d;
	int ret;

	if (git_oid_fromstr(&a, anc) < 0 || git_oid_fromstr(&d, desc) < 0)
		return error("invalid object id");
	if (git_oid_equal(&a, &d))
		return 1;
	ret = git_graph_descendant_of(r->repo, &d, &a);
	if (ret < 0)
		return git_fail("cannot walk history of", desc);
	return ret;
}

int gitrepo_commit_info(struct gitrepo *r, const char *hex, struct commit_info *out)
{
	git_oid oid;
	git_commit *c = NULL;
	const git_signature *a;
	const char *summary;

	memset(out, 0, sizeof(*out));
	if (git_oid_fromstr(&oid, hex) < 0)
		return error("invalid object id '%s'", hex);
	if (git_commit_lookup(&c, r->repo, &oid) < 0)
		return git_fail("cannot read commit", hex);
	git_oid_tostr(out->hash, 41, &oid);
	git_oid_tostr(out->tree, 41, git_commit_tree_id(c));
	summary = git_commit_summary(c);
	out->subject = xstrdup(summary ? summary : "");
	a = git_commit_author(c);
	out->author = xstrfmt("%s <%s>", a->name, a->email);
	out->author_time = a->when.time;
	out->author_tz = a->when.offset;
	out->commit_time = git_commit_time(c);
	out->nr_parents = (int)git_commit_parentcount(c);
	git_commit_free(c);
	return 0;
}

void commit_info_release(struct commit_info *ci)
{
	free(ci->subject);
	free(ci->author);
	ci->subject = ci->author = NULL;
}

static int cmp_mb_date(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	/* newest first, stable by original position */
	if (x[0] != y[0])
		return x[0] < y[0] ? 1 : -1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

int gitrepo_merge_bases(struct gitrepo *r, const char *one, char (*others)[41],
			size_t nr_others, char (**out)[41], size_t *nr_out)
{
	git_oid *in = xcalloc(nr_others + 1, sizeof(git_oid));
	git_oidarray res = { 0 };
	int64_t (*keys)[2] = NULL;
	int ret = -1, rc;

	*out = NULL;
	*nr_out = 0;
	git_oid_fromstr(&in[0], one);
	for (size_t i = 0; i < nr_others; i++)
		git_oid_fromstr(&in[i + 1], others[i]);
	rc = git_merge_bases_many(&res, r->repo, nr_others + 1, in);
	if (rc == GIT_ENOTFOUND) {
		ret = 0;
		goto cleanup;
	}
	if (rc < 0) {
		git_fail("cannot compute merge bases of", one);
		goto cleanup;
	}
	keys = xcalloc(res.count ? res.count : 1, sizeof(*keys));
	for (size_t i = 0; i < res.count; i++) {
		git_commit *c = NULL;
		if (git_commit_lookup(&c, r->repo, &res.ids[i]) < 0) {
			git_fail("cannot read merge base of", one);
			goto cleanup;
		}
		keys[i][0] = git_commit_time(c);
		keys[i][1] = (int64_t)i;
		git_commit_free(c);
	}
	qsort(keys, res.count, sizeof(*keys), cmp_mb_date);
	*out = xcalloc(res.count ? res.count : 1, 41);
	for (size_t i = 0; i < res.count; i++)
		git_oid_tostr((*out)[i], 41, &res.ids[keys[i][1]]);
	*nr_out = res.count;
	ret = 0;
cleanup:
	free(keys);
	git_oidarray_dispose(&res);
	free(in);
	return ret;
}

static size_t oid_hash(const unsigned char *oid)
{
	size_t h;

	memcpy(&h, oid, sizeof(h));
	return h;
}

/* Is the entry at each path the same in both trees? */
static int trees_same_at(git_tree *a, git_tree *b, const char *const *paths, size_t nr_paths)
{
	for (size_t i = 0; i < nr_paths; i++) {
		git_tree_entry *ea = NULL, *eb = NULL;
		int same;

		if (a)
			git_tree_entry_bypath(&ea, a, paths[i]);
		if (b)
			git_tree_entry_bypath(&eb, b, paths[i]);
		if (!ea || !eb)
			same = !ea && !eb;
		else
			same = git_oid_equal(git_tree_entry_id(ea), git_tree_entry_id(eb)) &&
			       git_tree_entry_filemode(ea) == git_tree_entry_filemode(eb);
		git_tree_entry_free(ea);
		git_tree_entry_free(eb);
		if (!same)
			return 0;
	}
	return 1;
}

static int load_tree(git_repository *repo, const git_oid *commit, git_tree **out)
{
	git_commit *c = NULL;
	int rc;

	*out = NULL;
	if (git_commit_lookup(&c, repo, commit) < 0)
		return -1;
	rc = git_commit_tree(out, c);
	git_commit_free(c);
	return rc;
}

/* Mark TREESAME commits and simplify merges for a path-limited bisection. */
static int simplify_paths(struct gitrepo *r, struct bisect_dag *dag, git_oid *raw_parents[],
			  const char *const *paths, size_t nr_paths)
{
	for (size_t i = 0; i < dag->nr; i++) {
		struct bisect_commit *c = &dag->commits[i];
		git_oid oid;
		git_tree *t = NULL;

		memcpy(oid.id, c->oid, 20);
		if (load_tree(r->repo, &oid, &t) < 0)
			return git_fail("cannot read tree of commit", "?");
		if (c->nr_parents == 0) {
			if (trees_same_at(t, NULL, paths, nr_paths))
				c->flags |= BISECT_TREESAME;
		} else {
			for (int p = 0; p < c->nr_parents; p++) {
				git_tree *pt = NULL;
				int same;

				if (load_tree(r->repo, &raw_parents[i][p], &pt) < 0) {
					git_tree_free(t);
					return git_fail("cannot read parent tree of", "?");
				}
				same = trees_same_at(t, pt, paths, nr_paths);
				git_tree_free(pt);
				if (!same)
					continue;
				if (c->nr_parents == 1 || c->parents[p] >= 0) {
					/* follow only this parent */
					int keep = c->parents[p];
					c->parents[0] = keep;
					c->nr_parents = 1;
					c->flags |= BISECT_TREESAME;
					break;
				}
			}
		}
		git_tree_free(t);
	}
	return 0;
}

/* Parse the parents and committer time out of a raw commit object. */
static int parse_commit_raw(const char *buf, size_t len, git_oid **parents, int *nr, int64_t *date)
{
	const char *p = buf, *end = buf + len;
	int alloc = 0;

	*parents = NULL;
	*nr = 0;
	*date = 0;
	while (p < end && *p != '\n') {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if ((size_t)(eol - p) >= 47 && !strncmp(p, "parent ", 7)) {
			char hex[41];
			memcpy(hex, p + 7, 40);
			hex[40] = '\0';
			ALLOC_GROW(*parents, *nr + 1, alloc);
			if (git_oid_fromstr(&(*parents)[*nr], hex) < 0)
				return -1;
			(*nr)++;
		} else if (!strncmp(p, "committer ", 10)) {
			/* "committer Name <mail> 1234567890 +0000" */
			const char *gt = NULL;
			for (const char *q = p; q < eol; q++)
				if (*q == '>')
					gt = q;
			if (gt && gt + 2 < eol)
				*date = strtoll(gt + 2, NULL, 10);
		}
		p = eol + 1;
	}
	return 0;
}

/* git's limited revision walk (revision.c: handle_commit, process_parents,
 * mark_parents_uninteresting, limit_list with still_interesting), over
 * commits parsed lazily from the object database.  libgit2's revwalk
 * hides differently when committer dates tie or run backwards, which
 * changes the candidates; this walk gives git's exactly. */
#define W_PARSED	0x1
#define W_UNINTERESTING	0x2
#define W_SEEN		0x4
#define W_ADDED		0x8
#define W_SLOP		5

struct wnode {
	unsigned char oid[20];
	int64_t date;
	unsigned flags;
	int nr_parents;
	int *parents;
};

struct walker {
	git_odb *odb;
	struct wnode *n;
	size_t nr, alloc;
	int *slots;
	size_t mask;
	int failed;
};

static int walker_find(struct walker *w, const unsigned char *oid, int create)
{
	size_t h;

	if (w->nr * 2 >= w->mask) {
		size_t sz = w->mask ? (w->mask + 1) * 2 : 1024;
		free(w->slots);
		w->slots = xmalloc(sz * sizeof(int));
		memset(w->slots, 0xff, sz * sizeof(int));
		w->mask = sz - 1;
		for (size_t i = 0; i < w->nr; i++) {
			h = oid_hash(w->n[i].oid) & w->mask;
			while (w->slots[h] >= 0)
				h = (h + 1) & w->mask;
			w->slots[h] = (int)i;
		}
	}
	h = oid_hash(oid) & w->mask;
	while (w->slots[h] >= 0) {
		if (!memcmp(w->n[w->slots[h]].oid, oid, 20))
			return w->slots[h];
		h = (h + 1) & w->mask;
	}
	if (!create)
		return -1;
	ALLOC_GROW(w->n, w->nr + 1, w->alloc);
	memset(&w->n[w->nr], 0, sizeof(w->n[w->nr]));
	memcpy(w->n[w->nr].oid, oid, 20);
	w->slots[h] = (int)w->nr;
	return (int)w->nr++;
}

static int walker_parse(struct walker *w, int i)
{
	git_odb_object *obj = NULL;
	git_oid oid, *parents = NULL;
	int nr = 0;
	int64_t date;

	if (w->n[i].flags & W_PARSED)
		return 0;
	memcpy(oid.id, w->n[i].oid, 20);
	if (git_odb_read(&obj, w->odb, &oid) < 0) {
		w->failed = 1;
		return git_fail("cannot read commit", git_oid_tostr_s(&oid));
	}
	if (git_odb_object_type(obj) != GIT_OBJECT_COMMIT ||
	    parse_commit_raw(git_odb_object_data(obj), git_odb_object_size(obj), &parents, &nr, &date) < 0) {
		git_odb_object_free(obj);
		w->failed = 1;
		free(parents);
		return error("malformed commit object %s", git_oid_tostr_s(&oid));
	}
	git_odb_object_free(obj);
	{
		int *idx = xmalloc((nr ? nr : 1) * sizeof(int));
		for (int p = 0; p < nr; p++)
			idx[p] = walker_find(w, parents[p].id, 1);
		/* walker_find may have moved w->n */
		w->n[i].parents = idx;
		w->n[i].nr_parents = nr;
		w->n[i].date = date;
		w->n[i].flags |= W_PARSED;
	}
	free(parents);
	return 0;
}

static void mark_parents_uninteresting(struct walker *w, int c)
{
	int *stack = NULL;
	size_t sp = 0, alloc = 0;

	/* mark_one_parent_uninteresting: recurse only into parsed commits */
	for (int p = 0; p < w->n[c].nr_parents; p++) {
		ALLOC_GROW(stack, sp + 1, alloc);
		stack[sp++] = w->n[c].parents[p];
	}
	while (sp) {
		int q = stack[--sp];
		if (w->n[q].flags & W_UNINTERESTING)
			continue;
		w->n[q].flags |= W_UNINTERESTING;
		if (!(w->n[q].flags & W_PARSED))
			continue;
		for (int p = 0; p < w->n[q].nr_parents; p++) {
			ALLOC_GROW(stack, sp + 1, alloc);
			stack[sp++] = w->n[q].parents[p];
		}
	}
	free(stack);
}

/* The walk's list: newest first, insertion after equal dates. */
struct wlist {
	int *v;
	size_t head, len, alloc;
};

static void wlist_insert_by_date(struct walker *w, struct wlist *l, int c)
{
	size_t pos;

	if (l->head && l->head > l->alloc / 2) {
		memmove(l->v, l->v + l->head, l->len * sizeof(int));
		l->head = 0;
	}
	ALLOC_GROW(l->v, l->head + l->len + 1, l->alloc);
	for (pos = l->head; pos < l->head + l->len; pos++)
		if (w->n[l->v[pos]].date < w->n[c].date)
			break;
	memmove(&l->v[pos + 1], &l->v[pos], (l->head + l->len - pos) * sizeof(int));
	l->v[pos] = c;
	l->len++;
}

static void process_parents(struct walker *w, struct wlist *l, int c, int first_parent)
{
	if (w->n[c].flags & W_ADDED)
		return;
	w->n[c].flags |= W_ADDED;
	if (w->n[c].flags & W_UNINTERESTING) {
		for (int p = 0; p < w->n[c].nr_parents; p++) {
			int q = w->n[c].parents[p];
			w->n[q].flags |= W_UNINTERESTING;
			if (walker_parse(w, q) < 0)
				continue;
			if (w->n[q].nr_parents)
				mark_parents_uninteresting(w, q);
			if (w->n[q].flags & W_SEEN)
				continue;
			w->n[q].flags |= W_SEEN;
			wlist_insert_by_date(w, l, q);
		}
		return;
	}
	for (int p = 0; p < w->n[c].nr_parents; p++) {
		int q = w->n[c].parents[p];
		if (walker_parse(w, q) < 0)
			return;
		if (!(w->n[q].flags & W_SEEN)) {
			w->n[q].flags |= W_SEEN;
			wlist_insert_by_date(w, l, q);
		}
		if (first_parent)
			break;
	}
}

static int still_interesting(struct walker *w, struct wlist *l, int64_t date, int slop)
{
	if (!l->len)
		return 0;
	if (date <= w->n[l->v[l->head]].date)
		return W_SLOP;
	for (size_t i = l->head; i < l->head + l->len; i++)
		if (!(w->n[l->v[i]].flags & W_UNINTERESTING))
			return W_SLOP;
	return slop - 1;
}

static int cmp_start(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;	/* {date, order} newest first, stable */
	if (x[0] != y[0])
		return x[0] < y[0] ? 1 : -1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

int gitrepo_load_dag(struct gitrepo *r, const char *bad, char (*goods)[41], size_t nr_goods,
		     int first_parent, const char *const *paths, size_t nr_paths,
		     struct bisect_dag *dag)
{
	return gitrepo_load_dag_info(r, bad, goods, nr_goods, first_parent, paths, nr_paths, dag, NULL);
}

/* bisect_rev_setup: bad, then the goods (uninteresting), as the walk's
 * start list sorted by date; start_node[i] is bad's (0) or good i-1's
 * node.  0 ok, -1 a commit could not be read. */
static int walk_setup(struct walker *w, const char *bad, char (*goods)[41], size_t nr_goods, int *start_node,
		      struct wlist *list)
{
	int64_t (*start)[2] = xcalloc(nr_goods + 1, sizeof(*start));
	size_t nr_start = 0;
	int ret = -1;

	for (size_t i = 0; i <= nr_goods; i++) {
		git_oid oid;
		int c;

		git_oid_fromstr(&oid, i ? goods[i - 1] : bad);
		c = walker_find(w, oid.id, 1);
		start_node[i] = c;
		if (walker_parse(w, c) < 0)
			goto out;
		if (i) {
			w->n[c].flags |= W_UNINTERESTING;
			mark_parents_uninteresting(w, c);	/* handle_commit */
		}
		if (w->n[c].flags & W_SEEN)
			continue;
		w->n[c].flags |= W_SEEN;
		start[nr_start][0] = w->n[c].date;
		start[nr_start][1] = c;
		nr_start++;
	}
	/* commit_list_sort_by_date is a stable merge sort */
	for (size_t i = 0; i < nr_start; i++)
		start[i][1] = start[i][1] * 1024 + (int64_t)i;
	qsort(start, nr_start, sizeof(*start), cmp_start);
	for (size_t i = 0; i < nr_start; i++) {
		ALLOC_GROW(list->v, list->len + 1, list->alloc);
		list->v[list->len++] = (int)(start[i][1] / 1024);
	}
	ret = 0;
out:
	free(start);
	return ret;
}

/* limit_list: the interesting commits in walk order.  0 ok, -1 failed. */
static int walk_limit(struct walker *w, struct wlist *list, int first_parent, int **newlist, size_t *nr_new)
{
	int64_t date = INT64_MAX;
	size_t alloc_new = 0;
	int slop = W_SLOP;

	while (list->len) {
		int c = list->v[list->head++];
		list->len--;
		process_parents(w, list, c, first_parent);
		if (w->failed)
			return -1;
		if (w->n[c].flags & W_UNINTERESTING) {
			mark_parents_uninteresting(w, c);
			slop = still_interesting(w, list, date, slop);
			if (slop)
				continue;
			break;
		}
		date = w->n[c].date;
		ALLOC_GROW(*newlist, *nr_new + 1, alloc_new);
		(*newlist)[(*nr_new)++] = c;
	}
	return 0;
}

/* The candidates (what is still interesting after the walk) into dag,
 * dag_index[node] their index or -1, raw_parents[d] their parents' ids. */
static git_oid **dag_from_walk(const struct walker *w, const int *newlist, size_t nr_new, struct bisect_dag *dag,
			       int *dag_index)
{
	git_oid **raw_parents;

	for (size_t i = 0; i < nr_new; i++) {
		int c = newlist[i];
		if (w->n[c].flags & W_UNINTERESTING || dag_index[c] >= 0)
			continue;
		dag_index[c] = bisect_dag_add(dag, w->n[c].oid, w->n[c].date);
	}
	raw_parents = xcalloc(dag->nr ? dag->nr : 1, sizeof(*raw_parents));
	for (size_t i = 0; i < nr_new; i++) {
		int c = newlist[i], d = dag_index[c];
		struct bisect_commit *bc;

		if (d < 0 || dag->commits[d].parents)
			continue;
		bc = &dag->commits[d];
		bc->nr_parents = w->n[c].nr_parents;
		bc->parents = xmalloc((bc->nr_parents ? bc->nr_parents : 1) * sizeof(int));
		raw_parents[d] = xmalloc((bc->nr_parents ? bc->nr_parents : 1) * sizeof(git_oid));
		for (int p = 0; p < bc->nr_parents; p++) {
			int q = w->n[c].parents[p];
			bc->parents[p] = dag_index[q];
			memcpy(raw_parents[d][p].id, w->n[q].oid, 20);
		}
	}
	return raw_parents;
}

/* Whether bad is a candidate, and which goods some candidate sits on. */
static void range_info_from_walk(const struct walker *w, const int *newlist, size_t nr_new, const int *dag_index,
				 const int *start_node, size_t nr_goods, struct range_info *info)
{
	info->bad_is_candidate = dag_index[start_node[0]] >= 0;
	info->good_below = xcalloc(nr_goods ? nr_goods : 1, 1);
	for (size_t i = 0; i < nr_new; i++) {
		int c = newlist[i];
		if (dag_index[c] < 0)
			continue;
		for (int p = 0; p < w->n[c].nr_parents; p++)
			for (size_t g = 0; g < nr_goods; g++)
				if (w->n[c].parents[p] == start_node[g + 1])
					info->good_below[g] = 1;
	}
}

int gitrepo_load_dag_info(struct gitrepo *r, const char *bad, char (*goods)[41], size_t nr_goods,
			  int first_parent, const char *const *paths, size_t nr_paths,
			  struct bisect_dag *dag, struct range_info *info)
{
	int *start_node = xcalloc(nr_goods + 1, sizeof(int));
	struct walker w = { 0 };
	struct wlist list = { 0 };
	int *newlist = NULL, *dag_index = NULL;
	size_t nr_new = 0;
	git_oid **raw_parents = NULL;
	int ret = -1;

	bisect_dag_init(dag);
	dag->first_parent = first_parent;
	if (git_repository_odb(&w.odb, r->repo) < 0) {
		git_fail("cannot read objects of", r->path);
		goto cleanup;
	}
	if (walk_setup(&w, bad, goods, nr_goods, start_node, &list) < 0 ||
	    walk_limit(&w, &list, first_parent, &newlist, &nr_new) < 0)
		goto cleanup;
	dag_index = xmalloc((w.nr ? w.nr : 1) * sizeof(int));
	memset(dag_index, 0xff, (w.nr ? w.nr : 1) * sizeof(int));
	raw_parents = dag_from_walk(&w, newlist, nr_new, dag, dag_index);
	if (info)
		range_info_from_walk(&w, newlist, nr_new, dag_index, start_node, nr_goods, info);
	if (nr_paths && simplify_paths(r, dag, raw_parents, paths, nr_paths) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	free(start_node);
	if (ret < 0 && info) {
		free(info->good_below);
		info->good_below = NULL;
	}
	for (size_t i = 0; raw_parents && i < dag->nr; i++)
		free(raw_parents[i]);
	free(raw_parents);
	for (size_t i = 0; i < w.nr; i++)
		free(w.n[i].parents);
	free(w.n);
	free(w.slots);
	free(list.v);
	free(newlist);
	free(dag_index);
	git_odb_free(w.odb);
	if (ret < 0)
		bisect_dag_release(dag);
	return ret;
}

static int worktree_exclude_build_dirs(git_repository *repo);

int worktree_open(struct worktree **out, struct gitrepo *src, const char *dir)
{
	git_repository *repo = NULL;
	git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
	char *alt_path = NULL, *alt_text = NULL, *cur = NULL;
	struct worktree *wt;
	int ret = -1;

	*out = NULL;
	if (mkdir_p(dir, 0755) < 0)
		return -1;
	if (git_repository_open_ext(&repo, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		opts.flags = GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_NO_REINIT;
		if (git_repository_init_ext(&repo, dir, &opts) < 0)
			return git_fail("cannot create klab worktree", dir);
	}
	/* Borrow the user's objects; rewrite the link if the repo moved. */
	alt_path = xstrfmt("%sobjects/info/alternates", git_repository_path(repo));
	alt_text = xstrfmt("%s\n", gitrepo_objects_dir(src));
	if (access(alt_path, F_OK) != 0 || read_file(alt_path, 1 << 16, &cur, NULL) < 0 ||
	    strcmp(cur, alt_text)) {
		char *info = xstrfmt("%sobjects/info", git_repository_path(repo));
		int rc = mkdir_p(info, 0755);
		free(info);
		if (rc < 0 || write_file_atomic(alt_path, alt_text, strlen(alt_text)) < 0)
			goto cleanup;
		/* reopen so libgit2 picks up the alternate */
		git_repository_free(repo);
		repo = NULL;
		if (git_repository_open_ext(&repo, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
			git_fail("cannot open klab worktree", dir);
			goto cleanup;
		}
	}
	{
		/* The caller holds klab's lock on this worktree, so git lock
		 * files here were left by a klab that was killed mid-write. */
		static const char *const stale[] = { "index.lock", "HEAD.lock" };
		for (size_t i = 0; i < ARRAY_SIZE(stale); i++) {
			char *p = xstrfmt("%s%s", git_repository_path(repo), stale[i]);
			if (unlink(p) == 0)
				warning("removed a stale %s left by an interrupted klab", p);
			free(p);
		}
	}
	if (worktree_exclude_build_dirs(repo) < 0)
		goto cleanup;
	wt = xcalloc(1, sizeof(*wt));
	wt->repo = repo;
	wt->path = xstrdup(dir);
	repo = NULL;
	*out = wt;
	ret = 0;
cleanup:
	git_repository_free(repo);
	free(alt_path);
	free(alt_text);
	free(cur);
	return ret;
}

/* 1 when HEAD is unborn (fresh worktree) or peels to a readable commit. */
static int head_is_valid(git_repository *repo)
{
	git_reference *head = NULL;
	git_object *obj = NULL;
	int rc = git_repository_head(&head, repo);

	if (rc == GIT_EUNBORNBRANCH)
		return 1;
	if (rc == 0)
		rc = git_reference_peel(&obj, head, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	git_reference_free(head);
	return rc == 0;
}

/* The tree HEAD names, or NULL (unborn, unreadable). */
static git_tree *head_tree(git_repository *repo)
{
	git_reference *head = NULL;
	git_object *obj = NULL;
	git_tree *tree = NULL;

	if (git_repository_head(&head, repo) == 0 &&
	    git_reference_peel(&obj, head, GIT_OBJECT_COMMIT) == 0)
		git_commit_tree(&tree, (git_commit *)obj);
	git_object_free(obj);
	git_reference_free(head);
	return tree;
}

struct path_list {
	char **v;
	size_t nr, alloc;
};

static void path_list_add(struct path_list *l, const char *p)
{
	if (!p)
		return;
	if (l->nr && !strcmp(l->v[l->nr - 1], p))
		return;
	ALLOC_GROW(l->v, l->nr + 1, l->alloc);
	l->v[l->nr++] = xstrdup(p);
}

/* Check out only what differs between HEAD's tree and the target: a
 * kernel tree has 78k files, a neighbouring commit changes a handful.
 * Changed files are unlinked first so they are written anew, as git
 * does (rewriting in place costs far more on ext4).  Returns 1 when
 * done, 0 when a full checkout is needed, -1 on error. */
static int checkout_changed(struct worktree *wt, git_tree *from, git_commit *to)
{
	git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
	git_diff_options dopts = GIT_DIFF_OPTIONS_INIT;
	git_diff *diff = NULL;
	git_tree *target = NULL;
	struct path_list paths = { 0 };
	const char *workdir = git_repository_workdir(wt->repo);
	int ret = -1;

	if (git_commit_tree(&target, to) < 0)
		return git_fail("cannot read tree of", git_oid_tostr_s(git_commit_id(to)));
	if (git_diff_tree_to_tree(&diff, wt->repo, from, target, &dopts) < 0) {
		git_fail("cannot compare trees for", git_oid_tostr_s(git_commit_id(to)));
		goto out;
	}
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		path_list_add(&paths, d->old_file.path);
		path_list_add(&paths, d->new_file.path);
		if (d->status == GIT_DELTA_MODIFIED && d->new_file.path) {
			char *p = xstrfmt("%s%s", workdir, d->new_file.path);
			unlink(p);
			free(p);
		}
	}
	if (paths.nr) {
		opts.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
		opts.paths.strings = paths.v;
		opts.paths.count = paths.nr;
		opts.baseline = from;
		if (git_checkout_tree(wt->repo, (git_object *)target, &opts) < 0) {
			git_fail("cannot check out", git_oid_tostr_s(git_commit_id(to)));
			goto out;
		}
	}
	ret = 1;
out:
	strings_free(paths.v, paths.nr);
	git_diff_free(diff);
	git_tree_free(target);
	return ret;
}

/* Where the worktree differs from HEAD: the index against HEAD's tree,
 * files against the index, and files that are neither tracked nor
 * covered by a .gitignore.  0 when it matches; 1 with *what (caller
 * frees) naming the first difference; -1 on error. */
static int worktree_differs(struct worktree *wt, char **what)
{
	git_status_options so = GIT_STATUS_OPTIONS_INIT;
	git_status_list *st = NULL;
	size_t n;

	*what = NULL;
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
		   GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (git_status_list_new(&st, wt->repo, &so) < 0)
		return git_fail("cannot compare the files of klab worktree", wt->path);
	n = git_status_list_entrycount(st);
	if (n) {
		const git_status_entry *e = git_status_byindex(st, 0);
		const git_diff_delta *d = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
		const char *path = d->new_file.path ? d->new_file.path : d->old_file.path;
		const char *kind = e->status & GIT_STATUS_WT_NEW ? "is not in the commit"
				 : e->status & GIT_STATUS_WT_DELETED ? "is missing"
				 : e->status & GIT_STATUS_WT_MODIFIED ? "differs from the commit"
				 : e->status & GIT_STATUS_WT_TYPECHANGE ? "has the wrong type"
				 : "differs in the index";
		char more[64] = "";

		if (n > 1)
			snprintf(more, sizeof(more), " (and %zu more)", n - 1);
		*what = xstrfmt("'%s' %s%s", path, kind, more);
	}
	git_status_list_free(st);
	return n != 0;
}

/* The whole tree: tracked files reset, files the commit does not have
 * removed (ignored ones too when remove_ignored).  Unchanged files are
 * not rewritten, so a build that uses them stays incremental. */
static int checkout_full(struct worktree *wt, git_commit *c, int remove_ignored)
{
	git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;

	opts.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
	if (remove_ignored)
		opts.checkout_strategy |= GIT_CHECKOUT_REMOVE_IGNORED;
	if (git_checkout_tree(wt->repo, (git_object *)c, &opts) < 0)
		return git_fail("cannot check out", git_oid_tostr_s(git_commit_id(c)));
	return 0;
}

/* Start from nothing: an empty index and every file but the git
 * directory removed.  With an unborn HEAD when HEAD names a commit that
 * is gone (the repository was re-created at the same path). */
static int worktree_clear(struct worktree *wt, int wipe_files)
{
	git_index *idx = NULL;
	int ret = 0;

	if (git_repository_index(&idx, wt->repo) < 0 || git_index_clear(idx) < 0 || git_index_write(idx) < 0)
		ret = git_fail("cannot clear the index of klab worktree", wt->path);
	git_index_free(idx);
	if (ret == 0 && !head_is_valid(wt->repo) &&
	    git_repository_set_head(wt->repo, "refs/heads/klab-recovered") < 0)
		ret = git_fail("cannot reset HEAD of klab worktree", wt->path);
	if (ret == 0 && wipe_files) {
		DIR *d = opendir(wt->path);
		struct dirent *de;

		if (!d)
			return error("cannot read klab worktree '%s': %s", wt->path, strerror(errno));
		while (ret == 0 && (de = readdir(d))) {
			char *p;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, ".git"))
				continue;
			p = xstrfmt("%s/%s", wt->path, de->d_name);
			ret = remove_tree(p);
			free(p);
		}
		closedir(d);
	}
	return ret;
}

int worktree_checkout(struct worktree *wt, const char *hex)
{
	git_commit *c = NULL;
	git_tree *from = NULL;
	git_oid oid;
	char *marker = NULL, *what = NULL;
	int ret = -1, rc = 0, recover, differs;

	if (git_oid_fromstr(&oid, hex) < 0)
		return error("invalid object id '%s'", hex);
	if (git_commit_lookup(&c, wt->repo, &oid) < 0)
		return git_fail("cannot read commit", hex);
	/* The marker says a checkout was under way.  Found, that checkout
	 * failed (disk full) or klab died in it: files of another commit
	 * may be in the worktree and the index no longer knows them, so
	 * everything the commit does not have goes, ignored files too. */
	marker = xstrfmt("%sklab-checkout-in-progress", git_repository_path(wt->repo));
	recover = access(marker, F_OK) == 0 || !head_is_valid(wt->repo);
	if (recover && access(marker, F_OK) == 0)
		warning("the last checkout in '%s' did not finish: checking %.12s out afresh", wt->path, hex);
	if (write_file_atomic(marker, hex, strlen(hex)) < 0)
		goto cleanup;
	if (!recover && (from = head_tree(wt->repo)))
		rc = checkout_changed(wt, from, c);
	if (rc < 0)
		goto cleanup;
	if (rc == 0 && ((!head_is_valid(wt->repo) && worktree_clear(wt, 0) < 0) || checkout_full(wt, c, recover) < 0))
		goto cleanup;
	if (git_repository_set_head_detached(wt->repo, &oid) < 0) {
		git_fail("cannot update klab worktree HEAD to", hex);
		goto cleanup;
	}
	/* Nothing but the commit's files (and what its .gitignore covers)
	 * may be there when the test starts.  Checking out only the paths
	 * two commits differ in leaves alone what a test changed elsewhere:
	 * the whole tree then; if even that does not match, from nothing. */
	differs = worktree_differs(wt, &what);
	if (differs > 0 && rc == 1) {
		free(what);
		differs = checkout_full(wt, c, 0) < 0 ? -1 : worktree_differs(wt, &what);
	}
	if (differs > 0) {
		warning("klab worktree '%s' does not match %.12s (%s): checking it out from nothing", wt->path, hex,
			what);
		free(what);
		differs = worktree_clear(wt, 1) < 0 || checkout_full(wt, c, 1) < 0 ||
				  git_repository_set_head_detached(wt->repo, &oid) < 0
			  ? -1
			  : worktree_differs(wt, &what);
	}
	if (differs < 0)
		goto cleanup;
	if (differs > 0) {
		error("klab worktree '%s' does not match %.12s after a fresh checkout: %s", wt->path, hex, what);
		goto cleanup;
	}
	unlink(marker);
	ret = 0;
cleanup:
	free(what);
	free(marker);
	git_tree_free(from);
	git_commit_free(c);
	return ret;
}

const char *worktree_path(const struct worktree *wt)
{
	return wt->path;
}

void worktree_free(struct worktree *wt)
{
	if (!wt)
		return;
	git_repository_free(wt->repo);
	free(wt->path);
	free(wt);
}

/* ---- fetch ------------------------------------------------------------------ */

/* The URL of configured remote `name` (caller frees), or NULL.  Read as
 * one config key: git_remote_lookup() would apply url.*.insteadOf, which
 * leaks in libgit2 1.5 (libgit2 PR 6382). */
static char *remote_url(struct gitrepo *r, const char *name)
{
	git_config *cfg = NULL;
	const char *url = NULL;
	char *key, *out = NULL;
	int valid = 0;

	if (git_remote_name_is_valid(&valid, name) < 0 || !valid)
		return NULL;
	if (git_repository_config_snapshot(&cfg, r->repo) < 0)
		return NULL;
	key = xstrfmt("remote.%s.url", name);
	if (git_config_get_string(&url, cfg, key) == 0 && url && *url)
		out = xstrdup(url);
	free(key);
	git_config_free(cfg);
	return out;
}

int gitrepo_has_remote(struct gitrepo *r, const char *name)
{
	char *url = remote_url(r, name);
	int found = url != NULL;

	free(url);
	return found;
}

int gitrepo_branch_name_valid(const char *branch)
{
	char *ref = xstrfmt("refs/heads/%s", branch);
	int valid = 0;

	if (!*branch || branch[0] == '-' || git_reference_name_is_valid(&valid, ref) < 0)
		valid = 0;
	free(ref);
	return valid;
}

int gitrepo_ref_delete(struct gitrepo *r, const char *ref)
{
	git_reference *rf = NULL;
	int rc = git_reference_lookup(&rf, r->repo, ref);

	if (rc == GIT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return git_fail("cannot read", ref);
	rc = git_reference_delete(rf);
	git_reference_free(rf);
	return rc < 0 ? git_fail("cannot delete", ref) : 0;
}

/* ssh: ask the agent once; anything else: libgit2's default (none). */
static int fetch_credentials(git_credential **out, const char *url, const char *user_from_url,
			     unsigned int allowed, void *payload)
{
	int *tries = payload;

	(void)url;
	if (++*tries > 1 || !(allowed & GIT_CREDENTIAL_SSH_KEY))
		return GIT_PASSTHROUGH;
	return git_credential_ssh_key_from_agent(out, user_from_url ? user_from_url : "git");
}

int gitrepo_fetch_branch(struct gitrepo *r, const char *remote, const char *branch, const char *ref,
			 char old_hex[41], char new_hex[41])
{
	git_remote *rem = NULL;
	git_remote_callbacks cb = GIT_REMOTE_CALLBACKS_INIT;
	git_fetch_options fo = GIT_FETCH_OPTIONS_INIT;
	git_remote_create_options ro = GIT_REMOTE_CREATE_OPTIONS_INIT;
	git_reference *old = NULL, *out_ref = NULL;
	const git_remote_head **heads;
	const git_oid *tip = NULL;
	struct strbuf shown = STRBUF_INIT;	/* the URL in messages: no credentials */
	char *url = NULL, *want = xstrfmt("refs/heads/%s", branch), *spec = NULL;
	git_strarray specs;
	size_t nr_heads;
	int tries = 0, ret = -1;

	old_hex[0] = new_hex[0] = '\0';
	if (!gitrepo_branch_name_valid(branch)) {
		error("'%s' is not a valid branch name", branch);
		goto out;
	}
	if (git_reference_lookup(&old, r->repo, ref) == 0 && git_reference_target(old))
		git_oid_tostr(old_hex, 41, git_reference_target(old));
	/* A configured remote only lends its URL: fetching through it would
	 * let libgit2 update its remote-tracking branches too. */
	url = remote_url(r, remote);
	if (!url)
		url = xstrdup(remote);
	strbuf_add_url_redacted(&shown, url, 1);
	/* url.<base>.insteadOf is not applied: libgit2 1.5 leaks while
	 * matching it (libgit2 PR 6382), and a track's URL is given whole. */
	ro.repository = r->repo;
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	if (git_remote_create_with_opts(&rem, url, &ro) < 0) {
		git_fail("cannot use remote", shown.buf);
		goto out;
	}
	cb.credentials = fetch_credentials;
	cb.payload = &tries;
	if (git_remote_connect(rem, GIT_DIRECTION_FETCH, &cb, NULL, NULL) < 0) {
		git_fail("cannot reach remote", shown.buf);
		goto out;
	}
	if (git_remote_ls(&heads, &nr_heads, rem) < 0) {
		git_fail("cannot list the branches of", shown.buf);
		goto out;
	}
	for (size_t i = 0; i < nr_heads; i++)
		if (!strcmp(heads[i]->name, want))
			tip = &heads[i]->oid;
	if (!tip) {
		error("branch '%s' not found at '%s' (deleted or renamed?)", branch, shown.buf);
		goto out;
	}
	git_oid_tostr(new_hex, 41, tip);

	spec = xstrfmt("+%s:%s", want, ref);
	specs.strings = &spec;
	specs.count = 1;
	fo.callbacks = cb;
	fo.prune = GIT_FETCH_NO_PRUNE;
	fo.update_fetchhead = 0;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	if (git_remote_download(rem, &specs, &fo) < 0) {
		git_fail("cannot download from", shown.buf);
		goto out;
	}
	if (git_reference_create(&out_ref, r->repo, ref, tip, 1, "klab track: fetch") < 0) {
		git_fail("cannot write", ref);
		goto out;
	}
	ret = 0;
out:
	if (ret < 0)
		new_hex[0] = '\0';
	if (rem && git_remote_connected(rem))
		git_remote_disconnect(rem);
	git_reference_free(out_ref);
	git_reference_free(old);
	git_remote_free(rem);
	free(spec);
	free(want);
	free(url);
	strbuf_release(&shown);
	return ret;
}

/* ---- revert: klab's own commits ---------------------------------------------- */

/* The revert is made over the worktree's repository, whose object
 * directory is klab's (<state>/worktrees/repo-N/.git/objects) and whose
 * alternates lend the user's objects; no ref is written (the commit is
 * found by its id).  libgit2 never writes an object to an alternate, but
 * before writing one it "freshens" a copy that exists anywhere, i.e.
 * touches the user's loose object or pack file (git does the same).
 * klab's promise is stronger (t-user-tree-untouched compares mtimes), so
 * the revert runs in a repository over an object database of its own: a
 * loose backend on klab's object directory, which takes the writes, and
 * the worktree's whole object database (alternates included) behind a
 * read-only backend without freshen: an object found there is used as
 * it is and nothing of the user's is touched. */

struct ro_backend {
	git_odb_backend parent;
	git_odb *odb;		/* the worktree's, with the user's alternates */
};

static int ro_read(void **data, size_t *len, git_object_t *type, git_odb_backend *b, const git_oid *oid)
{
	git_odb_object *obj;
	int rc = git_odb_read(&obj, ((struct ro_backend *)b)->odb, oid);

	if (rc < 0)
		return rc;
	*len = git_odb_object_size(obj);
	*type = git_odb_object_type(obj);
	*data = git_odb_backend_data_alloc(b, *len ? *len : 1);
	if (!*data) {
		git_odb_object_free(obj);
		return -1;
	}
	memcpy(*data, git_odb_object_data(obj), *len);
	git_odb_object_free(obj);
	return 0;
}

static int ro_read_prefix(git_oid *out, void **data, size_t *len, git_object_t *type, git_odb_backend *b,
			  const git_oid *short_id, size_t n)
{
	git_oid full;
	int rc = git_odb_exists_prefix(&full, ((struct ro_backend *)b)->odb, short_id, n);

	if (rc < 0)
		return rc;
	git_oid_cpy(out, &full);
	return ro_read(data, len, type, b, &full);
}

static int ro_read_header(size_t *len, git_object_t *type, git_odb_backend *b, const git_oid *oid)
{
	return git_odb_read_header(len, type, ((struct ro_backend *)b)->odb, oid);
}

static int ro_exists(git_odb_backend *b, const git_oid *oid)
{
	return git_odb_exists(((struct ro_backend *)b)->odb, oid);
}

static int ro_exists_prefix(git_oid *out, git_odb_backend *b, const git_oid *short_id, size_t n)
{
	return git_odb_exists_prefix(out, ((struct ro_backend *)b)->odb, short_id, n);
}

static int ro_refresh(git_odb_backend *b)
{
	return git_odb_refresh(((struct ro_backend *)b)->odb);
}

static void ro_free(git_odb_backend *b)
{
	git_odb_free(((struct ro_backend *)b)->odb);
	free(b);
}

/* A repository over: klab's object directory (writes) and, read only,
 * everything the worktree can read. */
static int revert_repo(git_repository **out, struct worktree *wt)
{
	git_odb *odb = NULL, *full = NULL;
	git_odb_backend *loose = NULL;
	struct ro_backend *ro;
	char *objects = xstrfmt("%sobjects", git_repository_path(wt->repo));
	int ret = -1;

	*out = NULL;
	if (git_odb_new(&odb) < 0 || git_repository_odb(&full, wt->repo) < 0 ||
	    git_odb_backend_loose(&loose, objects, -1, 0, 0, 0) < 0) {
		git_fail("cannot open the object store of klab worktree", wt->path);
		goto out;
	}
	if (git_odb_add_backend(odb, loose, 2) < 0) {
		loose->free(loose);
		git_fail("cannot open the object store of klab worktree", wt->path);
		goto out;
	}
	ro = xcalloc(1, sizeof(*ro));
	git_odb_init_backend(&ro->parent, GIT_ODB_BACKEND_VERSION);
	ro->parent.read = ro_read;
	ro->parent.read_prefix = ro_read_prefix;
	ro->parent.read_header = ro_read_header;
	ro->parent.exists = ro_exists;
	ro->parent.exists_prefix = ro_exists_prefix;
	ro->parent.refresh = ro_refresh;
	ro->parent.free = ro_free;
	ro->odb = full;
	full = NULL;
	if (git_odb_add_backend(odb, &ro->parent, 1) < 0) {
		ro_free(&ro->parent);
		git_fail("cannot open the object store of klab worktree", wt->path);
		goto out;
	}
	if (git_repository_wrap_odb(out, odb) < 0) {
		git_fail("cannot open the object store of klab worktree", wt->path);
		goto out;
	}
	ret = 0;
out:
	git_odb_free(full);
	git_odb_free(odb);
	free(objects);
	return ret;
}

void revert_result_release(struct revert_result *rr)
{
	for (size_t i = 0; i < rr->nr_paths; i++)
		free(rr->paths[i]);
	free(rr->reason);
	memset(rr, 0, sizeof(*rr));
}

/* The conflicting paths of a merged index, at most REVERT_MAX_CONFLICTS
 * kept, all counted; the reason names the kept ones. */
static int revert_conflicts(git_index *idx, struct revert_result *rr, const char *culprit)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *anc, *ours, *theirs;
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (git_index_conflict_iterator_new(&it, idx) < 0)
		return git_fail("cannot list the conflicts of the revert of", culprit);
	while ((rc = git_index_conflict_next(&anc, &ours, &theirs, it)) == 0) {
		const git_index_entry *e = ours ? ours : theirs ? theirs : anc;

		if (rr->nr_paths < REVERT_MAX_CONFLICTS)
			rr->paths[rr->nr_paths++] = xstrdup(e->path);
		rr->nr_conflicts++;
	}
	git_index_conflict_iterator_free(it);
	if (rc != GIT_ITEROVER)
		return git_fail("cannot list the conflicts of the revert of", culprit);
	strbuf_addf(&sb, "conflicts in %zu file%s: ", rr->nr_conflicts, rr->nr_conflicts == 1 ? "" : "s");
	for (size_t i = 0; i < rr->nr_paths; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", rr->paths[i]);
	if (rr->nr_conflicts > rr->nr_paths)
		strbuf_addf(&sb, " and %zu more", rr->nr_conflicts - rr->nr_paths);
	rr->reason = strbuf_detach(&sb, NULL);
	return 0;
}

int worktree_revert(struct worktree *wt, const char *culprit, const char *onto, struct revert_result *rr)
{
	git_repository *repo = NULL;
	git_commit *cc = NULL, *oc = NULL;
	git_index *idx = NULL;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_oid coid, ooid, toid, roid;
	char *msg = NULL;
	unsigned mainline;
	int ret = -1;

	memset(rr, 0, sizeof(*rr));
	if (git_oid_fromstr(&coid, culprit) < 0 || git_oid_fromstr(&ooid, onto) < 0)
		return error("invalid object id '%s' or '%s'", culprit, onto);
	if (revert_repo(&repo, wt) < 0)
		return -1;
	if (git_commit_lookup(&cc, repo, &coid) < 0) {
		git_fail("cannot read commit", culprit);
		goto out;
	}
	if (git_commit_lookup(&oc, repo, &ooid) < 0) {
		git_fail("cannot read commit", onto);
		goto out;
	}
	if (git_commit_parentcount(cc) == 0) {
		rr->reason = xstrfmt("%.12s is a root commit: there is nothing to revert it to", culprit);
		ret = 1;
		goto out;
	}
	/* A merge is reverted against its first parent, the parent the
	 * confirmation measured it against (git revert -m 1). */
	mainline = git_commit_parentcount(cc) > 1 ? 1 : 0;
	if (git_revert_commit(&idx, repo, cc, oc, mainline, NULL) < 0) {
		git_fail("cannot revert", culprit);
		goto out;
	}
	if (git_index_has_conflicts(idx)) {
		ret = revert_conflicts(idx, rr, culprit) < 0 ? -1 : 1;
		goto out;
	}
	if (git_index_write_tree_to(&toid, idx, repo) < 0 || git_tree_lookup(&tree, repo, &toid) < 0) {
		git_fail("cannot write the tree of the revert of", culprit);
		goto out;
	}
	/* Author, committer and date fixed by the inputs: the same revert
	 * has the same id in every worktree copy and on every resume. */
	if (git_signature_new(&sig, "klab", "klab@localhost", git_commit_time(oc), 0) < 0) {
		git_fail("cannot make a signature for the revert of", culprit);
		goto out;
	}
	msg = xstrfmt("Revert \"%s\"\n\nThis reverts commit %s%s.\n\nMade by klab's revert check, "
		      "in klab's own object store.\n",
		      git_commit_summary(cc) ? git_commit_summary(cc) : "", culprit,
		      mainline ? ", reversing the changes made to its first parent" : "");
	if (git_commit_create(&roid, repo, NULL, sig, sig, NULL, msg, tree, 1,
			      (const git_commit **)&oc) < 0) {
		git_fail("cannot write the revert commit of", culprit);
		goto out;
	}
	git_oid_tostr(rr->hex, sizeof(rr->hex), &roid);
	rr->applies = 1;
	ret = 0;
out:
	free(msg);
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(idx);
	git_commit_free(oc);
	git_commit_free(cc);
	git_repository_free(repo);
	return ret;
}

int worktree_commit_tree(struct worktree *wt, const char *hex, char tree[41])
{
	git_commit *c = NULL;
	git_oid oid;

	if (git_oid_fromstr(&oid, hex) < 0)
		return error("invalid object id '%s'", hex);
	if (git_commit_lookup(&c, wt->repo, &oid) < 0)
		return git_fail("cannot read commit", hex);
	git_oid_tostr(tree, 41, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

int worktree_commit_info(struct worktree *wt, const char *hex, struct commit_info *out)
{
	/* gitrepo_commit_info on the worktree's repository, which reads its
	 * own objects and, through the alternates, the user's */
	struct gitrepo view = { .repo = wt->repo, .path = wt->path, .objects_dir = NULL };

	return gitrepo_commit_info(&view, hex, out);
}

/* The tree of commit hex, or NULL after git_fail(). */
static git_tree *commit_tree(git_repository *repo, const char *hex)
{
	git_oid oid;
	git_commit *c = NULL;
	git_tree *t = NULL;

	if (git_oid_fromstr(&oid, hex) < 0 || git_commit_lookup(&c, repo, &oid) < 0 ||
	    git_commit_tree(&t, c) < 0)
		git_fail("cannot read commit", hex);
	git_commit_free(c);
	return t;
}

int worktree_head(struct worktree *wt, char hex[41])
{
	git_reference *head = NULL;
	git_object *obj = NULL;
	int ret = 0;

	if (git_repository_head(&head, wt->repo) == 0 && git_reference_peel(&obj, head, GIT_OBJECT_COMMIT) == 0) {
		git_oid_tostr(hex, 41, git_object_id(obj));
		ret = 1;
	}
	git_object_free(obj);
	git_reference_free(head);
	return ret;
}

int worktree_diff_each(struct worktree *wt, const char *from_hex, const char *to_hex,
		       int (*fn)(const char *path, int added, void *data), void *data)
{
	struct gitrepo view = { .repo = wt->repo, .path = wt->path, .objects_dir = NULL };

	return gitrepo_diff_each(&view, from_hex, to_hex, fn, data);
}

int worktree_read_path(struct worktree *wt, const char *hex, const char *path, size_t max, char **data,
		       size_t *len)
{
	struct gitrepo view = { .repo = wt->repo, .path = wt->path, .objects_dir = NULL };

	return gitrepo_read_path(&view, hex, path, max, data, len);
}

int gitrepo_diff_each(struct gitrepo *r, const char *from_hex, const char *to_hex,
		      int (*fn)(const char *path, int added, void *data), void *data)
{
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
	int ret = -1;

	if (!(a = commit_tree(r->repo, from_hex)) || !(b = commit_tree(r->repo, to_hex)))
		goto out;
	/* names only: no content is read, equal subtrees are skipped by id;
	 * no rename detection, so a rename is its deletion and its addition */
	if (git_diff_tree_to_tree(&diff, r->repo, a, b, &opts) < 0) {
		git_fail("cannot compare trees of", to_hex);
		goto out;
	}
	ret = 0;
	for (size_t i = 0; i < git_diff_num_deltas(diff) && !ret; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		int added = d->status == GIT_DELTA_ADDED;

		if (d->old_file.path && !added)
			ret = fn(d->old_file.path, 0, data);
		if (!ret && d->new_file.path && (added || strcmp(d->new_file.path, d->old_file.path ? d->old_file.path : "")))
			ret = fn(d->new_file.path, added, data);
	}
out:
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
	return ret;
}

int gitrepo_read_path(struct gitrepo *r, const char *hex, const char *path, size_t max, char **data, size_t *len)
{
	git_tree *t = commit_tree(r->repo, hex);
	git_tree_entry *e = NULL;
	git_blob *blob = NULL;
	int ret = 0;

	*data = NULL;
	*len = 0;
	if (!t)
		return -1;
	/* a regular file's blob, not a link's target nor a submodule */
	if (git_tree_entry_bypath(&e, t, path) == 0 &&
	    (git_tree_entry_filemode(e) == GIT_FILEMODE_BLOB ||
	     git_tree_entry_filemode(e) == GIT_FILEMODE_BLOB_EXECUTABLE)) {
		if (git_blob_lookup(&blob, r->repo, git_tree_entry_id(e)) < 0) {
			ret = git_fail("cannot read", path);
		} else if ((size_t)git_blob_rawsize(blob) <= max) {
			*len = (size_t)git_blob_rawsize(blob);
			*data = xmalloc(*len + 1);
			memcpy(*data, git_blob_rawcontent(blob), *len);
			(*data)[*len] = '\0';
			ret = 1;
		}
	}
	git_blob_free(blob);
	git_tree_entry_free(e);
	git_tree_free(t);
	return ret;
}

struct diff_match {
	int (*match)(const char *path, void *data);
	void *data;
};

static int diff_match_one(const char *path, int added, void *data)
{
	struct diff_match *m = data;

	(void)added;
	return m->match(path, m->data) ? 1 : 0;
}

int gitrepo_diff_matches(struct gitrepo *r, const char *from_hex, const char *to_hex,
			 int (*match)(const char *path, void *data), void *data)
{
	struct diff_match m = { match, data };

	return gitrepo_diff_each(r, from_hex, to_hex, diff_match_one, &m);
}

/* klab's build directories live in its worktrees (kbuild.h): untracked
 * files git status must not count, whatever the tree's .gitignore says. */
static int worktree_exclude_build_dirs(git_repository *repo)
{
	static const char line[] = "/.klab-build-*/\n";
	char *info = xstrfmt("%sinfo", git_repository_path(repo)), *path = xstrfmt("%s/exclude", info);
	char *text = NULL, *more;
	int ret = 0;

	if (access(path, F_OK) == 0 && read_file(path, 1 << 20, &text, NULL) < 0)
		ret = -1;
	else if (!text || !strstr(text, line)) {
		more = xstrfmt("%s%s%s", text ? text : "", text && *text && text[strlen(text) - 1] != '\n' ? "\n" : "",
			       line);
		ret = mkdir_p(info, 0755) < 0 ? -1 : write_file_atomic(path, more, strlen(more));
		free(more);
	}
	free(text);
	free(path);
	free(info);
	return ret;
}
