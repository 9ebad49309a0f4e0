"""Build the cluster facts document from node documents, probe failures and measurements.

The cluster subject's facts (catalogue: spec/facts/cluster.yaml):

* ``cluster.probes``: one item per host *as addressed*, ``status`` "ok" or an error value
  with the reason the probe failed. A host that could not be probed is never dropped.
* ``cluster.hosts``: one item per probed host, with the fields PLAT-02 compares
  (gpu_model, driver_version, cuda_version, nic_firmware, gpu_vbios). A host without
  GPUs has "none" in the GPU fields (a value, so a mixed fleet fails homogeneity); a
  field the node could not read stays an error value (so the check says error, not pass).
* ``cluster.pairs``: one item per measured pair ``a->b`` with throughput (Gb/s), latency
  (ms), tool and direction; ``cluster.collectives``: nccl-tests bus bandwidth.
* counts: ``cluster.host_count``, ``cluster.probed_count``, ``cluster.gpu_host_count``,
  and ``cluster.measured`` (whether pairs were measured, for the rules' ``when``).

Node documents are re-keyed by address (``subject.name``), the reported hostname kept in
``subject.hostname``: many hosts can share one hostname.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from validator.facts.document import Document, MadeItems, error, item, items, new_document, value

if TYPE_CHECKING:
    from validator.report.model import JSONValue

NONE = "none"
RUN = "run"  # the value of cluster.*_status when that measurement was taken


def _scalar(facts: Mapping[str, JSONValue], name: str) -> dict[str, JSONValue] | None:
    f = facts.get(name)
    if not isinstance(f, dict):
        return None
    if "error" in f:
        return error(f["error"], source=f.get("source") or name)
    if "value" in f:
        v = f["value"]
        return value(", ".join(map(str, v)) if isinstance(v, list) else v, source=name)
    return None


def _has_gpus(facts: Mapping[str, JSONValue]) -> bool | None:
    """True/False, or None when the node could not tell."""
    vendor = facts.get("gpu.vendor", {})
    if isinstance(vendor.get("value"), str):
        return vendor["value"].lower() != NONE
    count = facts.get("gpu.count", {})
    if isinstance(count.get("value"), int):
        return count["value"] > 0
    pci = facts.get("accel.pci_count", {})
    if isinstance(pci.get("value"), int):
        return pci["value"] > 0
    return None


def _distinct_field(
    facts: Mapping[str, JSONValue], coll: str, fld: str, *, empty: str = NONE
) -> dict[str, JSONValue]:
    """The distinct values of one field over a node collection, as one sorted string."""
    f = facts.get(coll)
    if not isinstance(f, dict):
        return error(f"{coll} was not gathered by the node probe", source=coll)
    if "error" in f:
        return error(f["error"], source=f.get("source") or coll)
    members = f.get("items") or []
    if not members:
        return value(empty, source=coll)
    vals = set()
    for m in members:
        v = m["fields"].get(fld)
        if v is None:
            return error(f"{coll}.{fld} is not reported by the node probe", source=coll)
        if "error" in v:
            return error(f"{m['id']}: {v['error']}", source=coll)
        vals.add(str(v.get("value")))
    return value(", ".join(sorted(vals)), source=f"{coll}.{fld}")


def host_fields(doc: Document) -> dict[str, JSONValue]:
    """The PLAT-02 fields of one probed host."""
    facts = doc["facts"]
    gpus = _has_gpus(facts)
    out: dict[str, JSONValue] = {
        "hostname": value(doc["subject"].get("hostname") or doc["subject"]["name"])
    }
    if gpus is False:
        for name in ("gpu_model", "driver_version", "cuda_version", "gpu_vbios"):
            out[name] = value(NONE)
        out["gpu_count"] = value(0)
    else:
        out["gpu_model"] = _scalar(facts, "gpu.models") or error("gpu.models was not gathered")
        out["gpu_count"] = _scalar(facts, "gpu.count") or error("gpu.count was not gathered")
        out["driver_version"] = _scalar(facts, "gpu.driver_version") or error(
            "gpu.driver_version was not gathered"
        )
        vendor = (facts.get("gpu.vendor") or {}).get("value")
        if vendor == "amd":  # AMD reports CUDA as "not applicable": compare ROCm instead
            out["cuda_version"] = _scalar(facts, "gpu.rocm_version") or error(
                "gpu.rocm_version is not reported by the node probe"
            )
        else:
            out["cuda_version"] = _scalar(facts, "gpu.cuda_version") or error(
                "gpu.cuda_version was not gathered"
            )
        out["gpu_vbios"] = _distinct_field(facts, "gpu.devices", "vbios_version")
    out["nic_firmware"] = _distinct_field(facts, "rdma.ports", "fw_ver")
    return out


def rdma_port(doc: Document) -> str | None:
    """The first ACTIVE RDMA port ("mlx5_0:1"), for ib_write_bw; None if there is none."""
    ports = doc["facts"].get("rdma.ports") or {}
    for m in ports.get("items") or []:
        state = (m["fields"].get("state") or {}).get("value")
        if isinstance(state, str) and state.upper() == "ACTIVE":
            return m["id"]
    return None


def rekey(doc: Document, address: str) -> Document:
    """The node document as the subject ``address`` (the name it was addressed by)."""
    subject = dict(doc["subject"])
    if subject.get("name") != address:
        subject["hostname"] = subject.get("name")
    subject["name"] = address
    subject["address"] = address
    return {**doc, "subject": subject}


def build(
    addresses: Sequence[str],
    documents: Mapping[str, Document | None],
    failures: Mapping[str, str],
    *,
    name: str,
    tool_version: str,
    collected_at: str,
    pairs: Mapping[tuple[str, str], dict[str, JSONValue]] | None = None,
    collectives: Mapping[str, dict[str, JSONValue]] | None = None,
    probe_seconds: Mapping[str, float] | None = None,
    transport: str = "",
    measure_status: Mapping[str, str] | None = None,
    measured: bool | None = None,
    fields_of: Mapping[str, dict[str, JSONValue]] | None = None,
    evidence: Mapping[str, dict[str, JSONValue]] | None = None,
) -> Document:
    """The cluster facts document; ``documents`` are already re-keyed by address.

    ``measure_status``: for "throughput", "latency" and "collectives", ``RUN`` or why that
    measurement was not taken ("not requested (--measure-tools ping)", "not run: b has no
    GPUs (or none counted)"); the rules skip with that reason instead of reporting a missing number.
    ``fields_of``: each host's ``host_fields``, taken as the documents were read (a streamed
    replay keeps these, not the documents); ``documents`` then only says which hosts have one.
    ``evidence``: each host's ``own_facts`` and ``facts_age`` (``validator.cluster.evidence``),
    judged here from the documents (as a live run's) where not given.
    """
    probe_seconds = probe_seconds or {}
    if fields_of is None and evidence is None:
        from validator.cluster.evidence import judge

        evidence = judge({a: documents.get(a) for a in addresses})
    probes, hosts = [], []
    gpu_hosts = 0
    ok = {"status": value("ok", source=transport or None)}  # one for every host probed (read only)
    for addr in addresses:
        doc = documents.get(addr)
        fields: dict[str, JSONValue] = {}
        if doc is None:
            fields["status"] = error(failures.get(addr, "not probed"), source=transport or None)
        else:
            fields = ok
            hf = fields_of[addr] if fields_of is not None else {**host_fields(doc), **(evidence or {})[addr]}
            hosts.append(item(addr, hf))
            gpu_hosts += has_gpus(hf)
        if addr in probe_seconds:
            fields = {**fields, "duration": value(round(probe_seconds[addr], 3), unit="s")}
        probes.append(item(addr, fields))
    facts = _counted(len(addresses), gpu_hosts, probes, hosts, transport,
                     pairs is not None if measured is None else measured)
    if pairs is not None:
        facts["cluster.pairs"] = items([item(f"{a}->{b}", f) for (a, b), f in pairs.items()])
    for what, status in (measure_status or {}).items():
        facts[f"cluster.{what}_status"] = value(status)
    if collectives is not None:
        facts["cluster.collectives"] = items([item(k, f) for k, f in collectives.items()])
    return new_document(
        "cluster", name, facts, tool_version=tool_version, collected_at=collected_at
    )


def _counted(host_count: int, gpu_hosts: int, probes: Sequence[dict[str, JSONValue]],
             hosts: Sequence[dict[str, JSONValue]],
             transport: str, measured: bool) -> dict[str, JSONValue]:
    return {
        "cluster.host_count": value(host_count),
        "cluster.probed_count": value(len(hosts)),
        "cluster.gpu_host_count": value(gpu_hosts),
        "cluster.probes": items(probes, source=transport or None),  # type: ignore[arg-type]
        "cluster.hosts": items(hosts),  # type: ignore[arg-type]
        "cluster.measured": value(measured),
    }


def has_gpus(fields: Mapping[str, JSONValue]) -> bool:
    """Whether a host's PLAT-02 fields (``host_fields``) count GPUs."""
    return fields["gpu_count"].get("value") not in (0, None)


def fleet_document(
    names: Sequence[str],
    fields_of: Callable[[int], dict[str, JSONValue]],
    gpu_hosts: int,
    *,
    name: str,
    tool_version: str,
    collected_at: str,
    transport: str,
) -> Document:
    """``build``'s document for hosts that were all probed, nothing measured, its probe and
    host items made when read (``MadeItems``): a replayed fleet of 25,000 hosts would
    otherwise hold 50,000 item dicts. ``fields_of(k)``: host ``names[k]``'s ``host_fields``;
    ``gpu_hosts``: how many of them count GPUs. The same document as ``build`` (a test
    compares their digests)."""
    ok = {"status": value("ok", source=transport or None)}
    probes = MadeItems(len(names), lambda k: item(names[k], ok))
    hosts = MadeItems(len(names), lambda k: item(names[k], fields_of(k)))
    facts = _counted(len(names), gpu_hosts, probes, hosts, transport, False)
    return new_document("cluster", name, facts, tool_version=tool_version, collected_at=collected_at)


def fleet_summary(
    addresses: Sequence[str],
    failures: Mapping[str, str],
    pairs: Mapping[tuple[str, str], dict[str, JSONValue]] | None,
    rounds: int = 0,
    interrupted: bool = False,
) -> dict[str, JSONValue]:
    """What the result's ``extra.fleet`` says about the run itself."""
    out: dict[str, JSONValue] = {
        "hosts": len(addresses),
        "probed": len(addresses) - len(failures),
        "failed": dict(failures),
        "interrupted": interrupted,
    }
    if pairs is not None:
        tput = [
            f["throughput"]["value"]
            for f in pairs.values()
            if isinstance(f.get("throughput"), dict) and "value" in f["throughput"]
        ]
        out["pairs"] = {"measured": len(pairs), "rounds": rounds}
        if tput:
            out["pairs"].update(
                {"throughput_min_gbps": min(tput), "throughput_max_gbps": max(tput)}
            )
    return out


NO_NODE_FACTS = "no node facts for this host in --facts"

# The facts a replay recomputes from the probe list and the node documents given (PLAT-02
# compares the node documents as given, not a copy taken at probe time); the measurements
# (pairs, collectives, their statuses) are kept as they were recorded.
_REPLAYED = (
    "cluster.host_count",
    "cluster.probed_count",
    "cluster.gpu_host_count",
    "cluster.probes",
    "cluster.hosts",
)


def replay_document(
    saved: Document,
    documents: Mapping[str, JSONValue],
    fields: Mapping[str, dict[str, JSONValue]] | None = None,
    *,
    evidence: Mapping[str, dict[str, JSONValue]] | None = None,
) -> tuple[Document, dict[str, str], list[str]]:
    """(the saved cluster document as these node documents make it, failures, hosts).

    The host list is the recorded ``cluster.probes`` (then any extra node document). A host
    recorded as probed but with no node document given is a failure, never a pass: its node
    rules cannot run, and a replay of ``cluster.json`` alone must not read as conformant.
    A host with a node document given counts as probed, whatever was recorded.
    """
    probes = saved["facts"].get("cluster.probes") or {}
    members = probes.get("items") or []
    hosts = [m["id"] for m in members]
    recorded = set(hosts)
    hosts += [h for h in documents if h not in recorded]
    failures: dict[str, str] = {}
    seconds: dict[str, float] = {}
    for m in members:
        duration = (m["fields"].get("duration") or {}).get("value")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool):
            seconds[m["id"]] = float(duration)
        if m["id"] not in documents:
            st = m["fields"].get("status") or {}
            failures[m["id"]] = st.get("error", NO_NODE_FACTS)
    rebuilt = build(
        hosts,
        documents,
        failures,
        name=saved["subject"]["name"],
        tool_version=saved.get("tool_version", ""),
        collected_at=saved.get("collected_at", ""),
        probe_seconds=seconds,
        transport=probes.get("source") or "",
        fields_of=fields,
        evidence=evidence,
    )
    facts = dict(saved["facts"])
    facts.update({k: rebuilt["facts"][k] for k in _REPLAYED})
    return {**saved, "facts": facts}, failures, hosts
