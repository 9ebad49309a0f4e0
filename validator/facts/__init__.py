"""Facts: the facts document (``document.py``: what every source produces and the engine
reads) and the node probes (``node/``: sysfs, procfs, NVML, DCGM). Below the rules, the
engine and the report, which read the document format but not the probes."""
