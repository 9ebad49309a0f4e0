"""``spec-check lint``: check training job configs against the job requirements.

A file PATH is one job: the file plus the files it names (followed when they exist). A
directory PATH holds as many jobs as it has entry points (``validator.jobs.grouping``:
files that do not name each other are separate jobs), each with its own verdict, listed
in the result's ``extra.jobs``; the run is conformant only when every job is. ``--job
PATH`` reads a folder as one job whatever it holds. Values no config can know come from
``--set gpu_count=N`` / ``--set step_time=SECONDS``; findings that need them are
skipped, naming the key, until they are given. A file that cannot be read becomes an
``error`` finding at its file and line while the other files are still linted; when no
PATH yields anything readable the run itself fails (exit 2, one line). The options are
parsed here; ``validator.api.lint_jobs`` reads, judges and returns the outcome.

``--jobs-of-files`` is for pre-commit, which hands over the changed files one by one:
each file stands for the job it belongs to among the config files directly beside it
(the job whose entry point names it, or its own), and each job is linted once. Linting
a ``ds_config.json`` alone would fail the
rules its launcher satisfies (MON-01, REC-02), and a job's files pass or fail together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from validator.api.lint import lint_documents as lint_documents  # re-exported: tests
from validator.api.lint import lint_jobs
from validator.api.options import LintOptions
from validator.cli.common import LiveChoice, call, common_options, finish_outcome, run_options
from validator.jobs.format_detection import KINDS


@click.command()
# readable=False: an unreadable file is the reader's LINT-00 error finding (the other
# PATHs are still linted), not click's usage error that stops the whole run
@click.argument(
    "paths", nargs=-1, required=False, type=click.Path(path_type=Path, readable=False)
)
@click.option(
    "--job",
    "whole",
    multiple=True,
    type=click.Path(path_type=Path, readable=False),
    help="Read this folder (or file) as ONE job, all its config files together, instead of "
    "one job per entry point (repeatable). For a job whose files are tied together by "
    "something spec-check does not follow, such as a variable naming the config.",
)
@click.option(
    "--kind",
    type=LiveChoice(KINDS),
    default=None,
    help="Force the format of every file instead of detecting it from the content.",
)
@click.option(
    "--ignore-unknown",
    is_flag=True,
    help="Pass over files of no known format (for pre-commit, which hands over every "
    "changed .json/.yaml/.toml/.sh file) instead of failing on them; a file that does not "
    "parse is passed over too unless it is recognizably a job config.",
)
@click.option(
    "--jobs-of-files",
    is_flag=True,
    help="Lint the job each file belongs to: the job, among the config files in the "
    "file's folder (not its subfolders), whose entry point names the file or is the "
    "file; each job once. For pre-commit, which names the changed files rather than "
    "the jobs.",
)
@click.option(
    "--recovery-log",
    "recovery_logs",
    multiple=True,
    type=click.Path(path_type=Path, readable=False),
    help="A training log with a failure and the restart after it (repeatable): REC-02 "
    "measures each failure's time to the first training step after it against "
    "recovery_bound.",
)
# --- lint --nodes / --run (validator.jobnodes): the job judged against its nodes -------
@click.option(
    "--nodes",
    "node_facts",
    multiple=True,
    type=click.Path(path_type=Path, readable=False),
    help="Node facts the job runs on (repeatable): a `probe -o` file, a folder of them, or a "
    "`cluster --format json` result. The job's GPUs per node, node count, NCCL_IB_HCA, "
    "NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX, IB pinning and tensor-parallel size are judged "
    "host by host (docs/job-nodes.md).",
)
@click.option(
    "--run",
    "runs",
    multiple=True,
    type=click.Path(path_type=Path, readable=False),
    help="A folder of one run's outputs, finished or still being written (repeatable): "
    "TensorBoard event files, metrics.csv, trainer_state.json, JSON-lines metrics, an "
    "MLflow file store, launcher logs. MON-01, MON-02 and REC-02 are measured from what the "
    "run emitted; with no PATH the run alone is judged. NCCL_DEBUG=INFO lines say which network NCCL "
    "really used (NET-02, PLAT-01).",
)
# --- end lint --nodes / --run ----------------------------------------------------------
@click.option(
    "--fix",
    is_flag=True,
    help="Apply the edits the findings carry to the job's files, in place (comments, key order "
    "and indentation kept; each file written atomically), then lint again and report what is "
    "left. A file changed since it was read, a read-only file or a symlink out of the job's "
    "folder is refused (exit 2, nothing written); an edit that needs a value the run lacks is "
    "listed as not applied, with what to pass.",
)
@click.option(
    "--diff",
    is_flag=True,
    help="Print the edits --fix would make as a unified diff and write nothing (exit 1 when "
    "there is any edit, 0 when none).",
)
@common_options
def lint(
    paths: tuple[Path, ...],
    kind: str | None,
    ignore_unknown: bool,
    jobs_of_files: bool,
    recovery_logs: tuple[Path, ...],
    whole: tuple[Path, ...],
    runs: tuple[Path, ...],
    node_facts: tuple[Path, ...] = (),
    fix: bool = False,
    diff: bool = False,
    **kwargs: Any,  # Any: the common options as click parsed them (run_options takes them)
) -> None:
    """Lint training job configs (DeepSpeed, Lightning, HF, Accelerate, torchtitan, NeMo,
    Megatron, Slurm, torchrun, env, MaxText, TF Model Garden, torchtune, axolotl, levanter,
    litgpt, llm-foundry, OLMo, SkyPilot, Hydra, Kubernetes training manifests). A file no
    format explains is refused (exit 2), naming the closest formats.

    A file PATH is one job (with the files it names); a directory holds one job per
    entry point (a launcher, manifest or top-level config, with the files it names),
    each with its own verdict. --job PATH reads a folder as one job. Findings point at
    file:line. Pass --set gpu_count=N and --set step_time=SECONDS for
    the checks a config cannot decide alone (batch arithmetic, checkpoint interval).
    """
    opts = run_options(kwargs)
    lint_opts = LintOptions(
        report=opts.report,
        paths=tuple(paths),
        kind=kind,
        ignore_unknown=ignore_unknown,
        jobs_of_files=jobs_of_files,
        recovery_logs=tuple(recovery_logs),
        whole=tuple(whole),
        runs=tuple(runs),
        nodes=tuple(node_facts),
    )
    outcome = call(lint_jobs, lint_opts)
    if fix or diff:
        _fix(outcome, diff=diff)
        outcome = call(lint_jobs, lint_opts)  # what is left after the edits
    finish_outcome(outcome, opts)


def _fix(outcome: Any, *, diff: bool) -> None:
    """``--diff``: the edits as a unified diff on stdout, then exit (1: there are edits).
    ``--fix``: write them; the caller lints again. Bad input: one line each, exit 2."""
    import sys

    from validator.api.fix import plan_fixes, unified_diff, write_fixes
    from validator.cli.finish import say

    plan = plan_fixes(outcome)
    if plan.problems:
        for line in plan.problems:
            say(f"spec-check: error: {line}")
        sys.exit(2)
    for line in plan.not_applied:
        say(f"spec-check: {line}")
    if diff:
        sys.stdout.write(unified_diff(plan))
        sys.stdout.flush()
        sys.exit(1 if plan.edits else 0)
    problems = write_fixes(plan, outcome.roots)
    if problems:
        for line in problems:
            say(f"spec-check: error: {line}")
        sys.exit(2)
    for e in plan.edits:
        say(f"spec-check: fixed {e.file}: {'; '.join(e.applied)}")
