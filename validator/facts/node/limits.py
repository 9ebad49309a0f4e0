"""The locked-memory limit a training process on this node really gets (MEM-02).

The probe's own limit says little: over SSH it is the login shell's (8 MiB on stock
distributions), while the training process is started by slurmd, a container runtime or
a systemd unit with limits of its own. A healthy node then fails, and a broken one passes.
So the limit is read from what launches training, the first that applies of:

1. a running ``slurmd``: its ``<procfs>/PID/limits`` (job steps inherit slurmd's limits
   where ``PropagateResourceLimitsExcept=MEMLOCK``, the setting Slurm's docs recommend);
2. a running ``dockerd`` with ``default-ulimits.memlock`` in ``/etc/docker/daemon.json``
   (what every container gets unless it sets ``--ulimit``);
3. a running container runtime (``containerd``, ``crio``, ``dockerd``): its limits, which
   its containers inherit;
4. the ``LimitMEMLOCK=`` of the systemd unit of one of these (``slurmd``, ``containerd``,
   ``docker``, ``crio``) where the unit is installed but its process was not seen (the
   drop-ins in ``<unit>.service.d/*.conf`` override the unit, ``/etc`` overrides
   ``/usr/lib`` and ``/lib``);
5. as a labelled last resort, the probe's own ``<procfs>/self/limits``.

The fact's ``source`` names which it read ("slurmd (pid 812): /proc/812/limits"), so the
MEM-02 finding names the process whose limit it judged.
"""

from __future__ import annotations

from pathlib import Path

from validator.facts.document import Fact, error, value
from validator.facts.node.base import Context, ReadError, process_table, read
from validator.lazy import Pattern

RUNTIMES = ("containerd", "crio", "dockerd")
UNITS = ("slurmd", "containerd", "docker", "crio")
_SIZE = Pattern(r"^(\d+)([KMGTPE]?)$")


def parse_memlock(text: str) -> int | str:
    """Soft 'Max locked memory' of a ``limits`` file in bytes, or "unlimited"."""
    for line in text.splitlines():
        if line.startswith("Max locked memory"):
            soft = line[len("Max locked memory"):].split()[0]
            return "unlimited" if soft == "unlimited" else int(soft)
    raise ValueError("no 'Max locked memory' line")


def parse_systemd_limit(text: str) -> int | str:
    """``LimitMEMLOCK=`` as systemd reads it: ``infinity``, bytes with an optional K/M/G/T
    suffix (powers of 1024), or ``soft:hard`` (the soft one counts)."""
    soft = text.strip().split(":")[0].strip()
    if soft == "infinity":
        return "unlimited"
    m = _SIZE.match(soft)
    if m is None:
        raise ValueError(f"LimitMEMLOCK={text.strip()} is not a size")
    return int(m.group(1)) * 1024 ** "_KMGTPE".index(m.group(2) or "_")


def _processes(procfs: Path, names: tuple[str, ...]) -> dict[str, int]:
    """The lowest pid of each named process (``comm``), from the process table."""
    found: dict[str, int] = {}
    table = process_table(procfs)  # shared with the telemetry source's scan
    for pid, name, comm in table or ():
        if name != str(pid):  # "007" in a recorded tree: /proc/7/comm is what this reads
            try:
                comm = read(procfs / str(pid) / "comm")
            except ReadError:
                comm = None
        if comm is None:  # gone, or not ours to read: skip
            continue
        if comm in names and comm not in found:
            found[comm] = pid
    return found


def _from_process(procfs: Path, name: str, pid: int) -> Fact:
    path = procfs / str(pid) / "limits"
    try:
        return value(parse_memlock(read(path)), unit="B",
                     source=f"locked-memory limit (ulimit -l) of {name} (pid {pid}): {path}")
    except ReadError as exc:
        return error(f"{name} (pid {pid}): {exc}", source=str(path))
    except ValueError as exc:
        return error(f"{name} (pid {pid}): {path}: {exc}", source=str(path))


def _docker_default(rootfs: Path) -> Fact | None:
    from validator.io.jsondoc import JSONProblem, parse

    path = rootfs / "etc/docker/daemon.json"
    try:  # the JSON rules of every input: no repeated key, no number beyond any real value
        doc = parse(read(path))
    except ReadError:
        return None
    except JSONProblem as exc:
        return error(f"{path}: not JSON ({exc.problem})", source=str(path))
    memlock = (doc.get("default-ulimits") or {}).get("memlock") if isinstance(doc, dict) else None
    if not isinstance(memlock, dict) or "Soft" not in memlock:
        return None
    soft = memlock["Soft"]
    if not isinstance(soft, int) or isinstance(soft, bool):
        return error(f"{path}: default-ulimits.memlock.Soft is not a number", source=str(path))
    return value("unlimited" if soft < 0 else soft, unit="B",
                 source=f"dockerd default-ulimits (every container without --ulimit): {path}")


def _unit_files(rootfs: Path, unit: str) -> list[Path]:
    """The unit file systemd would load, then its drop-ins in order (later ones win)."""
    main = next((rootfs / d / f"{unit}.service" for d in
                 ("etc/systemd/system", "usr/lib/systemd/system", "lib/systemd/system")
                 if (rootfs / d / f"{unit}.service").is_file()), None)
    if main is None:
        return []
    dropins: dict[str, Path] = {}
    for d in ("lib/systemd/system", "usr/lib/systemd/system", "etc/systemd/system"):
        folder = rootfs / d / f"{unit}.service.d"
        if folder.is_dir():
            for p in folder.glob("*.conf"):
                dropins[p.name] = p  # the same name in /etc masks the packaged one
    return [main, *(dropins[n] for n in sorted(dropins))]


def _from_unit(rootfs: Path, unit: str) -> Fact | None:
    files = _unit_files(rootfs, unit)
    found: tuple[Path, int, str] | None = None  # file, line, value
    for path in files:
        try:
            text = read(path)
        except ReadError:
            continue
        for n, row in enumerate(text.splitlines(), 1):
            key, eq, val = row.strip().partition("=")
            if eq and key.strip() == "LimitMEMLOCK":
                found = (path, n, val)
    if not files:
        return None
    if found is None:  # installed, no LimitMEMLOCK: systemd's default (8 MiB since v253, 64 KiB before)
        return error(f"{unit}.service sets no LimitMEMLOCK, so its processes get systemd's "
                     f"default (64 KiB, or 8 MiB since systemd 253): set LimitMEMLOCK=infinity",
                     source=str(files[0]))
    path, lineno, setting = found
    where = f"{unit}.service LimitMEMLOCK ({unit} not running): {path}:{lineno}"
    try:
        return value(parse_systemd_limit(setting), unit="B", source=where)
    except ValueError as exc:
        return error(str(exc), source=where)


def memlock(ctx: Context) -> Fact:
    """The locked-memory limit of what launches training on this node (see the module)."""
    procs = _processes(ctx.procfs, ("slurmd", *RUNTIMES))
    if "slurmd" in procs:
        return _from_process(ctx.procfs, "slurmd", procs["slurmd"])
    if "dockerd" in procs:
        default = _docker_default(ctx.rootfs)
        if default is not None:
            return default
    for name in RUNTIMES:
        if name in procs:
            return _from_process(ctx.procfs, name, procs[name])
    for unit in UNITS:
        fact = _from_unit(ctx.rootfs, unit)
        if fact is not None:
            return fact
    path = ctx.procfs / "self/limits"
    label = ("spec-check's own limit (last resort: no slurmd, containerd, crio or dockerd running "
             f"and no unit of theirs installed): {path}")
    try:
        return value(parse_memlock(read(path)), unit="B", source=label)
    except ReadError as exc:
        return error(str(exc), source=label)
    except ValueError as exc:
        return error(f"{path}: {exc}", source=label)
