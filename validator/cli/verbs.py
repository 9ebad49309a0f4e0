"""The verbs of ``spec-check``: the only place that lists them (validator/cli/group.py
loads each on first use; ``--help`` shows their lines without importing them)."""

from __future__ import annotations

# verb -> (module, attribute, one-line help shown by --help without importing the module)
VERBS: dict[str, tuple[str, str, str]] = {
    "check": ("validator.cli.node", "check", "Check this node (or recorded --facts) against the spec."),
    "probe": ("validator.cli.node", "probe", "Record this node's facts as JSON."),
    "health": ("validator.cli.health", "health", "Slurm health check: drain a failing node, resume it when it passes."),
    "lint": ("validator.cli.lint", "lint", "Lint training job configs against the spec."),
    "cluster": ("validator.cli.cluster", "cluster", "Check a fleet over SSH, Slurm or locally."),
    "report": ("validator.cli.report", "report", "Render a result in another format."),
    "diff": ("validator.cli.report", "diff", "Compare two results; exit 1 on new failures."),
    "keygen": ("validator.cli.signing", "keygen", "Write an Ed25519 key pair for signing results."),
    "sign": ("validator.cli.signing", "sign", "Sign a result."),
    "verify": ("validator.cli.signing", "verify", "Verify a signed result."),
    "rules": ("validator.cli.catalog", "rules", "List the rules, or explain one."),
    "spec": ("validator.cli.catalog", "spec", "Show the requirement catalogue."),
}
