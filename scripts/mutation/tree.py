"""tree.py -- the scratch copies the runner mutates, and running a command.

Each worker mutates its own copy of the source tree (tracked and untracked
files, not the ignored ones), never the working tree itself, so the runner can
go on while someone edits and commits beside it.
"""
import os
import shutil
import signal
import subprocess
import time


def run(cmd, cwd, timeout, env=None):
    """(exit status, stdout and stderr together); 124 on a timeout."""
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace", env=env)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        return 124, "timeout"


def copy_tree(root, dest):
    """dest holds exactly root's tracked and untracked-not-ignored files. A file
    whose content changed gets the time of now, never root's: a mutant restored
    earlier left its object newer than root's copy of the file."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root,
                           stdout=subprocess.PIPE, check=True).stdout.decode().split("\0")
    keep = set()
    for f in files:
        src = os.path.join(root, f)
        if not f or not os.path.isfile(src):
            continue
        keep.add(f)
        out = os.path.join(dest, f)
        with open(src, "rb") as fh:
            data = fh.read()
        if os.path.isfile(out):
            with open(out, "rb") as fh:
                if fh.read() == data:
                    continue
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as fh:
            fh.write(data)
        shutil.copymode(src, out)
    for dirpath, dirnames, filenames in os.walk(dest):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), dest)
            if rel not in keep:
                os.unlink(os.path.join(dirpath, name))
    if not os.path.isdir(os.path.join(dest, ".git")):
        # Not a git work tree of root; scripts that ask git for the source
        # root get it from this marker.
        subprocess.run(["git", "init", "-q", dest], check=True)


# The compiler, with warnings left as warnings: a mutant such as `a || b && c`
# is valid C that -Werror=parentheses would call stillborn.
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "no-werror.sh")


def configure(src, build, extra=()):
    """A Ninja build of src in build (made once; later calls reuse it)."""
    if os.path.exists(os.path.join(build, "CMakeCache.txt")):
        return 0, ""
    return run(["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Debug",
                "-DCMAKE_C_FLAGS_DEBUG=-O0", "-DCMAKE_C_COMPILER_LAUNCHER=" + LAUNCHER]
               + list(extra), src, 300)


def first_failure(tests, build, limits, jobs, flaky, env_of):
    """Runs each test alone through ctest, up to jobs at once, in the order
    given; returns (the first test that failed twice running, its output) or
    (None, ""). A test that failed once and then passed is added to flaky."""
    pending, running = list(tests), []
    try:
        while pending or running:
            while pending and len(running) < jobs:
                t = pending.pop(0)
                p = subprocess.Popen(["ctest", "-R", "^%s$" % t.split("::")[0], "--timeout",
                                      str(limits[t])], env=env_of(t),
                                     cwd=build, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, errors="replace",
                                     start_new_session=True)
                running.append((t, p, time.time()))
            time.sleep(0.05)
            for t, p, t0 in list(running):
                if p.poll() is None:
                    if time.time() - t0 > limits[t] + 30:
                        os.killpg(p.pid, signal.SIGKILL)
                    continue
                running.remove((t, p, t0))
                out = p.stdout.read()
                p.stdout.close()
                if p.returncode != 0:
                    # A failure must happen twice: a timing test under load
                    # can fail once on the real code too.
                    rc, again = run(["ctest", "-R", "^%s$" % t.split("::")[0], "--timeout",
                                     str(limits[t])], build, limits[t] + 30, env=env_of(t))
                    if rc != 0:
                        return t, out
                    flaky.append(t)
        return None, ""
    finally:
        for t, p, _ in running:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            p.stdout.close()
