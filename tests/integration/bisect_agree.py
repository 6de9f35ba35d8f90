#!/usr/bin/env python3
"""Randomized agreement test: klab bisect against git bisect run.

Each case generates a random repository with branches and merges
(criss-cross and octopus merges, runs of identical committer dates,
out-of-order dates, now and then a second root) in one `git fast-import`
stream, picks a random first bad commit B and marks every commit's tree
with a file `verdict`: "bad" for B and its descendants, "good" for the
others, "skip" for a few random ones.  Then the same test script runs
under `git bisect run` and under `klab bisect start`; both must report the
same outcome (culprit, or the same set of possible culprits when only
skipped commits are left) and klab must need no more test runs than git.
A fifth of the cases bisect with --first-parent.

Usage: bisect_agree.py [--seed N] [--cases N] [--case K] [--jobs N]
                       [--first-parent-share F] [--keep] [--verbose]
Environment: KLAB (klab binary), KLAB_AGREE_SEED (default seed), TMPDIR.
Exit status: 0 all cases agree, 1 a mismatch (files kept, printed), 2 usage,
77 git too old (skipped).
"""

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

T0 = 1600000000
HEX40 = re.compile(r'^[0-9a-f]{40}$')

TEST_SCRIPT = """#!/bin/sh
# Verdict from the checked-out tree; one line per run appended to $1.
read v < verdict
read id < id
echo "$id $v" >> "$1"
case $v in
good) exit 0 ;;
bad) exit 1 ;;
*) exit 125 ;;
esac
"""


# ---- random history ---------------------------------------------------------

class Case:
    """One generated repository and bisection."""

    def __init__(self, index, seed):
        self.index = index
        self.seed = seed
        self.parents = []      # per commit: list of parent indices
        self.times = []        # committer time
        self.verdict = []      # "good" / "bad" / "skip"
        self.sha = []
        self.anc = []          # bitmask of ancestors, self included
        self.time_mode = None
        self.first_parent = False
        self.B = self.bad = None
        self.goods = []

    def label(self, i):
        return 'c%d' % i

    def is_anc(self, a, d):
        """a is an ancestor of d or equal to it."""
        return (self.anc[d] >> a) & 1 == 1


def gen_case(index, seed, fp_share):
    rng = random.Random('klab-bisect-agree/%d/%d' % (seed, index))
    c = Case(index, seed)
    n_target = rng.randint(10, 60)
    c.time_mode = rng.choices(['normal', 'coarse', 'same', 'pool', 'skewed'],
                              weights=[40, 20, 10, 15, 15])[0]
    pool_size = rng.randint(1, 6)
    run_left = [0]

    def new_time(parents):
        base = max(c.times[p] for p in parents) if parents else T0
        mode = c.time_mode
        if mode == 'same':
            return T0
        if mode == 'pool':
            return T0 + rng.randrange(pool_size)
        if run_left[0] > 0:          # a run of identical dates
            run_left[0] -= 1
            return base
        r = rng.random()
        if mode == 'coarse':
            if r < 0.05:
                return base - rng.randint(1, 3)
            return base + (1 if r < 0.3 else 0)
        skew = 0.3 if mode == 'skewed' else 0.08
        if r < skew:
            return base - rng.randint(1, 5000 if mode == 'skewed' else 300)
        if r < skew + 0.1:
            run_left[0] = rng.randint(2, 6)
            return base
        if r < skew + 0.25:
            return base
        return base + rng.randint(1, 600)

    def add(parents):
        c.parents.append(list(parents))
        c.times.append(new_time(parents))
        mask = 1 << (len(c.parents) - 1)
        for p in parents:
            mask |= c.anc[p]
        c.anc.append(mask)
        return len(c.parents) - 1

    heads = [add([])]
    while len(c.parents) < n_target:
        r = rng.random()
        if len(heads) > 6:
            r = 0.7                                  # force a merge
        if r < 0.45:
            i = rng.randrange(len(heads))            # extend a branch
            heads[i] = add([heads[i]])
        elif r < 0.60:
            p = rng.randrange(len(c.parents))        # fork anywhere
            heads.append(add([p]))
        elif r < 0.80 and len(heads) >= 2:
            a, b = rng.sample(range(len(heads)), 2)  # merge two branches
            m = add([heads[a], heads[b]])
            heads[a] = m
            if rng.random() < 0.5:
                del heads[b]
        elif r < 0.86 and len(heads) >= 2:
            a, b = rng.sample(range(len(heads)), 2)  # criss-cross
            ha, hb = heads[a], heads[b]
            heads[a] = add([ha, hb])
            heads[b] = add([hb, ha])
            if rng.random() < 0.6:                   # and merge it again
                heads[a] = add([heads[a], heads[b]])
        elif r < 0.91 and len(heads) >= 3:
            k = rng.randint(3, min(5, len(heads)))   # octopus
            sel = rng.sample(range(len(heads)), k)
            m = add([heads[s] for s in sel])
            keep = [h for j, h in enumerate(heads) if j not in sel or rng.random() < 0.3]
            heads = keep + [m]
        elif r < 0.95:
            i = rng.randrange(len(heads))            # merge an old commit
            o = rng.randrange(len(c.parents))
            if not c.is_anc(o, heads[i]):
                heads[i] = add([heads[i], o])
            else:
                heads[i] = add([heads[i]])
        elif r < 0.965:
            heads.append(add([]))                    # an unrelated root
        else:
            i = rng.randrange(len(heads))
            heads[i] = add([heads[i]])
    n = len(c.parents)

    # The first bad commit: anything that leaves something good.
    full = (1 << n) - 1
    desc = [0] * n                                   # descendants bitmask
    for i in range(n):
        a = c.anc[i]
        j = 0
        while a:
            if a & 1:
                desc[j] |= 1 << i
            a >>= 1
            j += 1
    choices = [i for i in range(n) if desc[i] != full]
    c.B = rng.choice(choices)
    descB = desc[c.B]
    bad_set = [i for i in range(n) if (descB >> i) & 1]
    has_child = set(p for ps in c.parents for p in ps)
    tips = [i for i in bad_set if i not in has_child]
    c.bad = rng.choice(tips) if rng.random() < 0.75 else rng.choice(bad_set)

    nondesc = [i for i in range(n) if not (descB >> i) & 1]
    below_bad = [i for i in nondesc if c.is_anc(i, c.bad)]
    goods = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        src = below_bad if below_bad and rng.random() < 0.65 else nondesc
        g = rng.choice(src)
        if g not in goods:
            goods.append(g)
    c.goods = goods

    p_skip = 0.0 if rng.random() < 0.4 else rng.uniform(0.05, 0.35)
    for i in range(n):
        if (descB >> i) & 1:
            v = 'bad'
        else:
            v = 'good'
        if rng.random() < p_skip:
            v = 'skip'
        c.verdict.append(v)
    if rng.random() < 0.12:
        c.verdict[c.B] = 'skip'
    c.first_parent = rng.random() < fp_share
    return c


def fast_import_stream(c):
    out = []
    for i, ps in enumerate(c.parents):
        t = c.times[i]
        msg = 'c%d' % i
        if not ps:
            out.append('reset refs/heads/gen\n')
        out.append('commit refs/heads/gen\nmark :%d\n' % (i + 1))
        out.append('author A U Thor <author@example.com> %d +0000\n' % t)
        out.append('committer C O Mitter <committer@example.com> %d +0000\n' % t)
        out.append('data %d\n%s\n' % (len(msg), msg))
        if ps:
            out.append('from :%d\n' % (ps[0] + 1))
            for p in ps[1:]:
                out.append('merge :%d\n' % (p + 1))
        out.append('deleteall\n')
        v = c.verdict[i]
        out.append('M 100644 inline verdict\ndata %d\n%s\n' % (len(v) + 1, v))
        out.append('M 100644 inline id\ndata %d\n%s\n' % (len(msg) + 1, msg))
        out.append('\n')
    out.append('reset refs/heads/main\nfrom :%d\n\n' % (c.bad + 1))
    return ''.join(out)


# ---- expected result (an oracle for the generator itself) ---------------------

def expected_culprit(c):
    """The true first bad commit of the bisection, as an index."""
    if not c.first_parent:
        return c.B
    cur = c.bad
    while True:
        ps = c.parents[cur]
        if not ps or not c.is_anc(c.B, ps[0]):
            return cur
        cur = ps[0]


# ---- running git and klab -------------------------------------------------------

def run(argv, cwd=None, env=None, input_text=None):
    p = subprocess.run(argv, cwd=cwd, env=env, input=input_text, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


class Outcome:
    def __init__(self, who):
        self.who = who
        self.kind = 'error'      # found / skipped-only / error
        self.culprit = None
        self.candidates = set()
        self.runs = 0
        self.tested = []         # "cN verdict" per test run
        self.log = ''

    def describe(self, c):
        lab = c.label_of
        if self.kind == 'found':
            return 'found %s' % lab(self.culprit)
        if self.kind == 'skipped-only':
            names = sorted(lab(x) for x in self.candidates)
            return 'skipped-only {%s}' % ' '.join(sorted(names, key=lambda x: (len(x), x)))
        return 'error'


def parse_result(out, text):
    m = re.search(r'^([0-9a-f]{40}) is the first bad commit$', text, re.M)
    if m:
        out.kind = 'found'
        out.culprit = m.group(1)
        return
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if line.startswith('The first bad commit could be any of:'):
            for cand in lines[k + 1:]:
                cand = cand.strip()
                if HEX40.match(cand):
                    out.candidates.add(cand)
                else:
                    break
            out.kind = 'skipped-only'
            return


def read_runs(path):
    try:
        with open(path) as f:
            return [line.rstrip('\n') for line in f]
    except FileNotFoundError:
        return []


def git_bisect_command(env):
    """How to run `git bisect`.  Up to git 2.39 `git bisect` is a shell
    script whose start, run and reset only exec `git bisect--helper` with
    the same arguments; its set-up (git-sh-setup) costs more than a whole
    bisection here, so when the installed script is that plain dispatch,
    call the helper directly: the same code, the same behaviour."""
    rc, so, se = run(['git', '--exec-path'], env=env)
    if rc == 0:
        path = os.path.join(so.strip(), 'git-bisect')
        try:
            with open(path) as f:
                text = f.read(65536)
        except (OSError, UnicodeDecodeError):
            text = ''
        if text.startswith('#!') and '*)\n\t\tgit bisect--helper "$cmd" "$@" ;;' in text and \
           os.path.exists(os.path.join(so.strip(), 'git-bisect--helper')):
            return ['git', 'bisect--helper']
    return ['git', 'bisect']


def run_git(c, d, git_bisect, script, env):
    o = Outcome('git')
    repo = os.path.join(d, 'repo')
    count = os.path.join(d, 'git.runs')
    start = git_bisect + ['start']
    if c.first_parent:
        start.append('--first-parent')
    start.append(c.sha[c.bad])
    start += [c.sha[g] for g in c.goods]
    rc, so, se = run(start, cwd=repo, env=env)
    o.log = '$ %s\n%s%s' % (' '.join(start), so, se)
    text = so
    # `git bisect run` stops with "bisect run success" and no result when
    # one merge base was tested and another one must be: then run it
    # again, as its user would.
    for _ in range(20):
        if rc != 0 or re.search(r'is the first bad commit|only .skip.ped commits', text):
            break
        rc, so, se = run(git_bisect + ['run', script, count], cwd=repo, env=env)
        o.log += '$ git bisect run\n%s%s' % (so, se)
        text = so
        if 'bisect run success' not in so:
            break
    parse_result(o, text)
    o.tested = read_runs(count)
    o.runs = len(o.tested)
    return o


def run_klab(c, d, klab, state, script, env):
    o = Outcome('klab')
    repo = os.path.join(d, 'repo')
    count = os.path.join(d, 'klab.runs')
    argv = [klab, '--state', state, 'bisect', 'start', '--repo', repo, '--bad', c.sha[c.bad]]
    for g in c.goods:
        argv += ['--good', c.sha[g]]
    if c.first_parent:
        argv.append('--first-parent')
    argv += ['--', script, count]
    rc, so, se = run(argv, env=env)
    o.log = '$ klab bisect start ...%s\n%s%s(exit %d)\n' % (
        ' --first-parent' if c.first_parent else '', so, se, rc)
    parse_result(o, so)
    if (o.kind == 'found' and rc != 0) or (o.kind == 'skipped-only' and rc != 3) or \
       (o.kind == 'error' and rc in (0, 3)):
        o.log += 'unexpected klab exit status %d for outcome %s\n' % (rc, o.kind)
        o.kind = 'error'
    o.tested = read_runs(count)
    o.runs = len(o.tested)
    m = re.match(r'bisection (\d+):', so)
    if not m:
        o.kind = 'error'
        o.log += 'no "bisection ID:" line\n'
        return o
    rc, so, se = run([klab, '--state', state, 'bisect', 'show', m.group(1)], env=env)
    o.log += '$ klab bisect show %s\n%s%s' % (m.group(1), so, se)
    steps = re.search(r'^steps:\s+(\d+)$', so, re.M)
    culprit = re.search(r'^culprit:\s+([0-9a-f]{40})\b', so, re.M)
    cands = set(re.findall(r'^candidate:\s+([0-9a-f]{40})$', so, re.M))
    if rc != 0 or not steps or int(steps.group(1)) != o.runs or \
       (o.kind == 'found' and (not culprit or culprit.group(1) != o.culprit)) or \
       (o.kind == 'skipped-only' and cands != o.candidates):
        o.log += "'klab bisect show' disagrees with the run (steps %s, %d test runs)\n" % (
            steps.group(1) if steps else '?', o.runs)
        o.kind = 'error'
    return o


def run_case(c, base, klab, state, git_bisect, script, env, keep):
    d = os.path.join(base, 'case-%d' % c.index)
    repo = os.path.join(d, 'repo')
    os.makedirs(d)
    rc, so, se = run(['git', 'init', '-q', '-b', 'main', repo], env=env)
    if rc != 0:
        raise RuntimeError('git init failed: ' + se)
    marks = os.path.join(d, 'marks')
    rc, so, se = run(['git', 'fast-import', '--quiet', '--export-marks=' + marks],
                     cwd=repo, env=env, input_text=fast_import_stream(c))
    if rc != 0:
        raise RuntimeError('git fast-import failed: ' + se)
    c.sha = [None] * len(c.parents)
    with open(marks) as f:
        for line in f:
            mark, sha = line.split()
            c.sha[int(mark[1:]) - 1] = sha
    by_sha = {s: i for i, s in enumerate(c.sha)}
    c.label_of = lambda s: 'c%d' % by_sha[s] if s in by_sha else s[:12]

    # klab first: it reads the repository only; then git bisects in it.
    k = run_klab(c, d, klab, state, script, env)
    g = run_git(c, d, git_bisect, script, env)

    problems = []
    if g.kind == 'error':
        problems.append('git did not finish the bisection')
    if k.kind != g.kind:
        problems.append('outcome differs: git %s, klab %s' % (g.describe(c), k.describe(c)))
    elif k.kind == 'found' and k.culprit != g.culprit:
        problems.append('culprit differs: git %s, klab %s' % (g.describe(c), k.describe(c)))
    elif k.kind == 'skipped-only' and k.candidates != g.candidates:
        problems.append('candidates differ: git %s, klab %s' % (g.describe(c), k.describe(c)))
    if k.runs > g.runs:
        problems.append('klab ran the test %d times, git %d' % (k.runs, g.runs))
    # The generator's own oracle: a consistent verdict has one true answer.
    truth = c.sha[expected_culprit(c)]
    if g.kind == 'found' and g.culprit != truth:
        problems.append('git names %s, the true first bad commit is %s'
                        % (c.label_of(g.culprit), c.label_of(truth)))
    if g.kind == 'skipped-only' and truth not in g.candidates:
        problems.append('git candidates miss the true first bad commit %s' % c.label_of(truth))
    # A repository that is deleted needs no `git bisect reset`.
    if problems or keep:
        run(git_bisect + ['reset'], cwd=repo, env=env)
    return d, g, k, problems


def describe_case(c):
    lines = []
    lines.append('case %d (seed %d): %d commits, dates %s, %s, first bad c%d, bad c%d, good %s'
                 % (c.index, c.seed, len(c.parents), c.time_mode,
                    'first-parent' if c.first_parent else 'all parents',
                    c.B, c.bad, ' '.join('c%d' % g for g in c.goods)))
    for i in range(len(c.parents) - 1, -1, -1):
        tags = []
        if i == c.B:
            tags.append('FIRST-BAD')
        if i == c.bad:
            tags.append('BAD')
        if i in c.goods:
            tags.append('GOOD')
        lines.append('  c%-3d %s  date %+6d  parents %-16s %-4s %s' % (
            i, c.sha[i][:12] if c.sha else '?', c.times[i] - T0,
            ','.join('c%d' % p for p in c.parents[i]) or '-', c.verdict[i], ' '.join(tags)))
    return '\n'.join(lines)


def main():
    ap = argparse.ArgumentParser(description='klab bisect vs git bisect run on random DAGs')
    ap.add_argument('--seed', type=int,
                    default=int(os.environ['KLAB_AGREE_SEED']) if os.environ.get('KLAB_AGREE_SEED')
                    else None)
    ap.add_argument('--cases', type=int, default=200)
    ap.add_argument('--case', type=int, default=None, help='run only this case number')
    ap.add_argument('--first-parent-share', type=float, default=0.2)
    ap.add_argument('--jobs', type=int, default=min(4, os.cpu_count() or 2))
    ap.add_argument('--keep', action='store_true', help='keep every case directory')
    ap.add_argument('--verbose', action='store_true', help='one line per case')
    args = ap.parse_args()
    if args.cases < 1 or args.jobs < 1:
        ap.error('--cases and --jobs must be at least 1')
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), 'big')
    klab = os.path.abspath(os.environ.get('KLAB') or '/work/main/orchestrator/klab')
    if not os.access(klab, os.X_OK):
        print('bisect_agree: klab binary %s not found' % klab, file=sys.stderr)
        return 1

    # A predictable git: no user or system configuration, no inherited
    # repository, English messages, a fixed identity.
    env = {k: v for k, v in os.environ.items() if not k.startswith('GIT_')}
    env.update(GIT_CONFIG_NOSYSTEM='1', GIT_CONFIG_GLOBAL=os.devnull, LC_ALL='C', LANG='C',
               GIT_AUTHOR_NAME='klab test', GIT_AUTHOR_EMAIL='test@klab.invalid',
               GIT_COMMITTER_NAME='klab test', GIT_COMMITTER_EMAIL='test@klab.invalid',
               GIT_TERMINAL_PROMPT='0')
    for k in ('KLAB_STATE', 'XDG_STATE_HOME'):
        env.pop(k, None)

    rc, so, se = run(['git', '--version'], env=env)
    m = re.search(r'(\d+)\.(\d+)', so)
    if rc != 0 or not m or (int(m.group(1)), int(m.group(2))) < (2, 29):
        # git bisect --first-parent and git init -b need git 2.29
        print('bisect_agree: SKIP: needs git 2.29 or newer (%s)' % (so.strip() or se.strip()))
        return 77
    git_bisect = git_bisect_command(env)
    indices = [args.case] if args.case is not None else list(range(1, args.cases + 1))
    print('bisect_agree: seed %d, %d case%s, %d job%s, %s (rerun: --seed %d --cases %d)'
          % (seed, len(indices), '' if len(indices) == 1 else 's', args.jobs,
             '' if args.jobs == 1 else 's', ' '.join(git_bisect), seed, args.cases), flush=True)
    base = tempfile.mkdtemp(prefix='klab-agree.', dir=os.environ.get('TMPDIR') or '/tmp')
    env['HOME'] = base
    script = os.path.join(base, 'verdict.sh')
    with open(script, 'w') as f:
        f.write(TEST_SCRIPT)
    os.chmod(script, 0o755)

    t_start = time.time()
    lock = threading.Lock()
    results = {}

    # One klab state directory per worker: bisection ids simply increase.
    tls = threading.local()

    def state_dir():
        if not hasattr(tls, 'state'):
            with lock:
                tls.state = os.path.join(base, 'klab-state-%d' % len(states))
                states.append(tls.state)
            rc, so, se = run([klab, '--state', tls.state, 'init'], env=env)
            if rc != 0:
                raise RuntimeError('klab init failed (%d): %s%s' % (rc, so, se))
        return tls.state

    states = []

    def one(i):
        c = gen_case(i, seed, args.first_parent_share)
        try:
            d, g, k, problems = run_case(c, base, klab, state_dir(), git_bisect, script, env,
                                         args.keep)
        except Exception as e:  # a broken environment, not a disagreement
            d, g, k, problems = os.path.join(base, 'case-%d' % i), None, None, ['exception: %r' % e]
        if not problems and not args.keep:
            shutil.rmtree(d, ignore_errors=True)
        with lock:
            results[i] = (c, d, g, k, problems)
            if args.verbose:
                print('case %d: %s, git %s in %s runs, klab %s in %s runs%s' % (
                    i, 'first-parent' if c.first_parent else 'all parents',
                    g.describe(c) if g else '-', g.runs if g else '-',
                    k.describe(c) if k else '-', k.runs if k else '-',
                    ' MISMATCH' if problems else ''), flush=True)

    if args.jobs == 1:
        for i in indices:
            one(i)
    else:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for f in [pool.submit(one, i) for i in indices]:
                f.result()

    mismatches = 0
    git_runs = klab_runs = fewer = skipped_only = fp_cases = mb_cases = 0
    for i in indices:
        c, d, g, k, problems = results[i]
        if c.first_parent:
            fp_cases += 1
        if g:
            git_runs += g.runs
            if g.kind == 'skipped-only':
                skipped_only += 1
            if 'merge base must be tested' in g.log:
                mb_cases += 1
        if k:
            klab_runs += k.runs
        if g and k and k.runs < g.runs:
            fewer += 1
        if not problems:
            continue
        mismatches += 1
        print('\n==== MISMATCH: seed %d case %d (rerun: %s --seed %d --case %d)'
              % (seed, i, sys.argv[0], seed, i))
        for p in problems:
            print('  ' + p)
        print(describe_case(c))
        for o in (g, k):
            if o:
                print('---- %s: %s after %d test runs: %s' % (
                    o.who, o.describe(c), o.runs, ', '.join(o.tested)))
                print(o.log.rstrip())
        print('---- files kept in %s' % d)

    elapsed = time.time() - t_start
    print('agreement: %d cases (%d first-parent, %d with a merge base tested, %d skipped-only), '
          '%d mismatches, klab steps %d vs git %d (klab fewer in %d cases), %.1fs'
          % (len(indices), fp_cases, mb_cases, skipped_only, mismatches, klab_runs, git_runs,
             fewer, elapsed))
    if mismatches:
        print('bisect_agree: seed %d: files kept in %s' % (seed, base))
        return 1
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    else:
        print('bisect_agree: files kept in %s' % base)
    return 0


if __name__ == '__main__':
    sys.exit(main())
