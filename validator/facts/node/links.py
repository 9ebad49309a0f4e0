"""PCIe link facts of each GPU and each RDMA NIC, from sysfs (runs after gpu and rdma).

sysfs is used rather than NVML so that GPUs and NICs are judged alike, and a GPU whose
driver is broken still has its link reported. Speeds are link maxima and current values as
the kernel prints them; a GPU's current speed drops when idle, which rules must allow for
(see gpu.devices pstate). Management NICs without RDMA are not listed: the spec's links
are the GPU-to-fabric paths.
"""

from __future__ import annotations

from validator.facts.document import Fact, item, items
from validator.facts.document import value as fact_value
from validator.facts.node.base import Context
from validator.facts.node.pci import link_facts

NAME = "links"
FACTS = ("pcie.links",)


def collect(ctx: Context) -> dict[str, Fact]:
    named: dict[str, tuple[str, str]] = {}  # bdf -> (role, name)
    for gpu in ctx.facts.get("gpu.devices", {}).get("items", []):
        bdf = gpu["fields"].get("pci_bus_id", {}).get("value")
        if bdf:
            named[bdf] = ("gpu", gpu["id"])
    for acc in ctx.facts.get("accel.pci_devices", {}).get("items", []):
        named.setdefault(acc["id"], ("gpu", acc["id"]))  # driver did not name it
    for port in ctx.facts.get("rdma.ports", {}).get("items", []):
        bdf = port["fields"].get("pci_bus_id", {}).get("value")
        if bdf:
            named.setdefault(bdf, ("nic", port["fields"]["device"]["value"]))
    members = []
    for bdf in sorted(named):
        role, name = named[bdf]
        fields = {"role": fact_value(role), "name": fact_value(name), **link_facts(ctx, bdf)}
        members.append(item(bdf, fields))
    return {"pcie.links": items(members, source=str(ctx.sysfs / "bus/pci/devices"))}
