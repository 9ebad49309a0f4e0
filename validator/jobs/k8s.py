"""Kubeflow PyTorchJob manifests (``kubeflow.org/v1``): replicas, GPUs, restarts, env, command.

Manifests are often envsubst templates (``replicas: $NUM_NODES``); an unexpanded
``$VAR`` counts as not set. The container command/args are read as a launcher line,
so torchrun flags and script arguments mean what they mean in a shell script.
"""

from __future__ import annotations

from typing import Any

from validator.jobs import common as c
from validator.jobs import launch
from validator.jobs.base import Ctx


def read(ctx: Ctx) -> None:
    m = ctx.model
    m.formats.append("pytorchjob")
    m.torch = True
    spec = ("spec",)
    replicas = 0
    known = True
    specs = ctx.get(*spec, "pytorchReplicaSpecs") or {}
    for role in ("Master", "Worker"):
        rs = specs.get(role) if isinstance(specs, dict) else None
        if not isinstance(rs, dict):
            continue
        n = c.as_int(rs.get("replicas", 1))
        if n is None:
            known = False
        else:
            replicas += n
        rp = rs.get("restartPolicy")
        if isinstance(rp, str):
            ctx.set(
                "job.recovery.auto_restart",
                rp in ("OnFailure", "Always", "ExitCode"),
                (*spec, "pytorchReplicaSpecs", role, "restartPolicy"),
                f"pytorchjob: {role}.restartPolicy = {rp}",
            )
        base = (*spec, "pytorchReplicaSpecs", role, "template", "spec", "containers")
        for i, ct in enumerate(ctx.get(*base) or []):
            if isinstance(ct, dict):
                _container(ctx, (*base, i), ct)
    if known and replicas:
        ctx.set(
            "job.resources.nodes", replicas, (*spec, "pytorchReplicaSpecs"), "pytorchjob: replicas"
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
    mx = c.as_int(ctx.get(*ep, "maxReplicas"))
    if mx is not None and not m.has("job.resources.nodes"):
        pass  # elastic: the node count varies between min and max replicas
    npn = c.as_int(ctx.get(*spec, "nprocPerNode"))
    if npn:
        ctx.set(
            "job.resources.gpus_per_node", npn, (*spec, "nprocPerNode"), "pytorchjob: nprocPerNode"
        )


def _container(ctx: Ctx, path: tuple[Any, ...], ct: dict[str, Any]) -> None:
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
                f"pytorchjob: resources.{kind}.nvidia.com/gpu",
            )
            break
    for i, e in enumerate(ct.get("env") or []):
        if isinstance(e, dict) and isinstance(e.get("name"), str) and "value" in e:
            c.env(ctx.model, e["name"], e.get("value"), ctx.file, ctx.line(*path, "env", i))
    words: list[tuple[str, int]] = []
    for key in ("command", "args"):
        seq = ct.get(key)
        if isinstance(seq, list):
            for i, w in enumerate(seq):
                if isinstance(w, (str, int, float)):
                    line = ctx.line(*path, key, i) or 0
                    words += [(t, line) for t in str(w).split()]
    if words:
        launch.apply_words(ctx, words)
