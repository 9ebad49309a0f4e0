"""The arguments a launch script's own Python entry point adds to HF's (issue 33, class 4).

A training script commonly parses its command line with ``HfArgumentParser`` over several
dataclasses: its own ``ModelArguments`` and ``DataArguments``, and often a subclass of
``transformers.TrainingArguments`` adding fields (``model_max_length``). The launch script
then passes flags HF's ``TrainingArguments`` does not have; they are the script's, not
typos of HF keys. Where the entry point is in the job's folder, its dataclasses are read
with :mod:`ast` (never imported or run): the fields of every ``@dataclass`` class, and of
any class deriving from one (or from ``TrainingArguments``), in the script and in the
modules of its folder it imports by name (``from arguments import ModelArguments``).

Where the entry point is not there (a script of another folder or repository), an
unknown flag is unknown: it may be any of the script's own arguments, so it is no
evidence of a typo. Only HF's own example scripts (``run_clm.py``, ...) take no arguments
beyond theirs and TrainingArguments', so there a near miss is still a typo.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

MAX_MODULES = 8  # the script and the sibling modules it imports
CAP = 1024 * 1024  # bytes of one Python file read
# transformers' own example scripts (examples/pytorch/*/run_*.py): every flag they take is
# HF's or of their own ModelArguments/DataTrainingArguments, known names
HF_EXAMPLE = re.compile(r"(?:^|/)run_(?:clm|mlm|plm|glue|xnli|ner|qa|seq2seq_qa|summarization|translation|swag|"
                        r"image_classification|speech_recognition_ctc|speech_recognition_seq2seq|"
                        r"audio_classification|mim|mae|semantic_segmentation|object_detection|"
                        r"instance_segmentation|fim|classification)(?:_no_trainer)?\.py$")
TRAINING_ARGUMENTS = {"TrainingArguments", "Seq2SeqTrainingArguments"}


class EntryPoint:
    """What is known of a launch line's Python script: ``found`` (read from the job's
    folder), the flags its own dataclasses add (``fields``, with the class of each), and
    whether it is one of HF's own example scripts."""

    def __init__(self, script: str, found: Path | None, fields: dict[str, str]) -> None:
        self.script = script
        self.found = found
        self.fields = fields

    @property
    def hf_example(self) -> bool:
        return bool(HF_EXAMPLE.search(self.script))


def read(script: str, folder: Path, root: Path) -> EntryPoint:
    """The entry point ``script`` (as the launch line names it) looked up in ``folder``
    (the launch script's), read only when it lies inside ``root`` (the job's folder) and
    is a regular file."""
    if not script.endswith(".py") or "$" in script:
        return EntryPoint(script, None, {})
    cand = Path(os.path.normpath(folder / script)) if not os.path.isabs(script) else Path(script)
    real, top = os.path.realpath(cand), os.path.realpath(root)
    if not (real.startswith(top.rstrip(os.sep) + os.sep) and cand.is_file()):
        return EntryPoint(script, None, {})
    fields: dict[str, str] = {}
    classes: dict[str, tuple[list[str], list[str]]] = {}  # name -> (bases, own fields)
    todo: list[Path] = [cand]
    seen: set[str] = set()
    while todo and len(seen) < MAX_MODULES:
        path = todo.pop(0)
        if os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        tree = _parse(path)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                own = [t.target.id for t in node.body
                       if isinstance(t, ast.AnnAssign) and isinstance(t.target, ast.Name)]
                bases = [_name(b) for b in node.bases]
                if _is_dataclass(node) or any(b in TRAINING_ARGUMENTS for b in bases):
                    bases.append("@dataclass")
                classes.setdefault(node.name, (bases, own))
            elif isinstance(node, ast.ImportFrom) and node.module and node.level in (0, 1):
                sibling = path.parent / (node.module.replace(".", os.sep) + ".py")
                if sibling.is_file() and os.path.realpath(sibling).startswith(top.rstrip(os.sep) + os.sep):
                    todo.append(sibling)
    for name, (_bases, own) in classes.items():
        if _argument_class(name, classes):
            for f in own:
                fields.setdefault(f, name)
    return EntryPoint(script, cand, fields)


def _parse(path: Path) -> ast.Module | None:
    from validator.io.source import ReadError, read_text

    try:
        return ast.parse(read_text(path, cap=CAP, what="training script"))
    except (ReadError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _is_dataclass(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if _name(target) == "dataclass":
            return True
    return False


def _argument_class(name: str, classes: dict[str, tuple[list[str], list[str]]], depth: int = 0) -> bool:
    """A dataclass, or a class deriving from one of the script's (or from HF's
    TrainingArguments): its fields are command-line flags under HfArgumentParser."""
    bases = classes[name][0]
    if "@dataclass" in bases:
        return True
    return depth < 8 and any(b in classes and b != name and _argument_class(b, classes, depth + 1) for b in bases)
