"""``check_node``: one node judged, live (probed here) or from recorded facts.

The library half of ``spec-check check`` (``validator/cli/node.py`` parses and renders).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from validator import build_info
from validator.api.options import CheckOptions, OptionsError
from validator.api.outcome import Outcome
from validator.api.steps import (
    Built,
    build,
    evaluate_documents,
    finished,
    older_note,
    stale_note,
    unique_subjects,
    with_endpoints,
)
from validator.clock import now_utc
from validator.io.scrape_defaults import DEFAULT_DEADLINE_S, SCRAPE_INTERVAL_S

if TYPE_CHECKING:  # not imported at run time: start-up
    from validator.facts.document import Document


def check_urls(urls: tuple[str, ...]) -> None:
    """Each ``--scrape`` URL is one spec-check may fetch (``validator.io.netfetch``)."""
    if not urls:  # the HTTP client loads only for a named endpoint (start-up)
        return
    from validator.io.netfetch import check_url

    for url in urls:
        bad = check_url(url)
        if bad:
            raise OptionsError(f"--scrape: {bad}")


def probe_document(sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None = None,
                   kernel_log: Path | None = None, dcgm_diag: int | None = None,
                   since: Path | None = None, scrape: tuple[str, ...] = (), scrape_interval: float = SCRAPE_INTERVAL_S,
                   scrape_timeout: float = DEFAULT_DEADLINE_S) -> Document:
    """Probe this node into a facts document; failures become error values inside it.
    ``since``: an earlier facts document of this node (read and checked before probing)."""
    from validator.facts.document import new_document
    from validator.facts.node import probe_node

    earlier = None
    if since is not None:
        from validator.errors import FactsFileError
        from validator.facts.document import load

        earlier = load(since)
        if earlier["subject"]["kind"] != "node":
            raise FactsFileError(f'--since needs node facts; this document is a {earlier["subject"]["kind"]}',
                                 file=str(since))
    facts = probe_node(sysfs=sysfs, procfs=procfs, rootfs=rootfs, query_drivers=nvml,
                       kernel_log=kernel_log, dcgm_level=dcgm_diag, since=earlier,
                       scrape_endpoints=scrape, scrape_interval=scrape_interval, scrape_timeout=scrape_timeout)
    host = facts.get("host.hostname", {}).get("value")
    if not host:
        import socket  # the host source names it; this is the fallback

        host = socket.gethostname()
    return new_document("node", str(host), facts, tool_version=build_info.tool_version(), collected_at=now_utc())


def recorded_endpoints(docs: list[Document]) -> tuple[str, ...]:
    """The endpoints a recording scraped (``probe --scrape``): judged as they were named."""
    out: list[str] = []
    for d in docs:
        fact = d.get("facts", {}).get("telemetry.scrapes")
        for member in (fact or {}).get("items", []) if isinstance(fact, dict) else []:
            if isinstance(member, dict) and isinstance(member.get("id"), str):
                out.append(member["id"])
    return tuple(dict.fromkeys(out))


def _node_files(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """The files ``--facts`` names: each file, and each folder's ``*.json`` (one file per host,
    as `cluster --facts DIR` and `lint --nodes DIR` read it), by name."""
    from validator.errors import FactsFileError

    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            files = sorted(q for q in p.iterdir() if q.suffix == ".json" and q.is_file())
            if not files:
                raise FactsFileError("no *.json node facts in this directory (--facts)", file=str(p))
            out += files
        elif not p.exists():
            raise FactsFileError("no such file or directory (--facts)", file=str(p))
        else:
            out.append(p)
    return tuple(out)


def check_node(opts: CheckOptions, *, built: Built | None = None) -> Outcome:
    """Judge this node (probed) or ``opts.facts`` (recorded, one file per node) against
    every node requirement. ``built``: what ``build(opts.report, ("node",))`` returned, when
    the caller built first (the CLI does, so a bad profile is refused before anything else)."""
    report_opts = opts.report
    if built is None:
        built = build(report_opts, ("node",))  # bad spec, rules, profile or --set fail here, before probing
    facts_files = opts.facts
    if facts_files and (opts.kernel_log or opts.dcgm_diag or opts.since):
        raise OptionsError("--kernel-log, --dcgm-diag and --since gather facts: give them to `spec-check probe` "
                           "(or to check without --facts), not with --facts")
    check_urls(opts.scrape)
    if facts_files and opts.scrape:
        raise OptionsError("--scrape samples live endpoints; with --facts the recorded scrapes are judged")
    if facts_files:
        from validator.errors import FactsFileError
        from validator.facts.document import load

        facts_files = _node_files(facts_files)
        seen: set[str] = set()
        for p in facts_files:
            real = os.path.realpath(p)
            if real in seen:
                raise FactsFileError("given twice with --facts", file=str(p))
            seen.add(real)
        docs = [load(p) for p in facts_files]
        in_folder = {p for p in facts_files if p not in opts.facts}
        kept = [(p, d) for p, d in zip(facts_files, docs, strict=True)
                if not (p in in_folder and d["subject"]["kind"] == "cluster")]  # a folder's cluster.json
        if not kept:
            raise FactsFileError("no node facts in it, only a cluster document (--facts)", file=str(opts.facts[0]))
        facts_files, docs = tuple(p for p, _ in kept), [d for _, d in kept]
        for p, d in zip(facts_files, docs, strict=True):
            if d["subject"]["kind"] != "node":
                raise FactsFileError(f'check evaluates node facts; this document is a {d["subject"]["kind"]} '
                                     f"(use `spec-check {'lint' if d['subject']['kind'] == 'job' else 'cluster'}`)",
                                     file=str(p))
        sources = [str(p) for p in facts_files]
        built = with_endpoints(built, recorded_endpoints(docs), "facts")
    else:
        built = with_endpoints(built, opts.scrape, "--scrape")
        endpoints = tuple(built.ctx.params["scrape_endpoints"].value or ())
        check_urls(endpoints)
        docs = [probe_document(opts.sysfs, opts.procfs, opts.rootfs, opts.nvml, opts.kernel_log, opts.dcgm_diag,
                               opts.since, endpoints, opts.scrape_interval, opts.scrape_timeout)]
        sources = ["probe"]
    older = list(zip(facts_files, docs, strict=True)) if facts_files else []
    docs = unique_subjects(docs, sources)
    report = evaluate_documents("check", built, report_opts, docs, sources)
    # said after every input was accepted: an exit-2 error stays one line
    stale = stale_note(built, zip(docs, sources, strict=True)) if facts_files else None
    report, notes = finished(report, report_opts, [older_note("facts", older), stale])
    return Outcome(report, report_opts.fail_on, notes)
