"""SkyPilot task YAML: ``num_nodes``, ``resources.accelerators``, ``envs`` and the
``run:`` script, which is read by the shell reader at its own lines (its torchrun or
``tune run`` line, its exports), as a launch script would be.

``resources.accelerators: A100:8`` is 8 GPUs per node. Managed jobs recover from
pre-emption and, with ``resources.job_recovery.max_restarts_on_errors``, from failures.
"""

from __future__ import annotations

from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.defaults import fill


def run_script(ctx: Ctx, body: str, key_line: int | None) -> None:
    """Read ``body`` (a YAML block scalar whose key is at ``key_line``) as a shell script
    whose lines are the file's own: a literal block's text starts on the next line."""
    from validator.jobs import format_detection as detect
    from validator.jobs import shell

    if not isinstance(body, str) or not detect.is_job_shell(body):
        return
    text = "\n" * (key_line or 0) + body
    sub = Ctx(ctx.path, ctx.file, text, ctx.model, ctx.follow)
    shell.read(sub)


def read(ctx: Ctx) -> None:
    from validator.jobs import keycheck

    keycheck.check(ctx, "skypilot")
    m, g = ctx.model, ctx.get
    m.formats.append("skypilot")
    n = ctx.int_at("job.resources.nodes", ("num_nodes",), "skypilot: num_nodes")
    if n is not None:
        ctx.set("job.resources.nodes", n, ("num_nodes",), "skypilot: num_nodes")
    else:
        fill(m, "job.resources.nodes", "skypilot.num_nodes", ctx.file)
    acc = g("resources", "accelerators")
    per = _count(acc)
    if per:
        ctx.set("job.resources.gpus_per_node", per, ("resources", "accelerators"),
                f"skypilot: resources.accelerators = {acc}")
    jr = g("resources", "job_recovery")
    if isinstance(jr, dict) and c.as_int(jr.get("max_restarts_on_errors")) is not None:
        ctx.set("job.recovery.max_restarts", c.as_int(jr["max_restarts_on_errors"]),
                ("resources", "job_recovery", "max_restarts_on_errors"),
                "skypilot: resources.job_recovery.max_restarts_on_errors")
    envs = g("envs")
    if isinstance(envs, dict):
        for k, v in envs.items():
            if isinstance(k, str):
                c.env(m, k, v, ctx.file, ctx.line("envs", k))
    run_script(ctx, g("run"), ctx.line("run"))


def _count(acc: object) -> int | None:
    """GPUs per node of ``accelerators``: ``A100:8``, ``{H100: 8}``, or a list of
    candidates (``[A100:8, H100:8]``, any one of which SkyPilot may pick) that agree."""
    if isinstance(acc, str):
        return c.as_int(acc.rsplit(":", 1)[1]) if ":" in acc else 1
    if isinstance(acc, dict) and len(acc) == 1:
        return c.as_int(next(iter(acc.values())))
    if isinstance(acc, (list, dict)) and acc:
        counts = {_count(a) for a in acc} if isinstance(acc, list) else {c.as_int(v) for v in acc.values()}
        return counts.pop() if len(counts) == 1 else None
    return None
