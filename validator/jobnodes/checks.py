"""A job judged against the nodes it runs on (``spec-check lint JOB --nodes FACTS``).

Each check reads one thing the job asks for (a ``job.*`` fact or an exported NCCL
variable, with its file and line) and the node facts it depends on, host by host, and
gives ONE finding per job: ``fail`` (``warn`` for a SHOULD) naming the hosts that break
the job as a Slurm host list, ``error`` naming the hosts whose facts could not be
compared (unknown is never a pass), ``pass`` citing both sides, or ``skip`` when the job
does not ask for the thing. A consistent job gains no failure; each mismatch gains
exactly one failing finding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from validator.jobnodes import ncclenv
from validator.jobnodes.nodes import Node, hostlist
from validator.jobnodes.rules import RuleText, texts
from validator.rules.rulemodel import Level

if TYPE_CHECKING:
    from validator.report.model import Finding, JSONValue, Location, Status

OK, BAD, UNKNOWN = "ok", "bad", "unknown"
ELSEWHERE = "elsewhere"  # this host's mismatch is another finding's (one failure per mismatch)


@dataclass(frozen=True)
class Ask:
    """What the job asks for: the value, where it is written, and how it was read."""

    value: JSONValue
    file: str | None
    line: int | None
    text: str | None
    source: str

    def location(self) -> Location | None:
        from validator.report.model import Location

        return Location(self.file, self.line, self.text) if self.file else None

    def cited(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line else (self.file or "")
        return f"{self.source} = {self.value}" + (f" ({where})" if where else "")


def job_env(doc: dict[str, JSONValue]) -> dict[str, Ask]:
    """The NCCL variables the job exports, each with its file and line (the last one
    written wins, as in a shell script)."""
    out: dict[str, Ask] = {}
    for e in doc.get("env") or ():
        name, _, val = str(e.get("value", "")).partition("=")
        out[name] = Ask(val, e.get("file"), e.get("line"), e.get("text"), name)
    return out


def dynamic(ask: Ask) -> bool:
    """A value the shell computes when the job runs (``$(...)``, a backquote, ``$VAR``):
    like any unresolved value of a job file, it is not judged (skip, saying so)."""
    return isinstance(ask.value, str) and ("$" in ask.value or "`" in ask.value)


def job_fact(doc: dict[str, JSONValue], name: str) -> Ask | None:
    """``job.*`` fact ``name`` as an Ask; None when unset; an Ask whose value is an
    ``_Err`` when the job's files disagree or the value is invalid."""
    f = doc["facts"].get(name)
    if not isinstance(f, dict):
        return None
    loc = f.get("location") or {}
    if "error" in f:
        return Ask(_Err(f["error"]), loc.get("file"), loc.get("line"), loc.get("text"), f.get("source", name))
    if f.get("value") is None:
        return None
    return Ask(f["value"], loc.get("file"), loc.get("line"), loc.get("text"), f.get("source", name))


@dataclass(frozen=True)
class _Err:
    reason: str

    def __str__(self) -> str:
        return f"unreadable ({self.reason})"


Verdict = tuple[str, str]  # (OK | BAD | UNKNOWN, detail)


def _grouped(per_host: dict[str, str]) -> str:
    """``{host: detail}`` as ``node[01-02]: detail; node03: other``."""
    by: dict[str, list[str]] = {}
    for h, d in per_host.items():
        by.setdefault(d, []).append(h)
    return "; ".join(f"{hostlist(hs)}: {d}" for d, hs in sorted(by.items(), key=lambda kv: sorted(kv[1])[0]))


class Judge:
    """Makes the findings of one job against one fleet."""

    def __init__(self, doc: dict[str, JSONValue], nodes: Sequence[Node], rules: Mapping[str, RuleText],
                 declared: tuple[int, str] | None = None):
        self.declared = declared  # nvlink_domain_size given by --set or a profile, and how
        self.doc = doc
        self.subject = doc["subject"]["name"]
        self.nodes = list(nodes)
        self.rules = rules  # the pack's words per rule, by the ID each check below gives
        self.env = job_env(doc)
        self.findings: list[Finding] = []

    # -- building findings ------------------------------------------------------------
    def _finding(self, rule_id: str, status: Status, *, expected: str, message: str, ask: Ask | None,
                 observed: str | None = None, source: str | None = None, value: JSONValue = None) -> None:
        from validator.report.model import Finding

        r = self.rules[rule_id]
        self.findings.append(Finding(
            rule=r.id, requirement=r.requirement, level=r.level,
            status=status, subject=self.subject, expected=expected, message=message,
            remediation=r.remediation, observed=observed, value=value, source=source,
            location=ask.location() if ask else None,
        ))

    def failed(self, rule_id: str) -> Status:
        """A mismatch: fail for a MUST rule, warn for a SHOULD one (the pack's level)."""
        from validator.report.model import Status

        return Status.FAIL if self.rules[rule_id].level == Level.MUST else Status.WARN

    def skip(self, rule_id: str, reason: str, ask: Ask | None = None) -> None:
        from validator.report.model import Status

        self._finding(rule_id, Status.SKIP, expected=self.rules[rule_id].summary, message=reason, ask=ask)

    def per_host(self, rule_id: str, ask: Ask, expected: str, facts: str,
                 judge: Callable[[Node], Verdict], what: str) -> None:
        """Judge every host; one finding: the hosts that break the job (fail, or warn for
        a SHOULD), else the hosts that could not be compared (error), else a pass."""
        from validator.report.model import Status

        verdicts = {n.host: judge(n) for n in self.nodes}
        bad = {h: d for h, (v, d) in verdicts.items() if v == BAD}
        unknown = {h: d for h, (v, d) in verdicts.items() if v == UNKNOWN}
        ok = {h: d for h, (v, d) in verdicts.items() if v in (OK, ELSEWHERE)}
        if verdicts and all(v == ELSEWHERE for v, _ in verdicts.values()):
            self.skip(rule_id, f"{ask.cited()}: {_grouped(ok)}", ask)
            return
        by_host = {n.host: n for n in self.nodes}

        def cite(hosts: Sequence[str]) -> str:
            first = by_host[sorted(hosts)[0]]
            srcs = sorted({(first.fact(f) or {}).get("source") or "" for f in facts.split(",")} - {""})
            return f"{hostlist(hosts)}: {facts}" + (f" ({'; '.join(srcs)})" if srcs else "") + (
                f" [{first.file}]" if len(hosts) == 1 else "")

        tail = ""
        if unknown:
            tail = f"; not compared on {_grouped(unknown)}"
        if bad:
            status = self.failed(rule_id)
            fine = f"; {hostlist(ok)} fit" if ok else ""
            self._finding(rule_id, status, expected=expected, ask=ask,
                          message=f"{ask.cited()}: {what} on {hostlist(bad)} ({_grouped(bad)}){fine}{tail}",
                          observed=_grouped(bad), source=cite(list(bad)), value=sorted(bad))
        elif unknown:
            self._finding(rule_id, Status.ERROR, expected=expected, ask=ask,
                          message=f"{ask.cited()}: could not be compared on {_grouped(unknown)}",
                          observed=None, source=cite(list(unknown)), value=sorted(unknown))
        else:
            self._finding(rule_id, Status.PASS, expected=expected, ask=ask,
                          message=f"{ask.cited()}: fits {hostlist(ok)} ({_grouped(ok)})",
                          observed=_grouped(ok), source=cite(list(ok)))

    # -- the checks -------------------------------------------------------------------
    def run(self) -> list[Finding]:
        self.gpus_per_node()
        self.node_count()
        self.ib_hca()
        self.socket_ifname()
        self.gid_index()
        self.expects_ib()
        self.tensor_parallel()
        self.model_parallel()
        return self.findings

    def model_parallel(self) -> None:
        from validator.report.model import Status

        rid = "TOPO-03.job-model-parallel-exceeds-fleet"
        ask = job_fact(self.doc, "job.parallel.model_size")
        if ask is None:
            self.skip(rid, "the job sets no tensor, pipeline or context parallel size")
            return
        if isinstance(ask.value, _Err) or not isinstance(ask.value, int) or ask.value < 1:
            self._finding(rid, Status.ERROR, expected=self.rules[rid].summary, ask=ask,
                          message=f"the model-parallel size could not be read: {ask.value}")
            return
        size = ask.value
        counts: dict[str, int] = {}
        unknown: dict[str, str] = {}
        for n in self.nodes:
            why = n.why_unknown("gpu.count")
            v = None if why else n.facts["gpu.count"].get("value")
            if isinstance(v, int) and not isinstance(v, bool):
                counts[n.host] = v
            else:
                unknown[n.host] = why or f"gpu.count is {v!r}"
        total = sum(counts.values())
        hosts = hostlist(counts)
        src = f"{hostlist(n.host for n in self.nodes)}: gpu.count (sum over the nodes given)"
        expected = f"at most the fleet's GPUs ({size} needed by one replica)"
        if size > total and not unknown:
            self._finding(rid, self.failed(rid),
                          expected=expected, ask=ask, observed=f"{total} GPUs", value=total, source=src,
                          message=f"{ask.cited()}: one replica needs {size} GPUs; the nodes given have {total} "
                                  f"({_grouped({h: f'{c} GPUs' for h, c in counts.items()})})")
        elif size > total:
            self._finding(rid, Status.ERROR, expected=expected, ask=ask, source=src, value=sorted(unknown),
                          message=f"{ask.cited()}: "
                                  + (f"{hosts} have {total} GPUs; " if counts
                                     else "no node's GPU count could be read; ")
                                  + f"not compared on {_grouped(unknown)}")
        else:
            self._finding(rid, Status.PASS, expected=expected, ask=ask, observed=f"{total} GPUs", value=total,
                          source=src, message=f"{ask.cited()}: one replica of {size} GPUs fits in the {total} "
                                              f"GPUs of {hosts}")

    def _asked_int(self, rule_id: str, name: str, what: str) -> Ask | None:
        """The job's integer ``name``; a skip (unset) or an error finding (unreadable) else."""
        from validator.report.model import Status

        ask = job_fact(self.doc, name)
        if ask is None:
            self.skip(rule_id, f"the job does not say its {what} ({name} is not set)")
            return None
        if isinstance(ask.value, _Err) or not isinstance(ask.value, int) or isinstance(ask.value, bool):
            self._finding(rule_id, Status.ERROR, expected=self.rules[rule_id].summary, ask=ask,
                          message=f"the job's {what} could not be read: {ask.value}")
            return None
        return ask

    def gpus_per_node(self) -> None:
        rid = "PLAT-01.job-gpus-per-node-exceed-node"
        ask = self._asked_int(rid, "job.resources.gpus_per_node", "GPUs (processes) per node")
        if ask is None:
            return
        want = ask.value

        def judge(n: Node) -> Verdict:
            why = n.why_unknown("gpu.count")
            if why:
                return UNKNOWN, why
            have = n.facts["gpu.count"].get("value")
            if not isinstance(have, int):
                return UNKNOWN, f"gpu.count is {have!r}"
            return (OK if want <= have else BAD), f"{have} GPU{'s' if have != 1 else ''}"

        self.per_host(rid, ask, f"at most each node's GPU count ({want} asked)", "gpu.count", judge,
                      f"{want} GPU processes per node, more than the node has")

    def node_count(self) -> None:
        from validator.report.model import Status

        rid = "PLAT-02.job-nodes-exceed-fleet"
        ask = self._asked_int(rid, "job.resources.nodes", "node count")
        if ask is None:
            return
        have = len(self.nodes)
        hosts = hostlist(n.host for n in self.nodes)
        src = f"--nodes: {have} node{'s' if have != 1 else ''} ({hosts})"
        if ask.value > have:
            self._finding(rid, self.failed(rid), expected=f"at most the {have} nodes given", ask=ask,
                          message=f"{ask.cited()}: the fleet given has {have} ({hosts})",
                          observed=f"{ask.value} nodes asked", source=src, value=ask.value)
        else:
            self._finding(rid, Status.PASS, expected=f"at most the {have} nodes given", ask=ask,
                          message=f"{ask.cited()}: the fleet given has {have} ({hosts})",
                          observed=f"{ask.value} nodes asked", source=src, value=ask.value)

    @staticmethod
    def _ports(n: Node) -> tuple[list[tuple[str, int, str, str]], str | None]:
        """(device, port, state, link layer) of each RDMA port; or why they are unknown."""
        why = n.why_unknown("rdma.ports")
        if why:
            return [], why
        out = []
        for m in n.facts["rdma.ports"].get("items") or []:
            f = m.get("fields", {})
            dev = (f.get("device") or {}).get("value") or m["id"].split(":")[0]
            port = (f.get("port") or {}).get("value")
            if not isinstance(port, int):
                tail = m["id"].rsplit(":", 1)[-1]
                port = int(tail) if tail.isdigit() else -1
            st = f.get("state") or {}
            if "error" in st:
                return [], f"rdma.ports {m['id']} state could not be read on {n.host}: {st['error']}"
            ll = f.get("link_layer") or {}
            out.append((str(dev), port, str(st.get("value", "")).upper(), str(ll.get("value", "") or "")))
        return out, None

    def ib_hca(self) -> None:
        rid = "NET-02.job-ib-hca-not-on-nodes"
        ask = self.env.get("NCCL_IB_HCA")
        if ask is None:
            self.skip(rid, "the job does not set NCCL_IB_HCA (NCCL uses every ACTIVE port)")
            return
        if dynamic(ask):
            self.skip(rid, f"{ask.cited()}: computed when the job runs, not compared", ask)
            return
        sel = ncclenv.parse(ask.value)
        expects_ib = ("NET-02.job-expects-ib-no-active-port"
                      if ncclenv.ib_expected({k: a.value for k, a in self.env.items()}) else None)

        def judge(n: Node) -> Verdict:
            ports, why = self._ports(n)
            if why:
                return UNKNOWN, why
            usable = [(d, p) for d, p, st, ll in ports
                      if st == "ACTIVE" and ll.lower() in ("infiniband", "ethernet", "")]
            kept = [f"{d}:{p}" for d, p in usable if sel.matches(d, p)]
            if not usable and expects_ib:
                # the fabric itself is missing: NET-02.job-expects-ib-no-active-port says so
                return ELSEWHERE, f"no ACTIVE RDMA port at all (see {expects_ib})"
            if not kept:
                have = ", ".join(f"{d}:{p} {st or '?'}" for d, p, st, _ in ports) or "no RDMA port"
                return BAD, f"matches no ACTIVE port (has {have})"
            if not sel.exclude:
                missing = [e for e in sel.entries
                           if not any(ncclenv.Selector("", False, sel.exact, (e,)).matches(d, p)
                                      for d, p in usable)]
                if missing:
                    names = ", ".join(e.prefix if e.port == -1 else f"{e.prefix}:{e.port}" for e in missing)
                    verb = "matches" if len(missing) == 1 else "match"
                    return BAD, f"{names} {verb} no ACTIVE port (uses {', '.join(kept)})"
            return OK, f"uses {', '.join(kept)}"

        self.per_host(rid, ask, f"NCCL_IB_HCA ({sel.describe()}) matching ACTIVE ports of every node "
                      f"({ncclenv.IB_SOURCE})", "rdma.ports", judge,
                      "names HCAs or ports the node does not have ACTIVE")

    def socket_ifname(self) -> None:
        rid = "NET-02.job-socket-ifname-not-on-nodes"
        ask = self.env.get("NCCL_SOCKET_IFNAME")
        if ask is None:
            self.skip(rid, "the job does not set NCCL_SOCKET_IFNAME (NCCL picks an interface itself)")
            return
        if dynamic(ask):
            self.skip(rid, f"{ask.cited()}: computed when the job runs, not compared", ask)
            return
        sel = ncclenv.parse(ask.value)

        def judge(n: Node) -> Verdict:
            why = n.why_unknown("net.interfaces")
            if why:
                return UNKNOWN, why
            ifs = n.facts["net.interfaces"].get("items") or []
            up = []
            for m in ifs:
                st = (m.get("fields", {}).get("operstate") or {}).get("value")
                if st in ("up", "unknown"):  # "unknown": loopback and some virtual devices
                    up.append(m["id"])
            kept = [i for i in up if sel.matches(i)]
            if not kept:
                return BAD, f"matches no up interface (up: {', '.join(up) or 'none'})"
            return OK, f"uses {', '.join(kept)}"

        self.per_host(rid, ask, f"NCCL_SOCKET_IFNAME ({sel.describe()}) matching an up interface of every node "
                      f"({ncclenv.IF_SOURCE})", "net.interfaces", judge, "matches no up interface")

    def gid_index(self) -> None:

        rid = "NET-02.job-ib-gid-index-unusable"
        ask = self.env.get("NCCL_IB_GID_INDEX")
        if ask is None:
            self.skip(rid, "the job does not set NCCL_IB_GID_INDEX (NCCL picks the RoCE v2 GID)")
            return
        if dynamic(ask):
            self.skip(rid, f"{ask.cited()}: computed when the job runs, not compared", ask)
            return
        idx = ncclenv.gid_index(ask.value)
        if idx is None:
            self._finding(rid, self.failed(rid), expected="an integer GID index (-1: automatic)", ask=ask,
                          message=f"{ask.cited()}: not an integer", observed=repr(ask.value),
                          source=ncclenv.GID_SOURCE)
            return
        if idx < 0:
            self.skip(rid, f"{ask.cited()}: automatic GID selection, NCCL's default ({ncclenv.GID_SOURCE})", ask)
            return
        hca = self.env.get("NCCL_IB_HCA")
        sel = ncclenv.parse(hca.value) if hca is not None and not dynamic(hca) else None

        def judge(n: Node) -> Verdict:
            ports, why = self._ports(n)
            if why:
                return UNKNOWN, why
            active = [(d, p, ll) for d, p, st, ll in ports if st == "ACTIVE" and (sel is None or sel.matches(d, p))]
            roce = [f"{d}:{p}" for d, p, ll in active if ll.lower() == "ethernet"]
            if any(not ll for _, _, ll in active):
                return UNKNOWN, "a port's link layer is not in the facts"
            if roce:
                return UNKNOWN, (f"RoCE ports {', '.join(roce)}: their GID tables are not in the node facts, "
                                 f"so index {idx} cannot be checked")
            return OK, ("InfiniBand ports only: NCCL ignores NCCL_IB_GID_INDEX there" if active
                        else "no ACTIVE RDMA port: the variable is unused")

        self.per_host(rid, ask, f"a GID index every RoCE port has ({ncclenv.GID_SOURCE})", "rdma.ports",
                      judge, "cannot be used")

    def expects_ib(self) -> None:
        rid = "NET-02.job-expects-ib-no-active-port"
        env = {k: a.value for k, a in self.env.items()}
        which = ncclenv.ib_expected(env)
        if which is None:
            self.skip(rid, "the job does not ask for the IB transport (NCCL_NET=IB or NCCL_IB_DISABLE=0)")
            return
        var, consequence = which
        ask = self.env[var]

        def judge(n: Node) -> Verdict:
            ports, why = self._ports(n)
            if why:
                return UNKNOWN, why
            active = [f"{d}:{p}" for d, p, st, _ in ports if st == "ACTIVE"]
            if active:
                return OK, f"ACTIVE {', '.join(active)}"
            return BAD, ("no RDMA port" if not ports else
                         "no ACTIVE port (" + ", ".join(f"{d}:{p} {st or '?'}" for d, p, st, _ in ports) + ")")

        self.per_host(rid, ask, "an ACTIVE RDMA port on every node", "rdma.ports", judge,
                      f"no ACTIVE RDMA port: {consequence}")

    def tensor_parallel(self) -> None:
        rid = "TOPO-03.job-tensor-parallel-exceeds-node-nvlink"
        ask = job_fact(self.doc, "job.parallel.tp")
        if ask is None:
            self.skip(rid, "the job does not set a tensor-parallel size")
            return
        if isinstance(ask.value, _Err) or not isinstance(ask.value, int) or ask.value < 1:
            from validator.report.model import Status

            self._finding(rid, Status.ERROR, expected=self.rules[rid].summary, ask=ask,
                          message=f"the tensor-parallel size could not be read: {ask.value}")
            return
        tp = ask.value
        if tp == 1:
            self.skip(rid, f"{ask.cited()}: no tensor parallelism", ask)
            return

        def judge(n: Node) -> Verdict:
            dom, how, why = nvlink_domain(n, self.declared)
            if why:
                return UNKNOWN, why
            if tp <= dom and dom % tp == 0:
                return OK, f"NVLink domain of {dom} GPUs ({how})"
            if tp > dom:
                return BAD, f"NVLink domain of {dom} GPU{'s' if dom != 1 else ''} ({how})"
            return BAD, f"NVLink domain of {dom} GPUs ({how}): groups of {tp} straddle two domains"

        self.per_host(rid, ask, f"tensor-parallel groups of {tp} inside one NVLink domain",
                      "gpu.count,gpu.devices", judge, f"tensor-parallel groups of {tp} leave the NVLink domain")


def nvlink_domain(n: Node, declared: tuple[int, str] | None = None) -> tuple[int, str, str | None]:
    """(GPUs in one NVLink domain on this node, how that was found, why unknown).

    A node's domain is its GPUs when every GPU has NVLink links and none is inactive
    (NVSwitch boards connect all of them); a GPU without NVLink is a domain of 1. A
    multi-node NVLink domain (NVL72) is not in the node facts (they hold the fabric's
    state, not its clique id): it is taken only where the run declares it
    (``declared``: ``--set nvlink_domain_size=72`` or a profile) AND every GPU of the node
    has its NVLinks on an NVSwitch fabric whose state is ``completed``; the finding says
    both. Otherwise the domain is never larger than one node's GPUs."""
    why = n.why_unknown("gpu.count") or n.why_unknown("gpu.devices")
    if why:
        return 0, "", why
    count = n.facts["gpu.count"].get("value")
    if not isinstance(count, int) or count < 1:
        return 0, "", f"gpu.count is {count!r}"
    devs = n.facts["gpu.devices"].get("items") or []
    if not devs:
        return 0, "", "gpu.devices has no GPU"
    for d in devs:
        f = d.get("fields", {})
        links = f.get("nvlink_count") or {}
        if "error" in links:
            if count == 1:
                return 1, "one GPU", None
            return 0, "", f"{d['id']} nvlink_count could not be read: {links['error']}"
        if not isinstance(links.get("value"), int) or links["value"] == 0:
            return 1, f"{d['id']} has no NVLink", None
        inactive = (f.get("nvlink_inactive") or {}).get("value")
        if inactive:
            return 1, f"{d['id']} has inactive NVLinks {inactive}", None
    how = f"{count} GPUs, all NVLinked (nvml NVLink link count)"
    if declared is not None and declared[0] > count:
        fabric = all((d.get("fields", {}).get("nvlink_remote_switch") or {}).get("value") is True
                     and (d.get("fields", {}).get("fabric_state") or {}).get("value") == "completed"
                     for d in devs)
        if fabric:
            return declared[0], (f"{declared[1]} nvlink_domain_size={declared[0]}, and every GPU's NVLinks "
                                 "lead to an NVSwitch fabric in state completed"), None
        how += (f"; {declared[1]} nvlink_domain_size={declared[0]} is not taken: the node's GPUs show no "
                "completed NVSwitch fabric")
    return count, how, None


def judge_job(doc: dict[str, JSONValue], nodes: Sequence[Node], levels: dict[str, Level],
              declared: tuple[int, str] | None = None) -> list[Finding]:
    """Every finding of one job document against ``nodes``, under the bundled pack's rules
    (``levels``: requirement -> level). A run judges rule by rule in the engine
    (``validator.jobnodes.pairs``)."""
    return Judge(doc, nodes, texts(levels), declared).run()
