"""Every output a doc shows as printed is what spec-check prints today, from committed inputs
(issue 34, deliverable 2): `scripts/doc_outputs.py --check` reruns each marked block's command.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import doc_outputs  # noqa: E402

# A fenced block that opens with spec-check's banner or holds its count line is a printed run.
BANNER = re.compile(r"^spec-check \S+ · spec v", re.M)
COUNTS = re.compile(r"^\d+ fail, \d+ error, \d+ warn, \d+ skip, \d+ pass$", re.M)
# docs whose output blocks another test reruns as written, line by line
CHECKED_ELSEWHERE = {"docs/first-conformant-job.md": "tests/test_guides.py"}


def test_printed_blocks_are_what_the_commands_print() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "doc_outputs.py"), "--check"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_every_block_shown_as_printed_names_its_command() -> None:
    unmarked = []
    for doc in doc_outputs.docs():
        rel = doc.relative_to(ROOT).as_posix()
        if rel in CHECKED_ELSEWHERE:
            assert rel in (ROOT / CHECKED_ELSEWHERE[rel]).read_text(encoding="utf-8")
            continue
        text = doc.read_text(encoding="utf-8")
        marked = {m.start("body") for m in doc_outputs.MARKER.finditer(text)}
        for m in re.finditer(r"^```\w*\n(.*?)^```$", text, re.M | re.S):
            if (BANNER.search(m.group(1)) or COUNTS.search(m.group(1))) and m.start(1) not in marked:
                unmarked.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}")
        said = len(re.findall(r"\bas printed\s*(?:\(exit|:)", text, re.I))
        assert said <= len(marked), f"{rel}: {said} outputs called 'as printed', {len(marked)} marked"
    assert unmarked == [], f"output blocks with no <!-- printed-by: ... --> marker: {unmarked}"


def test_the_readme_shows_a_recorded_vm_and_a_synthesized_dgx() -> None:
    commands = [m.group("cmd") for m in doc_outputs.MARKER.finditer((ROOT / "README.md").read_text(encoding="utf-8"))]
    assert commands == ["spec-check check --facts tests/fixtures/facts/recorded_vm_2cpu.json",
                        "spec-check check --facts tests/fixtures/facts/dgx_h100_port_200g.json"]
    for cmd in commands:  # committed inputs only, never this machine's probe
        assert "--facts tests/fixtures/" in cmd and (ROOT / cmd.split("--facts ")[1]).is_file()


def test_the_check_can_fail(tmp_path: Path) -> None:
    cmd = "spec-check check --facts tests/fixtures/facts/dgx_h100_port_200g.json"
    body, code = doc_outputs.run(cmd)
    assert code == 1 and "NET-01.fabric-port-slow" in body and "2026-11-18T11:06:40Z" in body
    doc = tmp_path / "doc.md"
    doc.write_text(f"as printed:\n\n<!-- printed-by: {cmd}; exit 1 -->\n```\n{body}```\n", encoding="utf-8")
    assert doc_outputs.regenerate(doc) == (doc.read_text(encoding="utf-8"), [])
    doc.write_text(f"<!-- printed-by: {cmd}; exit 0 -->\n```\n{body.replace('200 Gb/s', '400 Gb/s')}```\n",
                   encoding="utf-8")
    new, problems = doc_outputs.regenerate(doc)
    assert "200 Gb/s" in new and new != doc.read_text(encoding="utf-8")
    assert problems == [f"doc.md:1: `{cmd}` exits 1, the marker says 0"]
