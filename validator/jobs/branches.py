"""``case`` and ``if`` in launch scripts: which branch runs, or that it cannot be known.

A launcher often picks its settings by a variable: ``case $MODEL in 7b) TP=1;; 70b)
TP=8;; esac``. Reading every branch and keeping the first value would lint a job the
script never runs. So, as the shell does, a condition on values the script itself sets
(``MODEL=70b`` above it, ``${SIZE:-8b}``) selects its branch, and only that branch is read;
the others are skipped. A condition the script cannot decide (a positional argument, an
environment variable it never sets, a file test) reads every branch apart, from the same
starting variables, and afterwards keeps only what they agree on: a variable the branches
set to different values is unknown, and so is a flag that not every flag-writing branch
gives alike (never the first branch's). Where only one branch writes flags (a wrapper such
as ``if [ -n "$SLURM_JOB_ID" ]; then srun ...; fi``), its flags are read: what a reviewer
reads in the script.

Understood: ``case WORD in pat|pat) ... ;; esac`` (glob patterns), ``if``/``elif``/``else``/
``fi`` with ``[ ]``, ``[[ ]]`` or ``test`` comparing with ``=``, ``==``, ``!=`` (globs in
``[[ ]]``), ``-eq``/``-ne``/``-gt``/``-ge``/``-lt``/``-le`` on integers, and
``-z``/``-n``, negated with ``!``; ``[ cond ] && cmd`` and ``[ cond ] || cmd`` guard ``cmd``
alike. Anything else is an undecidable condition.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.jobs.shellvars import Vars, Word

Flags = dict[str, tuple[str, int]]


@dataclass
class _Frame:
    kind: str  # if | case
    value: str | None = None  # the case word, expanded (None: unknown)
    state: str = "inactive"  # of the current branch: active | inactive | unknown
    taken: bool = False  # a branch was surely taken
    unsure: bool = False  # an earlier branch may have been taken
    default: bool = False  # an else / *) branch exists that may run
    expect_pattern: bool = False
    patterns: list[str] = field(default_factory=list)
    outer_off: bool = False  # the whole conditional sits in a skipped branch
    base: tuple[dict[str, str], dict[str, list[Word]], set[str]] | None = None
    outcomes: list[tuple[dict[str, str], dict[str, list[Word]], set[str]]] = field(default_factory=list)
    branch_flags: list[Flags] = field(default_factory=list)
    parent: Flags | None = None
    oneshot: bool = False  # ``[ cond ] && cmd``: guards the next command only
    used: bool = False


_NUMERIC = {
    "-eq": lambda a, b: a == b, "-ne": lambda a, b: a != b, "-gt": lambda a, b: a > b,
    "-ge": lambda a, b: a >= b, "-lt": lambda a, b: a < b, "-le": lambda a, b: a <= b,
}


def _int(text: str) -> int | None:
    t = text.strip()
    return int(t) if t.lstrip("-").isdigit() else None


def _known(text: str | None) -> str | None:
    """An expanded word, or None while it still holds a ``$`` the reader cannot expand
    (``$1``, ``$@``, ``$#``: what the script is called with)."""
    return None if text is None or "$" in text else text


class Flow:
    """Tracks the conditionals around each command of a script (see the module doc)."""

    def __init__(self, v: Vars, flags: Flags):
        self.v = v
        self.root = flags
        self.stack: list[_Frame] = []
        self._target = flags

    def target(self) -> Flags:
        """Where the current command's flags go."""
        return self._target

    def off(self) -> bool:
        return any(f.state == "inactive" or f.outer_off for f in self.stack)

    def guard(self, test: list[Word], *, negate: bool) -> None:
        """``[ cond ] && cmd`` (``||``: unless): the next command runs in a branch of its
        own, decided like an ``if`` (see ``step``)."""
        self._settle()
        cond = False if self.off() else self._condition(test)
        if cond is not None and negate:
            cond = not cond
        if self.stack and self.stack[-1].oneshot and not self.stack[-1].used:
            self.stack[-1].used = True  # [ a ] && [ b ] && cmd: the second test was its command
        self._open(_Frame("if", oneshot=True))
        self._branch(self.stack[-1], cond)

    def _settle(self) -> None:
        """Close the guards whose command has run."""
        while self.stack and self.stack[-1].oneshot and self.stack[-1].used:
            self._end_branch(self.stack[-1])
            self._close()

    def finish(self) -> None:
        """Close what the script left open (a guard on its last command)."""
        while self.stack and self.stack[-1].oneshot:
            self._end_branch(self.stack[-1])
            self._close()

    def step(self, words: list[Word]) -> list[Word] | None:
        """The words of ``words`` to read as a command, after control words are taken
        off; None when the command is in a branch that does not run (or is only
        control)."""
        if words and words[0].text in ("&&", "||"):
            return None
        self._settle()
        if self.stack and self.stack[-1].oneshot:
            self.stack[-1].used = True
        while words:
            t = words[0].text
            top = self.stack[-1] if self.stack else None
            if top is not None and top.kind == "case" and top.expect_pattern:
                if t == "esac":
                    self._close()
                    words = words[1:]
                    continue
                if t.endswith(")"):
                    top.patterns.append(t[:-1].lstrip("("))
                    self._branch(top, self._case_match(top))
                    top.expect_pattern = False
                    words = words[1:]
                    continue
                top.patterns.append(t.lstrip("("))  # a|b) split at the |
                return None
            if t == ";;" and top is not None and top.kind == "case":
                top.expect_pattern, top.patterns = True, []
                self._end_branch(top)
                words = words[1:]
                continue
            if t == "case" and len(words) >= 3:
                value = None if self.off() else _known(self.v.expand(words[1].text))
                self._open(_Frame("case", value=value, expect_pattern=True))
                return None
            if t == "if":
                cond = False if self.off() else self._condition(words[1:])
                self._open(_Frame("if"))
                self._branch(self.stack[-1], cond)
                return None
            if top is not None and top.kind == "if" and t in ("elif", "else"):
                self._end_branch(top)
                if t == "elif":
                    cond = False if top.outer_off else self._condition(words[1:])
                    self._branch(top, cond)
                    return None
                self._branch(top, True)
                words = words[1:]
                continue
            if t in ("fi", "esac") and top is not None:
                self._end_branch(top)
                self._close()
                words = words[1:]
                continue
            if t in ("then", "do", "done", "{", "}"):
                words = words[1:]
                continue
            break
        if not words or self.off():
            return None
        return words

    # -- conditions -----------------------------------------------------------------------
    def _condition(self, words: list[Word]) -> bool | None:
        toks = [w.text for w in words]
        if toks and toks[-1] == "then":
            toks = toks[:-1]
        negate = bool(toks) and toks[0] == "!"
        if negate:
            toks = toks[1:]
        if toks and toks[0] in ("[", "[[", "test"):
            glob = toks[0] == "[["
            toks = [t for t in toks[1:] if t not in ("]", "]]")]
        else:
            return None
        if toks and toks[0] == "!":
            negate, toks = not negate, toks[1:]
        held = self._test(toks, glob)
        return held if held is None or not negate else not held

    def _test(self, toks: list[str], glob: bool) -> bool | None:
        if len(toks) == 2 and toks[0] in ("-z", "-n"):
            val = _known(self.v.expand(toks[1]))
            if val is None:
                return None
            return (val == "") == (toks[0] == "-z")
        if len(toks) == 3 and toks[1] in _NUMERIC:
            left, right = _known(self.v.expand(toks[0])), _known(self.v.expand(toks[2]))
            if left is None or right is None or not (_int(left) is not None and _int(right) is not None):
                return None
            return _NUMERIC[toks[1]](_int(left), _int(right))
        if len(toks) == 3 and toks[1] in ("=", "==", "!="):
            left, right = _known(self.v.expand(toks[0])), _known(self.v.expand(toks[2]))
            if left is None or right is None:
                return None
            same = fnmatch.fnmatchcase(left, right) if glob else left == right
            return same if toks[1] != "!=" else not same
        return None

    def _case_match(self, frame: _Frame) -> bool | None:
        if frame.value is None:
            return None
        pats = []
        for p in frame.patterns:
            e = _known(self.v.expand(p))
            if e is None:
                return None
            pats.append(e)
        return any(fnmatch.fnmatchcase(frame.value, p) for p in pats)

    # -- branches -------------------------------------------------------------------------
    def _open(self, frame: _Frame) -> None:
        frame.outer_off = self.off()
        frame.parent = self._target
        frame.base = self._snapshot()
        self.stack.append(frame)

    def _snapshot(self) -> tuple[dict[str, str], dict[str, list[Word]], set[str]]:
        return dict(self.v.scalars), dict(self.v.arrays), set(self.v.unknown)

    def _branch(self, frame: _Frame, cond: bool | None) -> None:
        if frame.outer_off or frame.taken or cond is False:
            frame.state = "inactive"
        elif cond is True and not frame.unsure:
            frame.state, frame.taken = "active", True
        else:
            frame.state = "unknown"
            frame.unsure = True
            if cond is True or (frame.kind == "case" and "*" in frame.patterns):
                frame.default = True
            assert frame.base is not None
            self.v.scalars, self.v.arrays, self.v.unknown = (
                dict(frame.base[0]), dict(frame.base[1]), set(frame.base[2]))
            frame.branch_flags.append({})
            self._target = frame.branch_flags[-1]
            return
        self._target = frame.parent if frame.parent is not None else self.root

    def _end_branch(self, frame: _Frame) -> None:
        if frame.state == "unknown":
            frame.outcomes.append(self._snapshot())
        frame.state = "inactive"
        self._target = frame.parent if frame.parent is not None else self.root

    def _close(self) -> None:
        frame = self.stack.pop()
        self._target = frame.parent if frame.parent is not None else self.root
        if not frame.outcomes:
            return  # one branch surely ran (in place), or none: nothing to merge
        assert frame.base is not None
        outcomes = list(frame.outcomes)
        if not frame.taken and not frame.default:
            outcomes.append(frame.base)  # no branch may have run at all
        scalars: dict[str, str] = {}
        unknown: set[str] = set().union(*(o[2] for o in outcomes))
        for name in set().union(*(o[0] for o in outcomes)):
            vals = {o[0].get(name) for o in outcomes}
            if len(vals) == 1 and None not in vals:
                scalars[name] = vals.pop()  # type: ignore[assignment]
            else:
                unknown.add(name)
        arrays: dict[str, list[Word]] = {}
        for name in set().union(*(o[1] for o in outcomes)):
            texts = {tuple(w.text for w in o[1].get(name, [])) for o in outcomes}
            if len(texts) == 1 and all(name in o[1] for o in outcomes):
                arrays[name] = outcomes[0][1][name]
        self.v.scalars, self.v.arrays, self.v.unknown = scalars, arrays, unknown - set(scalars)
        writing = [bf for bf in frame.branch_flags if bf]
        first: Flags = {}
        for bf in writing:
            for k, val in bf.items():
                first.setdefault(k, val)
        for k, val in first.items():
            # one branch alone writes flags (a wrapper: ``if [ -n "$SLURM_JOB_ID" ]; then
            # srun ...``): read them; several do: only what they all say alike
            if len(writing) == 1 or all(bf.get(k, ("", 0))[0] == val[0] for bf in writing):
                self._target.setdefault(k, val)
            elif "?" not in k:
                self._target.setdefault(k.split("?")[0] + "?unresolved", val)
