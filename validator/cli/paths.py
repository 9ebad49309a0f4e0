"""Several paths after one ``--facts`` or ``--nodes``, as a shell glob gives them
(``cluster --facts saved/node*.json``): the words up to the next option each become one
more ``--facts PATH``, before click reads the arguments.
"""

from __future__ import annotations

# verb -> the options that take every path after them, up to the next option
MULTI_PATH: dict[str, tuple[str, ...]] = {"check": ("--facts",), "cluster": ("--facts",), "lint": ("--nodes",)}


def spread(args: list[str]) -> list[str]:
    """``[verb, --facts, a, b, --format, json]`` -> ``[verb, --facts, a, --facts, b, --format, json]``."""
    options = MULTI_PATH.get(args[0]) if args else None
    if not options:
        return args
    out, current, i = [args[0]], "", 1
    while i < len(args):
        word = args[i]
        if word == "--":
            out += args[i:]
            break
        if word in options and i + 1 < len(args):
            out += [word, args[i + 1]]
            current, i = word, i + 2
            continue
        if current and not word.startswith("-"):
            out += [current, word]
        else:
            current = ""
            out.append(word)
        i += 1
    return out
