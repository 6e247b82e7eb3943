#!/usr/bin/env python3
"""mutate.py -- a mutation runner for the decision code (not run in CI).

Each mutant is one small change to one function (a flipped comparison, a
dropped guard, a swapped boolean operator, an off-by-one, a flipped return),
named by file, function, operator and its occurrence inside that function, so
the names survive edits elsewhere in the file. For each mutant the runner
rebuilds (a plain Debug build in build-mutate/), runs the fast tests
(ctest label `unit`) and, for the survivors, the engine's integration tests
(label `integration`). A mutant is killed when a test fails, stillborn when it
does not compile (not scored), survived otherwise, or equivalent when
scripts/mutants-equivalent.txt says why no test can tell it apart.

  scripts/mutate.py --list                      # every mutant, no build
  scripts/mutate.py --only 'brakes|verify'      # mutants whose name matches
  scripts/mutate.py --sample 60 --seed 1        # a reproducible sample
  scripts/mutate.py ... --write-benchmarks      # the table into BENCHMARKS.md

The working tree must be clean in the mutated files: each file is restored
after its mutant, whatever happens (Ctrl-C included).
"""
import argparse
import glob
import os
import random
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The decision's rules, its budgets by source and quantities (common/pod) included.
DEFAULT_FILES = ["receiver/policy/*.c", "receiver/decide/*.c", "common/pod/budget_src.c",
                 "common/pod/quantity.c"]
EQUIV_FILE = os.path.join(ROOT, "scripts", "mutants-equivalent.txt")
BEGIN, END = "<!-- mutate:begin -->", "<!-- mutate:end -->"

# A function definition in this codebase's style: the return type on its own
# line, the name at column 0, the body's braces at column 0.
FUNC_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(([^;{]*?)\)\s*\n\{", re.M | re.S)


def blank_comments_and_strings(text):
    """Same length, comments and string/char literals replaced by spaces, so an
    operator is never found inside them."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def functions(text):
    """(name, body_start, body_end) of each function; the body spans from its
    opening brace to the closing brace at column 0."""
    for m in FUNC_RE.finditer(text):
        start = m.end() - 1
        end = text.find("\n}", start)
        if end < 0:
            continue
        yield m.group(1), start, end + 2


# operator name -> (regex on the blanked text, replacement function)
def _swap(table):
    return lambda s: table[s]


OPERATORS = [
    ("cmp", re.compile(r"(?<![<>\-=!])(<=|>=|<|>)(?![<>=])"),
     _swap({"<": "<=", "<=": "<", ">": ">=", ">=": ">"})),
    ("eq", re.compile(r"==|!="), _swap({"==": "!=", "!=": "=="})),
    ("andor", re.compile(r"&&|\|\|"), _swap({"&&": "||", "||": "&&"})),
    ("not", re.compile(r"!(?=[A-Za-z_(])"), lambda s: ""),
    ("off1", re.compile(r"(?<=[\w)\]] )[+-] 1\b"), _swap({"+ 1": "- 1", "- 1": "+ 1"})),
    ("ret", re.compile(r"return (0|-1|1);"),
     _swap({"return 0;": "return -1;", "return -1;": "return 0;", "return 1;": "return 0;"})),
]
# A guard: `if (` ... `)` followed by a return/continue/break/goto statement.
GUARD_RE = re.compile(r"\bif \(")


def guard_spans(blank, start, end):
    """(cond_start, cond_end) of each `if (cond)` whose statement leaves early."""
    for m in GUARD_RE.finditer(blank, start, end):
        depth, i = 0, m.end() - 1
        while i < end:
            if blank[i] == "(":
                depth += 1
            elif blank[i] == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        rest = blank[i + 1:i + 200].lstrip()
        if rest.startswith("{"):
            rest = rest[1:].lstrip()
        if re.match(r"(return|continue|break|goto)\b", rest):
            yield m.end(), i


class Mutant:
    def __init__(self, path, func, op, k, pos, old, new, line):
        self.path, self.func, self.op, self.k = path, func, op, k
        self.pos, self.old, self.new, self.line = pos, old, new, line
        self.status, self.by, self.why = "", "", ""

    @property
    def name(self):
        return "%s:%s:%s#%d" % (os.path.basename(self.path), self.func, self.op, self.k)

    def describe(self):
        old = " ".join(self.old.split())
        new = " ".join(self.new.split()) or "(removed)"
        # A table cell: a `|` inside code would end the cell.
        return ("`%s` → `%s`" % (old[:60], new[:60])).replace("|", "\\|")


def mutants_of(path):
    rel = os.path.relpath(path, ROOT)
    text = open(path).read()
    blank = blank_comments_and_strings(text)
    out = []
    for func, start, end in functions(blank):
        for op, rx, repl in OPERATORS:
            for k, m in enumerate(rx.finditer(blank, start, end)):
                old = text[m.start():m.end()]
                out.append(Mutant(rel, func, op, k, m.start(), old, repl(old),
                                  text.count("\n", 0, m.start()) + 1))
        for k, (a, b) in enumerate(guard_spans(blank, start, end)):
            out.append(Mutant(rel, func, "guard", k, a, text[a:b], "0",
                              text.count("\n", 0, a) + 1))
    return out


def load_equivalents():
    eq = {}
    if os.path.exists(EQUIV_FILE):
        for line in open(EQUIV_FILE):
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, why = line.partition(" ")
                eq[name] = why.strip()
    return eq


def run(cmd, cwd, timeout):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        return 124, "timeout"


def failed_tests(out):
    return re.findall(r"\d+ - (\S+) \(", out)


def judge(m, build, timeout):
    path = os.path.join(ROOT, m.path)
    orig = open(path).read()
    end = m.pos + len(m.old)
    assert orig[m.pos:end] == m.old, m.name
    try:
        with open(path, "w") as f:
            f.write(orig[:m.pos] + m.new + orig[end:])
        rc, out = run(["cmake", "--build", build, "-j2"], ROOT, 900)
        if rc != 0:
            m.status = "stillborn"
            return
        for label in ("unit", "integration"):
            # The first failing test is enough to call it killed.
            rc, out = run(["ctest", "-L", "^%s$" % label, "-j2", "--stop-on-failure",
                           "--timeout", str(timeout)], build, timeout * 4)
            if rc != 0:
                m.status, m.by = "killed", ", ".join(failed_tests(out)[:3]) or label
                return
        m.status = "survived"
    finally:
        with open(path, "w") as f:
            f.write(orig)
        os.utime(path)


def write_benchmarks(results, score_line, seconds):
    path = os.path.join(ROOT, "BENCHMARKS.md")
    text = open(path).read()
    rows = ["| file | function | mutation | result |", "|---|---|---|---|"]
    for m in results:
        res = m.status + (" by " + m.by if m.by else "") + (": " + m.why if m.why else "")
        rows.append("| %s | `%s` | %s %s | %s |" % (m.path, m.func, m.op, m.describe(), res))
    block = "\n".join([BEGIN, "", "Run: `%s` (%d s on this machine). %s" %
                       (" ".join(["scripts/mutate.py"] + sys.argv[1:]), seconds, score_line),
                       ""] + rows + ["", END])
    if BEGIN in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        n = max([int(x) for x in re.findall(r"^## (\d+)\.", text, re.M)] + [0]) + 1
        text += "\n## %d. Mutation score of the decision code (scripts/mutate.py)\n" % n + block + "\n"
    open(path, "w").write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", nargs="*", default=DEFAULT_FILES)
    ap.add_argument("--only", help="regex on the mutant's name")
    ap.add_argument("--sample", type=int, help="judge N mutants picked at random")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--build", default=os.path.join(ROOT, "build-mutate"))
    ap.add_argument("--timeout", type=int, default=120, help="seconds per test")
    ap.add_argument("--write-benchmarks", action="store_true")
    a = ap.parse_args()

    paths = sorted({p for g in a.files for p in glob.glob(os.path.join(ROOT, g))})
    ms = [m for p in paths for m in mutants_of(p)]
    if a.only:
        ms = [m for m in ms if re.search(a.only, m.name)]
    if a.sample and a.sample < len(ms):
        ms = sorted(random.Random(a.seed).sample(ms, a.sample), key=lambda m: (m.path, m.pos))
    if a.list:
        for m in ms:
            print("%-50s %s:%d %s" % (m.name, m.path, m.line, m.describe()))
        print("%d mutants" % len(ms))
        return 0
    dirty = subprocess.run(["git", "status", "--porcelain", "--"] + [m.path for m in ms],
                           cwd=ROOT, stdout=subprocess.PIPE, text=True).stdout
    if dirty.strip():
        print("mutate: commit or stash these first:\n" + dirty, file=sys.stderr)
        return 2
    if not os.path.exists(os.path.join(a.build, "CMakeCache.txt")):
        rc, out = run(["cmake", "-S", ROOT, "-B", a.build, "-DCMAKE_BUILD_TYPE=Debug"], ROOT, 300)
        if rc != 0:
            print(out, file=sys.stderr)
            return 2
    rc, out = run(["cmake", "--build", a.build, "-j2"], ROOT, 1800)
    if rc != 0:
        print("mutate: the unmutated tree does not build:\n" + out[-2000:], file=sys.stderr)
        return 2
    eq = load_equivalents()
    t0 = time.time()
    for i, m in enumerate(ms):
        if m.name in eq:
            m.status, m.why = "equivalent", eq[m.name]
        else:
            judge(m, a.build, a.timeout)
        print("[%d/%d] %-8s %s %s %s" % (i + 1, len(ms), m.status, m.name, m.describe(),
                                         m.by), flush=True)
    run(["cmake", "--build", a.build, "-j2"], ROOT, 900)  # back to the real code
    killed = sum(m.status == "killed" for m in ms)
    survived = [m for m in ms if m.status == "survived"]
    scored = killed + len(survived)
    score = "%d of %d scored mutants killed (%.1f %%); %d equivalent, %d stillborn." % (
        killed, scored, 100.0 * killed / scored if scored else 0.0,
        sum(m.status == "equivalent" for m in ms), sum(m.status == "stillborn" for m in ms))
    print(score)
    for m in survived:
        print("SURVIVED %s (%s:%d) %s" % (m.name, m.path, m.line, m.describe()))
    if a.write_benchmarks:
        write_benchmarks(ms, score, int(time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
