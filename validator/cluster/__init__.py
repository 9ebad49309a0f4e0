"""Fleet checks: probe many hosts through an existing engine (OpenSSH, Slurm, or locally),
measure the fabric between them in parallel rounds, and build one cluster facts document.

The layers, each small and replaceable:

* ``hosts``: which hosts, keyed by the name they were addressed by;
* ``transports``: how a command reaches a host (``ssh``, ``srun``, this machine);
* ``gather``: run one job per host with bounded concurrency, per-host timeouts, and
  partial results on Ctrl-C;
* ``plan``: which pairs to measure in which round (ring or all pairs);
* ``measure``: the tools (iperf3, ping, ib_write_bw, nccl-tests) and their parsers;
* ``facts``: node documents + measurements -> the ``cluster`` facts document;
* ``live``: a live run (probe, measure, keep what was gathered on a signal);
* ``replay``: ``--facts``, saved documents evaluated without probing;
* ``fleet``: a large fleet's node rules, one document at a time, passes folded;
* ``shapes``: node files that repeat a known document but for the host's strings and
  some fact values, read back without parsing;
* ``result``: evaluate, give each host its probe verdict, hand the report to the
  caller's ``Output`` (whose ``finish`` makes the run's outcome).

``validator/api/cluster.py`` calls ``live.run`` or ``replay.replay`` and returns their
``FleetOutcome``; ``validator/cli/cluster.py`` only parses the options and renders.

Rules are evaluated by the engine, from the documents built here.
"""
