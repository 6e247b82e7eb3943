"""mutants.py -- the mutants of a C file in this codebase's style.

Each mutant is one small change to one function (a flipped comparison, a
dropped guard, a swapped boolean operator, an off-by-one, a flipped return),
named by file, function, operator and its occurrence inside that function, so
the names survive edits elsewhere in the file.
"""
import os
import re

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


def mutants_of(path, root):
    rel = os.path.relpath(path, root)
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
