"""coverage.py -- which test executes which line of the mutated files.

One gcov build (GVW_COVERAGE=ON), each unit and integration test run alone on
it, and the lines each one executed in the files under mutation. A mutant on a
line no test executes cannot be killed and is not built; a mutant on a covered
line is judged by the tests that execute it, quickest first. The map is cached
in the build folder, keyed by the content of the source tree it was made from.
"""
import glob
import hashlib
import json
import os
import subprocess
import time

from .tree import run

LABELS = ("unit", "integration")
# A test program slower than this is mapped and judged case by case (its cmocka
# cases run one at a time through the case_filter.c shim): a mutant on a line
# only three of test_remedy's 93 cases execute costs those three, not a minute.
SPLIT_MIN_S = 3.0
SHIM_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "case_filter.c")


def shim(build):
    """The case filter, built once into the build folder."""
    out = os.path.join(build, "case_filter.so")
    if not os.path.exists(out):
        rc, msg = run(["cc", "-shared", "-fPIC", "-O1", "-o", out, SHIM_SRC, "-ldl"], build, 120)
        if rc != 0:
            raise RuntimeError("case_filter.so: " + msg[-2000:])
    return out


def unit_env(unit, shim_path):
    """The environment that runs one unit: a whole test program ("test_x"), or
    one case of it ("test_x::test_case")."""
    env = dict(os.environ)
    if "::" in unit:
        env["LD_PRELOAD"] = shim_path
        env["GVW_CASE_FILTER"] = unit.split("::", 1)[1]
    return env


def program_of(unit):
    return unit.split("::", 1)[0]


def cases_of(build, test, shim_path):
    """The cmocka cases of a test program, or [] when it is not one."""
    exe = os.path.join(build, test)
    if not os.access(exe, os.X_OK):
        return []
    env = dict(os.environ, LD_PRELOAD=shim_path, GVW_CASE_LIST="1")
    try:
        out = subprocess.run([exe], cwd=build, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=60).stdout
    except subprocess.TimeoutExpired:
        return []
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("GVW_CASE ")]


def tree_key(src):
    """A digest of the content of every tracked and untracked-not-ignored file
    that can change a test's outcome (the runner itself and Markdown cannot)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=src,
                           stdout=subprocess.PIPE, text=True, check=True).stdout.split()
    h = hashlib.sha256()
    for f in sorted(files):
        if f.startswith("scripts/mut") or f.endswith(".md"):
            continue
        p = os.path.join(src, f)
        if os.path.isfile(p):
            h.update(f.encode() + b"\0")
            with open(p, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()[:16]


def list_tests(build):
    """Names of the tests labelled unit or integration, as ctest lists them."""
    names = []
    for label in LABELS:
        rc, out = run(["ctest", "-N", "-L", "^%s$" % label], build, 120)
        if rc != 0:
            raise RuntimeError("ctest -N failed:\n" + out[-2000:])
        names += [line.split(": ", 1)[1].strip() for line in out.splitlines()
                  if line.strip().startswith("Test") and ": " in line]
    return sorted(set(names))


def lines_run(build, wanted, code):
    """{relative source path: set of executed line numbers} from the .gcda files;
    code gains every line gcov instruments (executed or not)."""
    seen = {}
    for gcda in glob.glob(os.path.join(build, "**", "*.gcda"), recursive=True):
        base = os.path.basename(gcda)[:-len(".gcda")]  # usage.c.gcda -> usage.c
        if not any(w.endswith("/" + base) or w == base for w in wanted.values()):
            continue
        rc, out = run(["gcov", "--json-format", "--stdout", gcda], os.path.dirname(gcda), 60)
        if rc != 0:
            continue
        for doc in out.splitlines():
            doc = doc.strip()
            if not doc.startswith("{"):
                continue
            for f in json.loads(doc).get("files", []):
                rel = wanted.get(os.path.realpath(f["file"]))
                if rel is None:
                    continue
                hit = {ln["line_number"] for ln in f["lines"] if ln["count"] > 0}
                seen.setdefault(rel, set()).update(hit)
                code.setdefault(rel, set()).update(ln["line_number"] for ln in f["lines"])
    return seen


def coverage_map(src, build, rel_paths, log, reuse=False):
    """{"tests": {name: seconds}, "failing": [names], "lines": {rel: {line: [tests]}}}.
    reuse: the newest map made, even of another tree (tests added since are not
    in it: they judge no mutant until the map is made again)."""
    key = tree_key(src)
    cache = os.path.join(build, "coverage-%s.json" % key)
    made = sorted(glob.glob(os.path.join(build, "coverage-*.json")), key=os.path.getmtime)
    if not os.path.exists(cache) and reuse and made:
        log("coverage: reusing %s, made for another tree" % os.path.basename(made[-1]))
        cache = made[-1]
    if os.path.exists(cache):
        with open(cache) as f:
            return json.load(f)
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        rc, out = run(["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DGVW_COVERAGE=ON",
                       "-DCMAKE_BUILD_TYPE=Debug"], src, 300)
        if rc != 0:
            raise RuntimeError("coverage configure failed:\n" + out[-2000:])
    rc, out = run(["cmake", "--build", build, "-j2"], src, 3600)
    if rc != 0:
        raise RuntimeError("coverage build failed:\n" + out[-3000:])
    wanted = {os.path.realpath(os.path.join(src, r)): r for r in rel_paths}
    result = {"tests": {}, "failing": [], "lines": {}, "code": {}}
    code = {}
    tests = list_tests(build)
    shim_path = shim(build)

    def one(unit):
        """Runs one unit alone on the gcov build: True when it passed."""
        for g in glob.glob(os.path.join(build, "**", "*.gcda"), recursive=True):
            os.unlink(g)
        t0 = time.time()
        rc, _ = run(["ctest", "-R", "^%s$" % program_of(unit), "--timeout", "300"], build, 400,
                    env=unit_env(unit, shim_path))
        if rc != 0:
            return False
        result["tests"][unit] = round(time.time() - t0, 2)
        for rel, hit in lines_run(build, wanted, code).items():
            per = result["lines"].setdefault(rel, {})
            for ln in hit:
                per.setdefault(str(ln), []).append(unit)
        return True

    for i, t in enumerate(tests):
        t0 = time.time()
        rc, _ = run(["ctest", "-R", "^%s$" % t, "--timeout", "300"], build, 400)
        if rc != 0:
            result["failing"].append(t)  # never used to judge a mutant
            log("coverage: %s fails on the real code; left out" % t)
            continue
        cases = cases_of(build, t, shim_path) if time.time() - t0 >= SPLIT_MIN_S else []
        saved = json.dumps(result["lines"])
        if cases and all(one("%s::%s" % (t, c)) for c in cases):
            log("coverage [%d/%d] %s: %d cases, one at a time" % (i + 1, len(tests), t, len(cases)))
            continue
        # Not cmocka, or a case that fails alone: the program is one unit.
        result["lines"] = json.loads(saved)
        for k in [k for k in result["tests"] if k.startswith(t + "::")]:
            del result["tests"][k]
        one(t)
        log("coverage [%d/%d] %s %.1f s" % (i + 1, len(tests), t, result["tests"].get(t, -1)))
    result["code"] = {rel: sorted(lines) for rel, lines in code.items()}
    with open(cache, "w") as f:
        json.dump(result, f)
    return result


def statement_start(lines, line):
    """The first line of the statement that holds line (1-based): a condition
    spread over several lines starts at its `if`, `return` or assignment."""
    i = line
    while i > 1:
        prev = lines[i - 2].rstrip()
        if not prev or prev.endswith((";", "{", "}", ":", "*/")) or prev.lstrip().startswith("#"):
            break
        i -= 1
    return i


def tests_for(cov, rel, line, lines=None):
    """The passing tests that execute rel:line, quickest first. A line gcov does
    not instrument (the second line of a condition) is judged by the nearest
    instrumented line above it, the statement it belongs to. With the file's
    lines, every test that reaches the statement's first line judges it too:
    gcov credits a condition's later line only to the tests that evaluate
    that part (one that stops short at `a && b` never reaches the b line), so
    a test that evaluates the mutated part through another line's count
    would be left out."""
    code = cov["code"].get(rel, [])
    per = cov["lines"].get(rel, {})
    names = set()
    for ln in {line, statement_start(lines, line) if lines else line}:
        at = max([c for c in code if c <= ln], default=ln)
        names.update(per.get(str(at), []))
    return sorted(names, key=lambda t: (cov["tests"].get(t, 1e9), t))
