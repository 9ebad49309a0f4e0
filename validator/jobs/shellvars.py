"""A launch script's words and variables, as validator/jobs/shell.py reads them: ``Word`` (a
word and its line) and ``Vars`` (the script's variables, expanded as the shell would:
``$X``, ``${X}``, ``${X:-default}``, ``$((a*b))``). Below shell.py and the modules it hands
them to (branches.py, tune.py), so that none of them imports shell.py for these.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass

# ``$(( ... ))``: at most 200 parts, each a character or one (...) group without
# parentheses inside: ``(.+?)\)\)`` scanned to the end of the text from every ``$((``
# (quadratic: 100,000 nested ``$((`` took minutes)
VAR = re.compile(
    r"\$\(\(((?:[^()\n]|\([^()\n]{0,200}\)){1,200}?)\)\)|\$\{([A-Za-z_]\w*)(\[[@*0-9]\])?(?::?([-=+?])([^}\n]{0,1024}))?\}|\$([A-Za-z_]\w*)|\$\("
)
MAX_DEPTH = 8


@dataclass
class Word:
    text: str
    line: int


_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.floordiv,
    ast.Mod: operator.mod,
}


def _arith(expr: str) -> int | None:
    try:
        node = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        return None

    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            return _OPS[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        raise ValueError

    try:
        return ev(node)
    except (ValueError, ZeroDivisionError):
        return None


class Vars:
    """The script's variables: scalars as text, arrays as words (keeping their lines)."""

    def __init__(self, slurm: dict[str, str]):
        self.scalars: dict[str, str] = {}
        self.arrays: dict[str, list[Word]] = {}
        self.slurm = slurm
        # set by the script to a value that cannot be known (a command substitution,
        # branches that disagree): not "unset", so ``${X:-default}`` is unknown too
        self.unknown: set[str] = set()

    def expand(self, text: str, depth: int = 0) -> str | None:
        """``text`` with variables replaced; None if any part is unknown."""
        if depth > MAX_DEPTH:
            return None
        unknown = False

        def sub(m: re.Match[str]) -> str:
            nonlocal unknown
            if m.group(0) == "$(":
                unknown = True
                return ""
            if m.group(1) is not None:
                inner = self.expand(m.group(1), depth + 1)
                v = (
                    _arith(
                        re.sub(
                            r"\b([A-Za-z_]\w*)\b",
                            lambda k: self.scalars.get(k.group(1), k.group(1)),
                            inner,
                        )
                    )
                    if inner is not None
                    else None
                )
                if v is None:
                    unknown = True
                    return ""
                return str(v)
            name = m.group(2) or m.group(6)
            if m.group(3) and name in self.arrays:
                return " ".join(w.text for w in self.arrays[name])
            val = self.get(name, m.group(4), m.group(5), depth)
            if val is None:
                unknown = True
                return ""
            return val

        out = VAR.sub(sub, text)
        return None if unknown else out

    def get(self, name: str, op: str | None, default: str | None, depth: int) -> str | None:
        if name in self.unknown and name not in self.scalars:
            return None
        if name in self.scalars:
            v = self.scalars[name]
            if v == "" and op in ("-", "="):
                return self.expand(default or "", depth + 1)
            return v
        if name.startswith("SLURM_"):
            return self.slurm.get(name)
        if op in ("-", "=") and default is not None:
            return self.expand(default.strip("\"'"), depth + 1)
        return None
