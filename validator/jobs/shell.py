"""Shell launch scripts: Slurm batch scripts, Megatron-LM launchers, torchrun lines, env files.

This is not a shell: it reads what a launcher *declares*. It knows ``#SBATCH`` lines
(also inside ``sbatch <<EOF`` heredocs), ``export`` and assignment lines, bash arrays
(``ARGS=( ... )``, ``ARGS+=( ... )``) and multi-line strings of flags, heredoc JSON
(a DeepSpeed config written with ``cat <<EOF > ds.json``), and simple variable
resolution: ``$X``, ``${X}``, ``${X:-default}`` and ``$((a*b))``. A ``${X:-d}`` whose X
the script never assigns resolves to ``d`` (the script's own default), except Slurm's
runtime variables (``SLURM_*``), which resolve from the ``#SBATCH`` header or stay
unknown. Command substitutions and positional arguments stay unknown; a flag whose
value is unknown is not recorded (never a pass on a guess).

Flags are harvested from every array, string and command of the script with the line
where each is written, regardless of ``if`` branches (a script's flags are what a
reviewer reads); ``echo``/``printf`` lines are skipped so help texts add nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.shellvars import VAR, Vars, Word

_ASSIGN = re.compile(
    r"^(?:export\s+|declare\s+(?:-\w+\s+)*|local\s+|readonly\s+)?([A-Za-z_]\w*)(\+?)=(.*)$", re.S
)
_SBATCH = re.compile(r"^\s*#SBATCH\s+(.*)$")
# ``<<EOF`` expands variables in its body; ``<<'EOF'``, ``<<"EOF"`` and ``<<\\EOF`` do not
_HEREDOC = re.compile(r"<<-?\s*(\\?['\"]?)([A-Za-z_]\w*)")
_SKIP_CMDS = ("echo", "printf", "read", "case")
_LAUNCH_WORD = re.compile(r"(?:^|[\s/])(?:torchrun|deepspeed|accelerate\s+launch|tune\s+run)(?:\s|$)")
_SLURM_RUNTIME = {
    "SLURM_NNODES": "nodes",
    "SLURM_JOB_NUM_NODES": "nodes",
    "SLURM_GPUS_ON_NODE": "gpus",
    "SLURM_GPUS_PER_NODE": "gpus",
}


@dataclass
class Heredoc:
    """A here-document: its first body line, the command line that opens it, the body
    as written, whether the delimiter was quoted (a literal body), and ``at``: how many
    commands of the script come before it, so the body sees the variables as they are
    at that point. ``text`` is the body as the shell hands it over (set by ``parse``);
    ``unknown`` names what could not be expanded (a variable set nowhere before it, a
    command substitution), in which case ``text`` is None."""

    line: int
    cmd: str
    body: str
    quoted: bool
    at: int
    text: str | None = None
    unknown: str | None = None
    unknown_line: int | None = None


@dataclass
class Script:
    """A shell script as logical commands of words, each word with its line."""

    commands: list[list[Word]] = field(default_factory=list)
    heredocs: list[Heredoc] = field(default_factory=list)
    sbatch: list[tuple[int, str]] = field(default_factory=list)
    # #SBATCH lines after the first command: sbatch stops reading options at the first
    # line that is neither blank nor a comment, so these are ignored
    sbatch_ignored: list[tuple[int, str]] = field(default_factory=list)


def split_script(text: str) -> Script:
    """Tokenize into commands; quotes keep their content (with newlines) as one word."""
    s = Script()
    lines = text.split("\n")
    i = 0
    buf: list[Word] = []
    cur: list[str] = []
    cur_line = 0
    depth = 0  # inside NAME=( ... )

    def flush_word() -> None:
        nonlocal cur
        if cur:
            buf.append(Word("".join(cur), cur_line))
            cur = []

    def flush_cmd() -> None:
        nonlocal buf
        flush_word()
        if buf:
            s.commands.append(buf)
            buf = []

    pending_heredocs: list[tuple[str, bool]] = []  # (delimiter, quoted)
    quote: str | None = None
    header = True  # still in the leading block of comments and blank lines
    while i < len(lines):
        raw = lines[i]
        n = i + 1
        m = _SBATCH.match(raw)
        if m and quote is None:
            (s.sbatch if header else s.sbatch_ignored).append((n, m.group(1)))
        elif quote is not None or (raw.strip() and not raw.lstrip().startswith("#")):
            header = False
        j = 0
        while j < len(raw):
            ch = raw[j]
            if quote:
                if ch == quote:
                    quote = None
                elif ch == "\\" and quote == '"' and j + 1 < len(raw):
                    cur.append(raw[j + 1])
                    j += 1
                else:
                    cur.append(ch)
            elif ch == "$" and raw[j + 1 : j + 2] == "(":
                # $(...) / $((...)): one word up to the matching parenthesis on this line
                level, k = 0, j + 1
                while k < len(raw):
                    level += {"(": 1, ")": -1}.get(raw[k], 0)
                    if level == 0:
                        break
                    k += 1
                if not cur:
                    cur_line = n
                cur.append(raw[j : k + 1])
                j = k
            elif ch in "\"'":
                if not cur:
                    cur_line = n
                quote = ch
            elif ch == "#" and not cur:
                break
            elif ch == "\\" and j == len(raw) - 1:
                break  # continuation: the command goes on on the next line
            elif ch.isspace():
                flush_word()
            elif ch in ";&|" and raw[j + 1 : j + 2] == ch and depth == 0:
                # ;; ends a case branch, && and || chain a command to the one before:
                # each a command of its own, for branches.py
                flush_cmd()
                s.commands.append([Word(ch * 2, n)])
                j += 1
            elif ch in ";|&" and depth == 0:
                flush_cmd()
            elif ch == "(" and cur and "".join(cur).endswith("="):
                cur.append("(")
                flush_word()
                depth += 1
            elif ch == ")" and depth > 0:
                flush_word()
                buf.append(Word(")", n))
                depth -= 1
            else:
                if not cur:
                    cur_line = n
                cur.append(ch)
            j += 1
        if quote:
            cur.append("\n")
        elif not raw.rstrip().endswith("\\") and depth == 0:
            h = _HEREDOC.search(raw)
            flush_cmd()
            if h:
                pending_heredocs.append((h.group(2), bool(h.group(1))))
        if pending_heredocs and quote is None:
            tag, quoted = pending_heredocs.pop(0)
            body_start = i + 1
            k = body_start
            while k < len(lines) and lines[k].strip() != tag:
                k += 1
            body = "\n".join(lines[body_start:k])
            s.heredocs.append(Heredoc(body_start + 1, raw, body, quoted, len(s.commands)))
            if not body.lstrip().startswith(("{", "[")):
                inner = split_script(body)
                for cmd in inner.commands:
                    s.commands.append([Word(w.text, w.line + body_start) for w in cmd])
                s.sbatch += [(ln + body_start, t) for ln, t in inner.sbatch]
                s.sbatch_ignored += [(ln + body_start, t) for ln, t in inner.sbatch_ignored]
            i = k + 1
            continue
        i += 1
    flush_cmd()
    return s


def parse(ctx: Ctx) -> tuple[Script, Vars, dict[str, tuple[str, int]]]:
    """Read the script: #SBATCH options, variables, and every --flag with its line."""
    script = split_script(ctx.text)
    sb = _sbatch(script)
    slurm = {}
    if "nodes" in sb and c.as_int(sb["nodes"][0]) is not None:
        slurm["SLURM_NNODES"] = slurm["SLURM_JOB_NUM_NODES"] = sb["nodes"][0]
    v = Vars(slurm)
    from validator.jobs.branches import Flow

    root: dict[str, tuple[str, int]] = {}
    flow = Flow(v, root)
    cmds = script.commands
    for at, cmd in enumerate(cmds):
        _expand_heredocs(script, v, at)
        nxt = cmds[at + 1][0].text if at + 1 < len(cmds) and len(cmds[at + 1]) == 1 else ""
        if cmd[0].text in ("[", "[[", "test") and nxt in ("&&", "||") and at + 2 < len(cmds):
            flow.guard(cmd, negate=nxt == "||")  # [ cond ] && cmd: cmd runs only if cond
            continue
        live = flow.step(cmd)
        if live is None:
            continue
        words = live
        flags = flow.target()
        k = 0
        while k < len(words):
            m = _ASSIGN.match(words[k].text)
            if not m:
                break
            name, plus, value = m.groups()
            if value == "(":
                end = next(
                    (e for e in range(k + 1, len(words)) if words[e].text == ")"), len(words)
                )
                items = words[k + 1 : end]
                expanded: list[Word] = []
                for w in items:
                    am = re.fullmatch(r"\$\{([A-Za-z_]\w*)\[[@*]\]\}", w.text)
                    if am and am.group(1) in v.arrays:
                        expanded += v.arrays[am.group(1)]
                    else:
                        expanded += _words(w)
                v.arrays[name] = (v.arrays.get(name, []) if plus else []) + expanded
                harvest_flags(expanded, v, flags)
                k = end + 1
                continue
            val = v.expand(value)
            if val is not None:
                v.scalars[name] = (v.scalars.get(name, "") + val) if plus else val
                v.unknown.discard(name)
            else:
                v.scalars.pop(name, None)
                v.unknown.add(name)
            if words[0].text.startswith("export") or name.startswith(("NCCL_", "TORCH_")):
                c.env(ctx.model, name, val if val is not None else value, ctx.file, words[k].line)
            if "--" in value or _LAUNCH_WORD.search(value):
                # flags, or a launch line kept in a variable (run_cmd="deepspeed ...")
                harvest_flags(_words(Word(value, words[k].line)), v, flags)
            k += 1
        rest = words[k:]
        if rest and rest[0].text == "export":
            for w in rest[1:]:
                m = _ASSIGN.match(w.text)
                if m:
                    val = v.expand(m.group(3))
                    if val is not None:
                        v.scalars[m.group(1)] = val
                    c.env(
                        ctx.model,
                        m.group(1),
                        val if val is not None else m.group(3),
                        ctx.file,
                        w.line,
                    )
                    if "--" in m.group(3):
                        harvest_flags(_words(Word(m.group(3), w.line)), v, flags)
            continue
        if rest and rest[0].text in ("source", ".") and len(rest) > 1:
            # a sourced env file or script is a file the job names
            target = v.expand(rest[1].text)
            if target is not None:
                flags.setdefault("@source:" + target, (target, rest[1].line))
            continue
        if rest and rest[0].text not in _SKIP_CMDS:
            harvest_flags([x for w in rest for x in _words(w)], v, flags)
    flow.finish()
    _expand_heredocs(script, v, len(script.commands))
    return script, v, root | {f"#SBATCH {k}": val for k, val in sb.items()}


def _expand_heredocs(script: Script, v: Vars, at: int) -> None:
    """Expand the bodies of the here-documents that open after ``at`` commands, with the
    variables as the script has set them by then (a quoted delimiter keeps the body
    literal, as the shell does). ``\\$`` is a literal dollar in an expanding body. A
    variable the script has not set by then, or a command substitution, leaves the
    body unknown and says which, so a config built from it is an error, never a
    guess."""
    for h in script.heredocs:
        if h.at != at or h.text is not None or h.unknown is not None:
            continue
        if h.quoted:
            h.text = h.body
            continue
        out = []
        for n, ln in enumerate(h.body.split("\n")):
            parts = ln.split("\\$")
            done = [v.expand(p) for p in parts]
            if any(d is None for d in done):
                m = VAR.search(next(p for p, d in zip(parts, done, strict=True) if d is None))
                what = m.group(0) if m else "$..."
                what = what + ")" if what == "$(" else what
                h.unknown = f"{what} is not set before the heredoc"
                h.unknown_line = h.line + n
                break
            out.append("$".join(d for d in done if d is not None))
        else:
            h.text = "\n".join(out)


def _words(w: Word) -> list[Word]:
    """Split a (possibly multi-line quoted) word on whitespace, keeping each part's line."""
    out = []
    for ln_off, part in enumerate(w.text.split("\n")):
        for token in part.split():
            if token != "\\":
                out.append(Word(token, w.line + ln_off))
    return out


# srun's own options that take a value as the next word (``--nodes 2``, ``-N 2``)
_SRUN_VALUED = {
    "nodes", "ntasks", "ntasks-per-node", "gpus-per-node", "gpus", "gres", "time", "signal",
    "cpus-per-task", "container-image", "container-mounts", "container-workdir",
    "container-name", "mpi", "partition", "account", "output", "error", "job-name", "export",
    "nodelist", "exclude", "distribution", "cpu-bind", "mem", "mem-per-gpu", "chdir",
}
_SRUN_SHORT = {"N": "nodes", "n": "ntasks", "t": "time", "G": "gpus", "c": "cpus-per-task",
               "p": "partition", "A": "account", "o": "output", "e": "error", "J": "job-name",
               "w": "nodelist", "x": "exclude", "D": "chdir"}


def _srun_options(words: list[Word], i: int, v: Vars, flags: dict[str, tuple[str, int]]) -> int:
    """srun's own options, from after ``srun`` up to the program it runs: recorded as
    ``@srun:<name>`` (a step's ``--nodes``, ``--gpus-per-node``, ``--signal``), never as the
    program's flags (``srun --time=...`` is no training argument). Returns the index of
    the program's first word."""
    while i < len(words):
        t = words[i].text
        if t.startswith("--") and len(t) > 2:
            name, eq, val = t[2:].partition("=")
            if not eq and name in _SRUN_VALUED and i + 1 < len(words):
                i += 1
                val = words[i].text
        elif re.fullmatch(r"-[A-Za-z]\S*", t):
            name = _SRUN_SHORT.get(t[1], t[1])
            val = t[2:]
            if not val and t[1] in _SRUN_SHORT and i + 1 < len(words):
                i += 1
                val = words[i].text
        else:
            return i
        resolved = v.expand(val or "true")
        if resolved is not None:
            flags.setdefault("@srun:" + name, (resolved, words[i].line))
        i += 1
    return i


def harvest_flags(words: list[Word], v: Vars, flags: dict[str, tuple[str, int]]) -> None:
    i = 0
    while i < len(words):
        t = words[i].text
        if t == "srun" or t.endswith("/srun"):
            i = _srun_options(words, i + 1, v, flags)
            continue
        if t == "tune" or t.endswith("/tune"):
            from validator.jobs import tune

            if tune.is_tune_run(words, i):
                i = tune.harvest(words, i, v, flags)
                continue
        if t == "-x" and i + 1 < len(words) and "=" in words[i + 1].text and any(
            w.text.rsplit("/", 1)[-1] in ("mpirun", "mpiexec", "horovodrun") for w in words[:i]
        ):
            # mpirun -x NAME=VALUE: an environment variable every rank gets
            name, _, val = words[i + 1].text.partition("=")
            resolved = v.expand(val)
            flags.setdefault("@env:" + name, (val if resolved is None else resolved, words[i + 1].line))
            i += 2
            continue
        if t.startswith("--") and len(t) > 2:
            name, eq, val = t[2:].partition("=")
            raw_line = words[i].line
            if not eq:
                nxt = words[i + 1].text if i + 1 < len(words) else None
                if nxt is not None and not nxt.startswith("-") and not nxt.endswith(".py"):
                    val = nxt
                    i += 1
                else:
                    val = "true"
            resolved = v.expand(val)
            key = name.replace("_", "-")
            if key not in flags and resolved is not None:
                flags[key] = (resolved, raw_line)
            elif key not in flags:
                flags.setdefault(key + "?unresolved", (val, raw_line))
        elif t.endswith((".json", ".yaml", ".yml", ".toml")) and not t.startswith("-"):
            resolved = v.expand(t)
            if resolved is not None:
                flags.setdefault("@config:" + resolved, (resolved, words[i].line))
        elif re.fullmatch(r"\S*(pretrain_\w+|train)\.py", t):
            # a ``pretrain_*.py`` / ``train.py`` entry point wins over another script named
            # before it (the first of any name, below)
            if "@script?any" in flags or "@script" not in flags:
                flags.pop("@script?any", None)
                flags["@script"] = (t, words[i].line)
        elif re.fullmatch(r"[\w./-]+\.py", t) and "@script" not in flags:
            # the entry point: the first Python script of the line, whatever its name
            flags["@script"] = (t, words[i].line)
            flags["@script?any"] = (t, words[i].line)
        elif t in ("torchrun", "deepspeed", "accelerate", "ft_launcher") or t.endswith(
            ("/torchrun", "/deepspeed", "/ft_launcher")
        ):
            flags.setdefault("@launcher:" + t.rsplit("/", 1)[-1], (t, words[i].line))
        elif t in ("torch.distributed.run", "torch.distributed.launch"):
            flags.setdefault("@launcher:torchrun", (t, words[i].line))
        i += 1


def _sbatch(script: Script) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    short = {"N": "nodes", "t": "time", "n": "ntasks", "G": "gpus"}
    for line, text in script.sbatch:
        text = text.split(" #")[0].strip()
        m = re.match(r"^--([\w-]+)(?:[= ]\s*(\S+))?|^-(\w)\s*(\S+)?", text)
        if not m:
            continue
        name = m.group(1) or short.get(m.group(3) or "", m.group(3) or "")
        val = m.group(2) if m.group(1) else m.group(4)
        out.setdefault(name, ((val or "true").strip("\"'"), line))
    return out


def apply_words(ctx: Ctx, words: list[tuple[str, int]]) -> None:
    """Flags from a plain list of words (a PyTorchJob command), with their lines, applied
    as a launch line's are (``launch.apply``)."""
    from validator.jobs import launch

    flags: dict[str, tuple[str, int]] = {}
    harvest_flags([Word(t, ln) for t, ln in words], Vars({}), flags)
    launch.apply(ctx, flags)


def read(ctx: Ctx) -> None:
    """A launch script: flags and #SBATCH options, exports, heredoc JSON configs."""
    from validator.io.source import ReadError, parse_json
    from validator.jobs import deepspeed, launch

    script, _vars, flags = parse(ctx)
    ctx.model.formats.append("shell")
    for n, text in script.sbatch_ignored:
        ctx.model.add(
            "job.config.ignored_keys",
            f"#SBATCH {text.split(' #')[0].strip()} after the first command "
            "(sbatch reads options only before it)",
            ctx.file,
            n,
            "sbatch: #SBATCH after the first command",
        )
    launch.apply(ctx, flags)
    for h in script.heredocs:
        line = h.line
        if not h.body.lstrip().startswith("{"):
            continue
        if h.text is None:
            ctx.model.error(
                ctx.file, h.unknown_line, f"heredoc JSON: unknown after expansion: {h.unknown}"
            )
            continue
        try:
            tree = parse_json(h.text, ctx.file)
        except ReadError as exc:
            ctx.model.error(ctx.file, (exc.line or 1) + line - 1, f"heredoc JSON: {exc.message}")
            continue
        tree.lines = {k: v + line - 1 for k, v in tree.lines.items()}
        if isinstance(tree.data, dict):
            from validator.jobs.base import Ctx as _Ctx

            deepspeed.read(_Ctx(ctx.path, ctx.file, ctx.text, ctx.model, ctx.follow, tree))


def read_env(ctx: Ctx) -> None:
    """An env file: ``KEY=VALUE`` lines (``export`` allowed, ``#`` comments)."""
    ctx.model.formats.append("env")
    for n, raw in enumerate(ctx.text.splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        m = _ASSIGN.match(s)
        if m:
            c.env(ctx.model, m.group(1), m.group(3).strip().strip("\"'"), ctx.file, n)
