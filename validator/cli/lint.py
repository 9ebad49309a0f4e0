"""``spec-check lint``: check training job configs against the job requirements.

Each PATH is one job: a file (plus the files it names, followed when they exist) or a
directory whose config files are read together. Values no config can know come from
``--set gpu_count=N`` / ``--set step_time=SECONDS``; findings that need them are
skipped, naming the key, until they are given. A file that cannot be read becomes an
``error`` finding at its file and line while the other files are still linted; when no
PATH yields anything readable the run itself fails (exit 2, one line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from validator.cli.common import build, common_options, evaluate_documents, finish, run_options
from validator.errors import SpecCheckError
from validator.jobs.detect import KINDS

UNREADABLE_RULE = "LINT-00.unreadable-config"
UNREADABLE_REQ = "LINT-00"


def _error_findings(docs: list[dict[str, Any]]) -> list[Any]:
    from validator.model import Finding, Location, Status

    out = []
    for d in docs:
        for e in d.get("errors", []):
            out.append(
                Finding(
                    rule=UNREADABLE_RULE,
                    requirement=UNREADABLE_REQ,
                    level="MUST",
                    status=Status.ERROR,
                    subject=d["subject"]["name"],
                    expected="a readable training config",
                    message=e["message"],
                    remediation="Fix the file so that it parses, or leave it out of the lint run.",
                    source=e["file"],
                    location=Location(e["file"], e.get("line")),
                )
            )
    return out


def lint_documents(
    paths: tuple[Path, ...], kind: str | None, params: Any, *, ignore_unknown: bool = False
) -> list[dict[str, Any]]:
    """One job document per PATH; a run where nothing at all is readable is exit 2
    (with ``ignore_unknown``, files of no known format are passed over silently)."""
    from validator.jobs import read_job

    gpu = params.get("gpu_count")
    step = params.get("step_time")
    gpu_count = int(gpu.value) if gpu is not None and gpu.is_set else None
    step_time = float(step.value.base) if step is not None and step.is_set else None
    docs = []
    for p in paths:
        if not p.exists() and not p.is_symlink():
            raise SpecCheckError("no such file or directory", file=str(p))
        docs += read_job(
            [p], kind, gpu_count=gpu_count, step_time_s=step_time, name=str(p),
            strict=not ignore_unknown,
        )
    if ignore_unknown:
        return docs
    if all(not d["facts"]["job.files"]["value"] for d in docs):
        errs = [e for d in docs for e in d["errors"]]
        if errs:
            e = errs[0]
            more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
            raise SpecCheckError(e["message"] + more, file=e["file"], line=e.get("line"))
        raise SpecCheckError(
            "no training config found (use --kind to name a file's format)", file=str(paths[0])
        )
    return docs


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--kind",
    type=click.Choice(KINDS),
    default=None,
    help="Force the format of every file instead of detecting it from the content.",
)
@click.option(
    "--ignore-unknown",
    is_flag=True,
    help="Pass over files of no known format (for pre-commit, which hands over every "
    "changed .json/.yaml/.toml/.sh file) instead of failing on them.",
)
@common_options
def lint(paths: tuple[Path, ...], kind: str | None, ignore_unknown: bool, **kwargs: Any) -> None:
    """Lint training job configs (DeepSpeed, Lightning, HF, Accelerate, torchtitan, NeMo,
    Megatron, Slurm, torchrun, PyTorchJob, env, MaxText, TF Model Garden).

    Each PATH is one job; a directory's config files are read together as one job.
    Findings point at file:line. Pass --set gpu_count=N and --set step_time=SECONDS for
    the checks a config cannot decide alone (batch arithmetic, checkpoint interval).
    """
    from validator.model import RuleDoc

    opts = run_options(kwargs)
    built = build(opts, ("job",))
    docs = lint_documents(paths, kind, built.ctx.params, ignore_unknown=ignore_unknown)
    jobs = [d for d in docs if d["facts"]["job.files"]["value"]]
    clean = [{k: v for k, v in d.items() if k != "errors"} for d in jobs]
    report = evaluate_documents("lint", built, opts, clean, [d["subject"]["name"] for d in jobs])
    errors = _error_findings(docs)
    if errors:
        from dataclasses import replace

        findings = tuple(sorted((*report.findings, *errors), key=lambda f: f.sort_key()))
        doc = RuleDoc(
            UNREADABLE_RULE,
            UNREADABLE_REQ,
            "unreadable-config",
            "MUST",
            "job",
            "A config file of the job cannot be read or parsed",
            "A file that does not parse is not checked; its settings are unknown.",
            "Fix the file so that it parses, or leave it out of the lint run.",
        )
        report = replace(report, findings=findings, rules=(*report.rules, doc))
    finish(report, opts)
