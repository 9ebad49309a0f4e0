"""The GPU source: picks the vendor backend from the PCI scan, which needs no driver.

AMD-only nodes go to amdsmi; everything else goes to NVML, which also decides "no GPU"
(NVML library missing and no NVIDIA function on the bus). amdsmi is never imported on a
node without AMD accelerators: its import is slow and noisy.
"""

from __future__ import annotations

from validator.facts.document import Fact
from validator.facts.node import amd, nvidia
from validator.facts.node.base import Context
from validator.facts.node.pci import pci_vendor_counts

NAME = "gpu"
FACTS = nvidia.FACTS


def collect(ctx: Context) -> dict[str, Fact]:
    counts = pci_vendor_counts(ctx) or {}
    if counts.get("amd") and not counts.get("nvidia"):
        return amd.collect(ctx)
    return nvidia.collect(ctx)
