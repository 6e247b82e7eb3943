#!/usr/bin/env python3
"""links.py -- every relative link in the repository's markdown resolves inside it.

  links.py ROOT

Reads every markdown file under ROOT (git's tracked and untracked files that
are not ignored; without git, every *.md outside build*/ and node_modules/),
takes each link outside code (inline `[t](path "title")` and `![i](path)`,
`<path>` forms, reference definitions `[ref]: path`, HTML `href=`/`src=`),
skips those with a scheme (https:, mailto:, ...) and checks that the target
exists, lies inside ROOT once resolved (a leading / is ROOT, as GitHub reads
it; `..` and symbolic links may not lead out) and, for `#anchor` into a
markdown file, names one of its headings as GitHub slugs them. Prints one line
per broken link and the count checked; exits 1 if any is broken.
"""
import os
import re
import subprocess
import sys
import urllib.parse

INLINE = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML = re.compile(r"\b(?:href|src)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE = re.compile(r"(`+).*?\1")


def md_files(root):
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "*.md"], cwd=root,
                             capture_output=True, text=True, check=True).stdout.split("\n")
        files = [f for f in out if f and "/node_modules/" not in f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs if x != "node_modules" and x != ".git" and
                   not (rel == "." and x.startswith("build"))]
        files += [os.path.normpath(os.path.join(rel, n)) for n in names if n.endswith(".md")]
    return files


def slugs(path):
    out, fence = set(), False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if FENCE.match(line):
                fence = not fence
                continue
            m = None if fence else re.match(r"^#+\s+(.*?)\s*#*\s*$", line)
            if m:
                h = re.sub(r"[^a-z0-9 _-]", "", m.group(1).lower())
                out.add(h.replace(" ", "-"))
    return out


def links(path):
    fence = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fence = not fence
                continue
            if fence:
                continue
            text = CODE.sub("", line)
            for m in INLINE.finditer(text):
                yield n, m.group(1)
            m = REFDEF.match(text)
            if m:
                yield n, m.group(1)
            for m in HTML.finditer(text):
                yield n, m.group(1) if m.group(1) is not None else m.group(2)


def main():
    root = os.path.realpath(sys.argv[1])
    bad = checked = 0
    for rel in sorted(md_files(root)):
        src = os.path.join(root, rel)
        for n, link in links(src):
            link = link.strip("<>")
            if SCHEME.match(link):
                continue
            checked += 1
            target, _, anchor = link.partition("#")
            target = urllib.parse.unquote(target)
            if not target:
                path = src
            elif target.startswith("/"):
                path = os.path.join(root, target.lstrip("/"))
            else:
                path = os.path.join(os.path.dirname(src), target)
            real = os.path.realpath(path)
            why = None
            if real != root and not real.startswith(root + os.sep):
                why = "points outside the repository (%s)" % real
            elif not os.path.exists(real):
                why = "%s does not exist" % os.path.relpath(real, root)
            elif anchor and real.endswith(".md") and os.path.isfile(real) and anchor not in slugs(real):
                why = "no heading #%s in %s" % (anchor, os.path.relpath(real, root))
            if why:
                print("%s:%d: %s: %s" % (rel, n, link, why))
                bad += 1
    print("%d relative links checked" % checked)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
