"""A run's outputs as evidence (``spec-check lint --run DIR``): MON-01, MON-02 and REC-02
measured from what a training job really wrote, not from what its config declares.

The stages, each its own module:

* ``sniff``: which files of a run folder are what, by their content (an event file's
  record framing, a CSV header with a step column, a JSON ``log_history``, MLflow's
  ``timestamp value step`` lines, a launcher's failure or step lines); the rest is passed
  over with the reason. Both lists travel in the result.
* ``readers``: one streaming reader per format, each yielding ``(name, step, wall time,
  value)`` and raising ``RunFileError`` (file, line, problem) on bad input.
* ``dvclive`` and ``dslog``: DVCLive's ``plots/metrics/*.tsv`` and ``metrics.json``; DeepSpeed's
  engine lines in a log (throughput, memory, the wall-clock breakdown timers).
* ``versions``: Lightning's ``version_N`` folders (and the MLflow runs of one experiment) read
  against the one before: a folder whose first step continues past one logging interval is
  the job resumed from a checkpoint (a restart); one starting again at step 0 is a new fit.
* ``families``: the metric family of a logged name, from each framework's own names
  (``tags.yaml``, versioned).
* ``cadence``: per family, the step and wall-clock gaps between emissions (median, p95,
  the longest), stalls, non-finite losses and gradient norms, and restarts (a step that
  goes back), all in memory that does not grow with the run's length.
* ``recovery``: each launcher failure paired with the first step emitted after the restart.
* ``facts``: the job facts the rule pack judges (``job.metrics.<family>``,
  ``job.metrics.measured``, ``job.recovery.measured``).
"""
