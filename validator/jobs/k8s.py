"""Kubernetes training manifests: Kubeflow PyTorchJob (``kubeflow.org/v1``), MPIJob,
TFJob, JobSet, KubeRay RayJob and Volcano Job; replicas, GPUs, restarts, env, command.

Manifests are often envsubst templates (``replicas: $NUM_NODES``); an unexpanded
``$VAR`` counts as not set. The container command/args are read as a launcher line,
so torchrun flags and script arguments mean what they mean in a shell script; a
``sh -c SCRIPT`` command has its script read by the shell reader, at its own lines.
A multi-document file is read at its training resource (``jobs._read_one`` picks it).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.defaults import cite, value_of

if TYPE_CHECKING:
    from validator.report.model import JSONValue


def read(ctx: Ctx) -> None:
    m = ctx.model
    m.formats.append("pytorchjob")
    m.torch = True
    spec = ("spec",)
    replicas = 0
    known = True
    unset: list[str] = []  # roles whose replicas the training operator defaults
    specs = ctx.get(*spec, "pytorchReplicaSpecs") or {}
    policies: list[tuple[str, str]] = []  # (role, restartPolicy)
    for role in ("Master", "Worker"):
        rs = specs.get(role) if isinstance(specs, dict) else None
        if not isinstance(rs, dict):
            continue
        if "replicas" not in rs:
            unset.append(role)
        n = c.as_int(rs.get("replicas", value_of("kubeflow.replicas")))
        if n is None:
            known = False
        else:
            replicas += n
        rp = rs.get("restartPolicy")
        if isinstance(rp, str):
            policies.append((role, rp))
        base = (*spec, "pytorchReplicaSpecs", role, "template", "spec", "containers")
        for i, ct in enumerate(_seq(ctx.get(*base))):
            if isinstance(ct, dict):
                _container(ctx, (*base, i), ct)
    if known and replicas:
        dflt = f" ({', '.join(unset)}: {cite('kubeflow.replicas')})" if unset else ""
        ctx.set(
            "job.resources.nodes", replicas, (*spec, "pytorchReplicaSpecs"), f"pytorchjob: replicas{dflt}"
        )
    ep = (*spec, "elasticPolicy")
    mr = c.as_int(ctx.get(*ep, "maxRestarts"))
    if mr is not None:
        ctx.set(
            "job.recovery.max_restarts",
            mr,
            (*ep, "maxRestarts"),
            "pytorchjob: elasticPolicy.maxRestarts",
        )
    _restart(ctx, spec, policies, mr)
    mx = c.as_int(ctx.get(*ep, "maxReplicas"))
    if mx is not None and not m.has("job.resources.nodes"):
        pass  # elastic: the node count varies between min and max replicas
    npn = c.as_int(ctx.get(*spec, "nprocPerNode"))
    if npn:
        ctx.set(
            "job.resources.gpus_per_node", npn, (*spec, "nprocPerNode"), "pytorchjob: nprocPerNode"
        )


def _restart(ctx: Ctx, spec: tuple[str, ...], policies: list[tuple[str, str]], max_restarts: int | None) -> None:
    """REC-01 of a PyTorchJob, citing the setting that decides. An elastic job's
    ``elasticPolicy.maxRestarts`` is what restarts it after a failure: the training
    operator passes it to torchrun as ``PET_MAX_RESTARTS`` (kubeflow/training-operator
    pkg/controller.v1/pytorch/elastic.go, ``EnvMaxRestarts``), whose agent restarts the
    worker group in place; a replica's ``restartPolicy: OnFailure`` only restarts the pod
    once the agent has given up. Without restarts to give (no elasticPolicy, or
    ``maxRestarts: 0``) the restart policy decides."""
    ep = (*spec, "elasticPolicy")
    # torchrun reads PET_MAX_RESTARTS as its --max-restarts default (torch/distributed/run.py,
    # env action); a container that launches otherwise (accelerate launch, its own
    # --max_restarts) is restarted by the pod's policy alone
    if max_restarts is not None and max_restarts > 0 and "torchrun" in ctx.model.formats:
        also = "; ".join(f"{role}.restartPolicy = {rp}" for role, rp in policies)
        ctx.set("job.recovery.auto_restart", True, (*ep, "maxRestarts"),
                f"pytorchjob: elasticPolicy.maxRestarts = {max_restarts} (torchrun restarts the worker group in "
                "place up to that many times: the operator sets PET_MAX_RESTARTS, kubeflow/training-operator "
                "pkg/controller.v1/pytorch/elastic.go" + (f"; then {also} restarts the pod" if also else "") + ")")
        return
    for role, rp in policies:
        ctx.set(
            "job.recovery.auto_restart",
            rp in ("OnFailure", "Always", "ExitCode"),
            (*spec, "pytorchReplicaSpecs", role, "restartPolicy"),
            f"pytorchjob: {role}.restartPolicy = {rp}",
        )


def _container(ctx: Ctx, path: tuple[object, ...], ct: dict[str, JSONValue]) -> None:
    for kind in ("limits", "requests"):
        n = c.as_int(
            (ct.get("resources") or {}).get(kind, {}).get("nvidia.com/gpu")
            if isinstance((ct.get("resources") or {}).get(kind), dict)
            else None
        )
        if n:
            ctx.set(
                "job.resources.gpus_per_node",
                n,
                (*path, "resources", kind, "nvidia.com/gpu"),
                f"{_label(ctx)}: resources.{kind}.nvidia.com/gpu",
            )
            break
    for i, e in enumerate(_seq(ct.get("env"))):
        if isinstance(e, dict) and isinstance(e.get("name"), str) and "value" in e:
            c.env(ctx.model, e["name"], e.get("value"), ctx.file, ctx.line(*path, "env", i))
    cmd = [*(_seq(ct.get("command"))), *(_seq(ct.get("args")))]
    if (
        isinstance(ct.get("command") or ct.get("args"), list)
        and len(cmd) >= 3
        and str(cmd[0]).rsplit("/", 1)[-1] in ("sh", "bash", "zsh", "dash")
        and str(cmd[1]) in ("-c", "-lc", "-ec", "-xc")
    ):
        from validator.jobs.skypilot import run_script

        key = "command" if len(_seq(ct.get("command"))) >= 3 else "args"
        idx = 2 if key == "command" else 2 - len(_seq(ct.get("command")))
        line = ctx.line(*path, key, idx)
        # a block scalar ("- |") starts on the next line; a quoted one on its own
        run_script(ctx, str(cmd[2]), (line or 1) - (0 if "\n" in str(cmd[2]) else 1))
        return
    words: list[tuple[str, int]] = []
    for key in ("command", "args"):
        seq = ct.get(key)
        if isinstance(seq, list):
            for i, w in enumerate(seq):
                if isinstance(w, (str, int, float)):
                    line = ctx.line(*path, key, i) or 0
                    words += [(t, line) for t in str(w).split()]
    if words:
        _mpirun_exports(ctx, words)
        from validator.jobs.shell import apply_words

        apply_words(ctx, words)


# kind -> (path to the replica specs, how each role's containers are reached)
def read_kubernetes(ctx: Ctx) -> None:
    """Any training kind: the nodes are the sum of its replicas, each pod template's
    containers are read as in a PyTorchJob, and its restart settings are recorded."""
    m = ctx.model
    data = ctx.tree.data if ctx.tree else {}
    kind = str(data.get("kind"))
    if kind == "PyTorchJob":  # --kind kubernetes on a PyTorchJob
        read(ctx)
        return
    label = _label(ctx)
    m.formats.append(kind.lower() if kind != "Job" else "volcano-job")
    spec = ("spec",)
    pods: list[tuple[tuple[object, ...], JSONValue]] = []  # (path of a pod template, replicas)
    restart_src: list[tuple[tuple[object, ...], str]] = []
    defaulted: list[str] = []  # pod counts the operator defaults, as cited
    if kind in ("MPIJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob"):
        key = {"MPIJob": "mpiReplicaSpecs", "TFJob": "tfReplicaSpecs", "XGBoostJob": "xgbReplicaSpecs",
               "PaddleJob": "paddleReplicaSpecs", "JAXJob": "jaxReplicaSpecs"}[kind]
        specs = ctx.get(*spec, key) or {}
        for role, rs in (specs.items() if isinstance(specs, dict) else []):
            if isinstance(rs, dict):
                if kind == "MPIJob" and role == "Launcher":
                    pods.append(((*spec, key, role, "template"), 0))  # the launcher runs no GPU rank
                else:
                    row = "kubeflow.mpi_worker_replicas" if kind == "MPIJob" else "kubeflow.replicas"
                    if "replicas" not in rs:
                        defaulted.append(f"{role}: {cite(row)}")
                    pods.append(((*spec, key, role, "template"), rs.get("replicas", value_of(row))))
                if isinstance(rs.get("restartPolicy"), str):
                    restart_src.append(((*spec, key, role, "restartPolicy"), rs["restartPolicy"]))
        rp = ctx.get(*spec, "runPolicy", "backoffLimit")
        if c.as_int(rp) is not None:
            ctx.set("job.recovery.max_restarts", c.as_int(rp), (*spec, "runPolicy", "backoffLimit"),
                    f"{label}: runPolicy.backoffLimit")
    elif kind == "JobSet":
        for i, rj in enumerate(_seq(ctx.get(*spec, "replicatedJobs"))):
            if not isinstance(rj, dict):
                continue
            jspec = rj.get("template", {}).get("spec", {}) if isinstance(rj.get("template"), dict) else {}
            if "replicas" not in rj:
                defaulted.append(f"replicatedJobs[{i}]: {cite('jobset.replicas')}")
            n_jobs = c.as_int(rj.get("replicas", value_of("jobset.replicas")))
            if isinstance(jspec, dict) and "parallelism" not in jspec:
                defaulted.append(f"replicatedJobs[{i}].template.spec: {cite('kubernetes.job_parallelism')}")
            par = c.as_int(jspec.get("parallelism", value_of("kubernetes.job_parallelism"))) \
                if isinstance(jspec, dict) else None
            n = n_jobs * par if n_jobs is not None and par is not None else None
            pods.append(((*spec, "replicatedJobs", i, "template", "spec", "template"), n))
        mr = c.as_int(ctx.get(*spec, "failurePolicy", "maxRestarts"))
        if mr is not None:
            ctx.set("job.recovery.max_restarts", mr, (*spec, "failurePolicy", "maxRestarts"),
                    "JobSet: failurePolicy.maxRestarts")
    elif kind == "RayJob":
        rc = (*spec, "rayClusterSpec")
        pods.append(((*rc, "headGroupSpec", "template"), 1))
        for i, wg in enumerate(_seq(ctx.get(*rc, "workerGroupSpecs"))):
            if isinstance(wg, dict):
                if "replicas" not in wg:
                    defaulted.append(f"workerGroupSpecs[{i}]: {cite('kuberay.worker_replicas')}")
                pods.append(((*rc, "workerGroupSpecs", i, "template"),
                             wg.get("replicas", value_of("kuberay.worker_replicas"))))
        bl = c.as_int(ctx.get(*spec, "backoffLimit"))
        if bl is not None:
            ctx.set("job.recovery.max_restarts", bl, (*spec, "backoffLimit"), "RayJob: backoffLimit")
        ep = ctx.get(*spec, "entrypoint")
        if isinstance(ep, str):
            from validator.jobs.skypilot import run_script

            line = ctx.line(*spec, "entrypoint")
            run_script(ctx, ep, (line or 1) - (0 if "\n" in ep else 1))
    elif kind == "Job":  # Volcano
        for i, task in enumerate(_seq(ctx.get(*spec, "tasks"))):
            if isinstance(task, dict):
                # a task without replicas runs no pod: Volcano defaults nothing (the row's source)
                if "replicas" not in task:
                    defaulted.append(f"tasks[{i}]: {cite('volcano.task_replicas')}")
                pods.append(((*spec, "tasks", i, "template"),
                             task.get("replicas", value_of("volcano.task_replicas"))))
        mr = c.as_int(ctx.get(*spec, "maxRetry"))
        if mr is not None:
            ctx.set("job.recovery.max_restarts", mr, (*spec, "maxRetry"), "Volcano Job: maxRetry")
    total: int | None = 0
    for tpl, reps in pods:
        n = c.as_int(reps) if not isinstance(reps, int) else reps
        if n is None or total is None:
            total = None
        else:
            total += n
        rp = ctx.get(*tpl, "spec", "restartPolicy")
        if isinstance(rp, str):
            restart_src.append(((*tpl, "spec", "restartPolicy"), rp))
        base = (*tpl, "spec", "containers")
        for j, ct in enumerate(_seq(ctx.get(*base))):
            if isinstance(ct, dict):
                _container(ctx, (*base, j), ct)
    if total:
        dflt = f" ({'; '.join(defaulted)})" if defaulted else ""
        ctx.set("job.resources.nodes", total, spec, f"{label}: replicas (pods){dflt}")
    # the job-level retry (JobSet maxRestarts, Kubeflow backoffLimit, RayJob backoffLimit,
    # Volcano maxRetry) restarts the job whatever a pod's own restartPolicy says (Never is
    # the norm under a JobSet); otherwise a pod policy that restarts is the restart
    retry = m.entries.get("job.recovery.max_restarts")
    restarting = [(p, rp) for p, rp in restart_src if rp in ("OnFailure", "Always", "ExitCode")]
    if retry is not None and not retry.default and isinstance(retry.value, int) and retry.value > 0:
        m.set("job.recovery.auto_restart", True, retry.file, retry.line,
              f"{retry.source} = {retry.value}")
    elif restarting:
        p, rp = restarting[0]
        ctx.set("job.recovery.auto_restart", True, p, f"{label}: restartPolicy = {rp}")
    elif restart_src:
        p, rp = restart_src[0]
        ctx.set("job.recovery.auto_restart", False, p, f"{label}: restartPolicy = {rp}")


def _label(ctx: Ctx) -> str:
    """The manifest's kind, as the source of a value (``PyTorchJob: ...``)."""
    kind = ctx.get("kind")
    if kind == "Job":
        return "Volcano Job"
    return "pytorchjob" if kind in (None, "PyTorchJob") else str(kind)


def _seq(v: JSONValue) -> list[JSONValue]:
    """A list field, or nothing: a manifest with ``containers: 5`` has no containers to read
    (the API server would refuse it; here it is simply not a source of settings)."""
    return v if isinstance(v, list) else []


def _mpirun_exports(ctx: Ctx, words: list[tuple[str, int]]) -> None:
    """``mpirun -x NAME=VALUE``: an environment variable every rank gets (an MPIJob
    launcher's command line), read as an export."""
    for (w, _), (nxt, line) in itertools.pairwise(words):
        if w == "-x" and "=" in nxt:
            name, _, val = nxt.partition("=")
            if name.isidentifier():
                c.env(ctx.model, name, val, ctx.file, line)
