"""Whose reading each threshold is (``reading`` of each parameter in ``spec/vX/requirements.yaml``:
the spec's own figure, a published one, spec-check's choice, or a per-run value), for the
renderers that say so beside a verdict. The spec is package data, read here so that the
renderers keep importing nothing upstream of ``report``."""

from __future__ import annotations


def parameter_readings(spec_version: str) -> dict[str, str]:
    """parameter -> reading for the installed spec of ``spec_version``; empty where this
    installation does not have that version (a result written by another build)."""
    from validator.errors import SpecCheckError
    from validator.rules.spec import load_spec

    try:
        spec = load_spec(spec_version)
    except SpecCheckError:
        return {}
    return {n: p.reading for n, p in spec.parameters.items()}
