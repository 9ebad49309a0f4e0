"""The examples each verb's ``--help`` ends with (click's epilog), in one table.

Each is a command a user types, with what it does. ``tests/test_help_examples.py`` runs every
one that needs no cluster, Slurm or container, in a folder holding the files they name
(``node01.json`` a ``probe -o``, ``facts/`` one file per host, ``job/`` a job, ``fleet.json``
a ``cluster -o``), and parses the others with the verb's own options.
"""

from __future__ import annotations

# verb -> (command, what it does), two or three each
EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "check": (
        ("spec-check check", "check this node against every node requirement"),
        ("spec-check check --facts node01.json --show passes",
         "judge facts recorded with `spec-check probe -o`, listing what passed"),
        ("spec-check check --facts node01.json --fail-on warn --format json -o node01.result.json",
         "a JSON result, failing on SHOULD warnings too"),
    ),
    "probe": (
        ("spec-check probe -o node01.json", "record this node's facts, to judge later with `check --facts`"),
        ("spec-check probe --sysfs /host/sys --procfs /host/proc --rootfs /host/root --nvml -o /results/node01.json",
         "in a container, the host's trees mounted under /host (docs/deploy.md)"),
    ),
    "health": (
        ("spec-check health", "as Slurm's HealthCheckProgram: drain this node on a MUST failure, resume it after"),
        ("spec-check health --no-drain --format prometheus -o /var/lib/node_exporter/textfile/spec_check.prom",
         "judge only, and leave the verdict for node_exporter's textfile collector"),
    ),
    "lint": (
        ("spec-check lint job/", "lint a job's configs and launcher; findings at file:line"),
        ("spec-check lint job/ --set gpu_count=16 --format sarif -o spec-check.sarif",
         "SARIF for code scanning, with the GPU count the configs cannot tell"),
        ("spec-check lint job/ --nodes facts/", "judge the job against the facts of the nodes it runs on"),
    ),
    "cluster": (
        ("spec-check cluster --hosts 'gpu[01-16]' --measure --format json -o fleet.json",
         "probe 16 hosts over SSH and measure pairwise bandwidth and latency"),
        ("spec-check cluster --facts facts/ --format json -o fleet.json",
         "judge saved facts, one file per host (`probe -o` or `--save-facts`)"),
        ("spec-check cluster --facts facts/ --format json -o kept.json --keep-facts",
         "keep the facts judged beside the result (kept.facts/), for `lint JOB --nodes kept.json`"),
    ),
    "report": (
        ("spec-check report fleet.json --format html -o fleet.html", "a self-contained HTML report of a result"),
        ("spec-check report fleet.json job.json", "a fleet and its job merged: coverage of the whole spec"),
    ),
    "diff": (
        ("spec-check diff last-week.json fleet.json", "new failures and fixed findings; exit 1 on a regression"),
        ("spec-check diff last-week.json fleet.json --format json", "the same, as JSON"),
    ),
    "keygen": (
        ("spec-check keygen provider", "write provider.key (private, mode 0600) and provider.pub"),
        ("spec-check keygen 2026-q4 && spec-check sign fleet.json --key 2026-q4.key -o fleet.signed.json",
         "a pair named for the quarter, then a result signed with it"),
    ),
    "sign": (
        ("spec-check sign fleet.json --key provider.key -o fleet.signed.json", "sign a result with an Ed25519 key"),
        ("spec-check sign job.json --key provider.key -o job.signed.json", "any result: a lint's too"),
    ),
    "verify": (
        ("spec-check verify fleet.signed.json --key provider.pub", "exit 0 when the signature holds"),
        ("spec-check verify job.signed.json --key provider.pub", "the same for a lint's result"),
    ),
    "rules": (
        ("spec-check rules list", "every rule with its requirement, level and scope"),
        ("spec-check rules explain NET-01.fabric-port-slow", "what a rule checks, why, and how to fix it"),
        ("spec-check rules diff 1.0 1.1", "what changed between two bundled rule packs"),
    ),
    "spec": (
        ("spec-check spec show CKPT-02", "one requirement with its parameters and their sources"),
        ("spec-check spec sample-profile > profile.yaml", "a profile with every key explained, to edit"),
    ),
}

# examples that need what a test machine lacks (a fleet over SSH, Slurm, a container's mounts)
NOT_RUN = {
    "spec-check cluster --hosts 'gpu[01-16]' --measure --format json -o fleet.json": "16 hosts over SSH",
    "spec-check health": "a Slurm node",
    "spec-check health --no-drain --format prometheus -o /var/lib/node_exporter/textfile/spec_check.prom":
        "a Slurm node and node_exporter's folder",
    "spec-check probe --sysfs /host/sys --procfs /host/proc --rootfs /host/root --nvml -o /results/node01.json":
        "a container with the host's trees under /host",
}


def epilog(verb: str) -> str | None:
    """The ``Examples:`` section of ``spec-check VERB --help`` (None: the verb has none)."""
    examples = EXAMPLES.get(verb)
    if not examples:
        return None
    lines = ["Examples:", "", "\b"]
    for command, what in examples:
        lines += [f"  {command}", f"      {what}"]
    return "\n".join(lines)
