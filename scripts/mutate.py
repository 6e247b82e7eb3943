#!/usr/bin/env python3
"""mutate.py -- a mutation runner for the decision code (not run in CI).

Each mutant (scripts/mutation/mutants.py) is one small change to one function,
named by file, function, operator and occurrence, so names survive edits
elsewhere. The runner first maps which unit and integration test executes
which line (one gcov build, each test run alone; cached per source tree), then
judges each mutant in a scratch copy of the tree (never the working tree):
  - no test executes its line: survived, without a build ("not executed");
  - else its tests' executables and the binary are rebuilt (Ninja, -O0) and
    those tests run quickest first; the first failure kills it;
  - it does not compile: stillborn (not scored);
  - scripts/mutants-equivalent.txt says why no test can tell it apart:
    equivalent (not judged, not scored).
With --confirm a survivor is judged again by every unit and integration test,
so a gap in the coverage map can never pass for a gap in the tests.
With --sanitize only the survivors kept from earlier runs are judged, again,
on an ASan+UBSan build of the scratch tree (the suite's own build) by the
same tests: a read past an array or a leak the plain build cannot see is
killed there, as the suite kills it.
Results go to build-mutate/results-KEY.jsonl as they come, so a stopped run
resumes where it stopped (KEY: the source tree's content).

  scripts/mutate.py --list                      # every mutant, no build
  scripts/mutate.py --only 'brakes|verify'      # mutants whose name matches
  scripts/mutate.py --sample 60 --seed 1        # a reproducible sample
  scripts/mutate.py --workers 2 --confirm       # all of them, two at a time
  scripts/mutate.py --sanitize                  # the survivors, under ASan+UBSan
  scripts/mutate.py ... --write-benchmarks      # the table into BENCHMARKS.md
"""
import argparse
import glob
import json
import os
import queue
import random
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutation import coverage, tree  # noqa: E402
from mutation.mutants import mutants_of  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The decision's rules, its budgets by source and quantities (common/pod) included.
DEFAULT_FILES = ["receiver/policy/*.c", "receiver/decide/*.c", "common/pod/budget_src.c",
                 "common/pod/quantity.c"]
EQUIV_FILE = os.path.join(ROOT, "scripts", "mutants-equivalent.txt")
# Survivors read and not closed yet: still scored as survived, with why.
EXPLAINED_FILE = os.path.join(ROOT, "scripts", "mutants-survivors.txt")
BEGIN, END = "<!-- mutate:begin -->", "<!-- mutate:end -->"
BINARY = "gpu-vram-watchdog"


def load_reasons(path):
    """{name: why} of a "NAME why" list (the equivalents, the explained survivors)."""
    eq = {}
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, why = line.partition(" ")
                eq[name] = why.strip()
    return eq


class Worker:
    """One scratch tree and its build; judges one mutant at a time."""

    def __init__(self, base, n, jobs, log, sanitize=False):
        self.jobs = jobs
        self.sanitize = sanitize
        # Sanitized workers have trees of their own: a plain run may go on beside.
        self.src = os.path.join(base, ("s%d" if sanitize else "w%d") % n, "src")
        self.build = os.path.join(base, ("s%d" if sanitize else "w%d") % n, "build")
        self.log = log

    def prepare(self):
        tree.copy_tree(ROOT, self.src)
        rc, out = tree.configure(self.src, self.build,
                                 ["-DGVW_SANITIZE=ON"] if self.sanitize else [])
        if rc == 0:
            rc, out = tree.run(["cmake", "--build", self.build, "-j2"], self.src, 3600)
        if rc != 0:
            raise RuntimeError("the unmutated tree does not build:\n" + out[-3000:])
        rc, out = tree.run(["ninja", "-C", self.build, "-t", "targets", "all"], self.src, 120)
        # A test that is a script has no target of its own: the binary it runs is built.
        self.targets = {line.split(":")[0] for line in out.splitlines()}

    def judge(self, m, tests, cov, factor):
        path = os.path.join(self.src, m.path)
        with open(path) as f:
            orig = f.read()
        end = m.pos + len(m.old)
        assert orig[m.pos:end] == m.old, m.name
        try:
            with open(path, "w") as f:
                f.write(orig[:m.pos] + m.new + orig[end:])
            targets = sorted({coverage.program_of(t) for t in tests} & self.targets) + [BINARY]
            rc, _ = tree.run(["ninja", "-C", self.build] + targets, self.src, 900)
            if rc != 0:
                m.status = "stillborn"
                return
            shim = coverage.shim(self.build)
            if self.sanitize:
                limits, env_of = sanitized(tests, cov, factor, shim)
            else:
                limits = {t: max(20, int(factor * cov["tests"].get(t, 60))) for t in tests}

                def env_of(u):
                    return coverage.unit_env(u, shim)
            flaky = []
            t, out = tree.first_failure(tests, self.build, limits, self.jobs, flaky, env_of)
            if flaky:
                self.log("flaky under the mutant %s (passed when run again): %s" %
                         (m.name, ", ".join(flaky)))
            if t is not None:
                m.status, m.by = "killed", t + (" (timeout)" if "Timeout" in out else "")
                if self.sanitize:
                    m.by += " (ASan/UBSan)"
                return
            m.status = "survived"
            if self.sanitize:
                m.why = SANITIZED_TOO
        finally:
            with open(path, "w") as f:
                f.write(orig)
            os.utime(path)


# The suite's sanitizer settings (scripts/test.sh): leaks count, the first UB
# report stops. The case filter is preloaded before the ASan runtime, which
# ASan refuses unless told the order does not matter (the shim intercepts
# nothing ASan does).
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1:verify_asan_link_order=0",
                 "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
SANITIZED_TOO = "survived the ASan+UBSan build too"


def sanitized(units, cov, factor, shim):
    """Limits and environments for units on a sanitized build: each may take
    factor times three times its plain time (about how much slower the
    sanitizers run), at least 60 s."""
    limits = {u: max(60, int(factor * 3 * cov["tests"].get(u, 60))) for u in units}
    return limits, lambda u: dict(coverage.unit_env(u, shim), **SANITIZER_ENV)


def record(results_path, m, key):
    with open(results_path, "a") as f:
        f.write(json.dumps({"name": m.name, "mutation": m.describe(), "key": key,
                            "status": m.status, "by": m.by, "why": m.why}) + "\n")


def results_kept(base):
    """Every result of every run kept, oldest first (results files by mtime)."""
    for path in sorted(glob.glob(os.path.join(base, "results-*.jsonl")),
                       key=os.path.getmtime):
        for line in open(path):
            try:
                yield json.loads(line)
            except ValueError:
                continue  # a line cut by a stop


def load_results(base, key):
    """{name: result} of earlier runs. A result of this very tree stands; from
    an earlier tree only a kill (or a stillborn) of the same mutation does:
    tests added since cannot revive a killed mutant, but may kill a survivor."""
    return {r["name"]: r for r in results_kept(base)
            if r.get("key") == key or r["status"] in ("killed", "stillborn")}


def write_benchmarks(results, score_line, seconds, argv):
    path = os.path.join(ROOT, "BENCHMARKS.md")
    text = open(path).read()
    rows = ["| mutant | file | mutation | result |", "|---|---|---|---|"]
    for m in results:
        if m.status == "killed":
            continue  # the table lists what needs a reader: survivors, equivalents
        res = m.status + (" by " + m.by if m.by else "") + (": " + m.why if m.why else "")
        rows.append("| `%s` | %s:%d | %s | %s |" % (m.name, m.path, m.line, m.describe(), res))
    block = "\n".join([BEGIN, "", "Run: `%s` (%d s of judging on this machine). %s" %
                       (" ".join(["scripts/mutate.py"] + argv), seconds, score_line),
                       "", "Every mutant not killed:", ""] + rows + ["", END])
    if BEGIN in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        n = max([int(x) for x in re.findall(r"^## (\d+)\.", text, re.M)] + [0]) + 1
        text += "\n## %d. Mutation score of the decision code (scripts/mutate.py)\n" % n + block + "\n"
    open(path, "w").write(text)


def score_of(ms):
    killed = sum(m.status == "killed" for m in ms)
    survived = sum(m.status == "survived" for m in ms)
    scored = killed + survived
    return "%d of %d scored mutants killed (%.1f %%); %d survived, %d equivalent, %d stillborn." % (
        killed, scored, 100.0 * killed / scored if scored else 0.0, survived,
        sum(m.status == "equivalent" for m in ms), sum(m.status == "stillborn" for m in ms))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", nargs="*", default=DEFAULT_FILES)
    ap.add_argument("--only", help="regex on the mutant's name")
    ap.add_argument("--sample", type=int, help="judge N mutants picked at random")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--base", default=os.path.join(ROOT, "build-mutate"))
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="tests a worker runs at once")
    ap.add_argument("--factor", type=float, default=5.0,
                    help="a test may take this many times its unmutated time (at least 30 s)")
    ap.add_argument("--confirm", action="store_true",
                    help="judge each survivor again with every unit and integration test")
    ap.add_argument("--reuse-coverage", action="store_true",
                    help="use the newest coverage map even if the tree changed since")
    ap.add_argument("--report", action="store_true",
                    help="judge nothing: the newest result of each mutant, from every run kept")
    ap.add_argument("--sanitize", action="store_true",
                    help="judge again, on an ASan+UBSan build, only the survivors kept")
    ap.add_argument("--write-benchmarks", action="store_true")
    a = ap.parse_args()

    paths = sorted({p for g in a.files for p in glob.glob(os.path.join(ROOT, g))})
    ms = [m for p in paths for m in mutants_of(p, ROOT)]
    # The lines the mutants' line numbers count, read now: an edit to the
    # working tree during the run must not shift them.
    lines = {}
    for p in paths:
        with open(p) as f:
            lines[os.path.relpath(p, ROOT)] = f.read().split("\n")
    if a.only:
        ms = [m for m in ms if re.search(a.only, m.name)]
    if a.sample and a.sample < len(ms):
        ms = sorted(random.Random(a.seed).sample(ms, a.sample), key=lambda m: (m.path, m.pos))
    if a.list:
        for m in ms:
            print("%-50s %s:%d %s" % (m.name, m.path, m.line, m.describe()))
        print("%d mutants" % len(ms))
        return 0

    def log(msg):
        print(msg, flush=True)

    if a.report:
        return report(ms, a)
    os.makedirs(a.base, exist_ok=True)
    key = coverage.tree_key(ROOT)
    workers = [Worker(a.base, n, a.jobs, log, a.sanitize) for n in range(max(1, a.workers))]
    for w in workers:
        w.prepare()
    cov = coverage.coverage_map(workers[0].src, os.path.join(a.base, "cov"),
                                sorted({m.path for m in ms}), log, a.reuse_coverage)
    everything = sorted(cov["tests"], key=lambda t: (cov["tests"][t], t))
    everything = [t for t in everything if t not in cov["failing"]]
    results_path = os.path.join(a.base, "results-%s.jsonl" % key)
    done = load_results(a.base, key)
    eq = load_reasons(EQUIV_FILE)
    todo = queue.Queue()
    # Judged in a random order, so the mutants judged by a run stopped early
    # are a fair sample of all of them.
    for m in random.Random(a.seed).sample(ms, len(ms)):
        r = done.get(m.name)
        same = r and r.get("mutation", m.describe()) == m.describe()
        if m.name in eq:
            m.status, m.why = "equivalent", eq[m.name]
        elif a.sanitize:
            # Only this tree's survivors are judged again; a mutant not judged
            # plainly on this tree yet is left as it was.
            if same and r["status"] == "survived" and r["key"] == key and \
                    r["why"] != SANITIZED_TOO:
                todo.put(m)
            elif same:
                m.status, m.by, m.why = r["status"], r["by"], r["why"]
        elif same and (r["status"] != "survived" or not a.confirm or r["why"]):
            m.status, m.by, m.why = r["status"], r["by"], r["why"]
        else:
            todo.put(m)
    total, t0, lock, count = len(ms), time.time(), threading.Lock(), [total_done(ms)]

    def work(w):
        while True:
            try:
                m = todo.get_nowait()
            except queue.Empty:
                return
            tests = coverage.tests_for(cov, m.path, m.line, lines.get(m.path))
            if tests:
                w.judge(m, tests, cov, a.factor)
            else:
                m.status, m.why = "survived", "not executed by any unit or integration test"
            if m.status == "survived" and a.confirm:
                rest = [t for t in everything if t not in tests]
                w.judge(m, rest, cov, a.factor)
                m.why = m.why or "survived every unit and integration test"
                if m.status == "killed":
                    m.by += " (confirm: the coverage map missed it)"
            with lock:
                record(results_path, m, key)
                count[0] += 1
                log("[%d/%d] %-9s %s %s %s" % (count[0], total, m.status, m.name,
                                               m.describe(), m.by or m.why))

    threads = [threading.Thread(target=work, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    score = score_of(ms)
    print(score)
    for m in ms:
        if m.status == "survived":
            print("SURVIVED %s (%s:%d) %s %s" % (m.name, m.path, m.line, m.describe(), m.why))
    if a.write_benchmarks:
        write_benchmarks(ms, score, int(time.time() - t0), sys.argv[1:])
    return 0


def report(ms, a):
    """The score from the results kept: each mutant's newest result of any run
    (a later run judged it on newer tests), equivalents and explanations applied."""
    newest = {r["name"]: r for r in results_kept(a.base)}
    eq, explained = load_reasons(EQUIV_FILE), load_reasons(EXPLAINED_FILE)
    for m in ms:
        r = newest.get(m.name)
        if m.name in eq:
            m.status, m.why = "equivalent", eq[m.name]
        elif r and r.get("mutation", m.describe()) == m.describe():
            m.status, m.by, m.why = r["status"], r["by"], r["why"]
        else:
            m.status = "unjudged"
        if m.status == "survived" and m.name in explained:
            m.why = explained[m.name]
    judged = [m for m in ms if m.status != "unjudged"]
    score = score_of(judged) + " %d of %d mutants judged." % (len(judged), len(ms))
    print(score)
    for m in judged:
        if m.status == "survived":
            print("SURVIVED %s (%s:%d) %s %s" % (m.name, m.path, m.line, m.describe(), m.why))
    if a.write_benchmarks:
        write_benchmarks(judged, score, 0, sys.argv[1:])
    return 0


def total_done(ms):
    return sum(1 for m in ms if m.status)


if __name__ == "__main__":
    sys.exit(main())
