"""``spec-check spec sample-profile``: a profile every key of which is written out and
explained, valid as printed (as ``pre-commit sample-config`` is), and the table of
parameters docs/profile.md holds. Both come from the spec's own parameter list, so a
parameter added to the spec is in the sample and (a test checks) in the doc."""

from __future__ import annotations

import re
import textwrap
from typing import Any

# the keys of a profile besides its parameters (validator/rules/spec.py reads them)
TOP_KEYS = {
    "name": "A name for the platform this profile describes (shown in no verdict; for people).",
    "description": "What the platform is (text; for people).",
    "spec_version": 'The spec version the profile was written for ("1.0"); a run against another '
                    "version refuses it instead of judging with the wrong numbers.",
    "parameters": "The spec parameters that differ on this platform, NAME: VALUE; a parameter left "
                  "out keeps the spec's default, and `--set NAME=VALUE` wins over the profile.",
}

# a value to show for a parameter with no default, by its dimension
_EXAMPLES = {"count": "1024", "duration": "4.2 s", "bitrate": "400 Gb/s", "bytes": "1 GiB", "ratio": "0.9",
             "steps": "100", "list": "[]"}


_LOOKS_LIKE_KEY = re.compile(r"[a-z_]+: ")


def shown(value: Any) -> str:
    """A default as YAML writes it on one line: ``400 Gb/s``, ``[PIX, PXB]``, ``unlimited``."""
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def example(param: Any) -> str:
    if param.default is not None:
        return shown(param.default)
    return _EXAMPLES.get(param.dimension, "1")


def _comment(text: str, indent: str) -> list[str]:
    """Wrapped so that no line of prose reads as a commented-out parameter
    (``# xid_lookback: the GPU ...``): uncommenting it would set that key twice."""
    flat = " ".join(text.split())
    for width in range(88 - len(indent), 40, -1):
        lines = textwrap.wrap(flat, width, break_on_hyphens=False)
        if not any(_LOOKS_LIKE_KEY.match(line) for line in lines):
            break
    return [f"{indent}# {line}" for line in lines]


def sample_profile(spec: Any) -> str:
    """The annotated profile: the header keys set, every parameter commented out at its
    default (or an example where the spec has none), each with what it means."""
    lines = [
        "# A spec-check profile: the platform a run is judged for.",
        "#   spec-check check|lint|cluster --profile profile.yaml",
        "# Uncomment a parameter and change its value where your platform differs from the",
        "# spec's default; --set NAME=VALUE on the command line wins over the profile.",
        "# Every key is explained in docs/profile.md.",
        "",
    ]
    for key, value in (("name", "my-cluster"), ("description", "What this platform is"),
                       ("spec_version", f'"{spec.spec_version}"')):
        lines += _comment(TOP_KEYS[key], "")
        lines.append(f"{key}: {value}")
    lines += _comment(TOP_KEYS["parameters"], "")
    lines.append("parameters:")
    for name, param in spec.parameters.items():
        lines.append("")
        lines += _comment(param.description, "  ")
        if param.values:
            lines += _comment("Values: " + "; ".join(f"{k} ({v})" for k, v in param.values.items()) + ".", "  ")
        said = f"default {shown(param.default)}" if param.default is not None else "no default: unknown unless set"
        lines += _comment(f"({said})", "  ")
        lines.append(f"  # {name}: {example(param)}")
    return "\n".join(lines) + "\n"


def parameter_table(spec: Any) -> str:
    """docs/profile.md's table: every parameter, its default and what it means."""
    rows = ["| parameter | default | what it is |", "|---|---|---|"]
    for name, param in spec.parameters.items():
        default = f"`{shown(param.default)}`" if param.default is not None else "none (unknown unless set)"
        text = " ".join(param.description.split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {default} | {text} |")
    return "\n".join(rows) + "\n"
