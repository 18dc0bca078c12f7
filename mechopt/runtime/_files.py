"""Label files of the runtime commands: read one label a line, refuse unknown labels, write atomically.

Shared by the matrix commands (:mod:`mechopt.runtime._commands`) and the family commands
(:mod:`mechopt.families._commands`). May import: the standard library,
:mod:`mechopt._errors` and :func:`mechopt.runtime._inference.read_text`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from mechopt._errors import InputError
from mechopt.runtime._inference import read_text


def read_labels(path: str | Path, what: str) -> list[str]:
    """One label per line; line terminators (``\\n``, ``\\r\\n``) are not part of it."""
    text = read_text(path, what)
    labels = text.splitlines()
    for lineno, label in enumerate(labels, start=1):
        if not label.strip():
            raise InputError(f"{path}:{lineno}", f"line is empty; the {what} file must hold "
                                                 "exactly one label per line")
    return labels


def refuse_unknown(path: str | Path, labels: list[str], known: dict[str, int], what: str,
                   kind: str) -> None:
    """Refuse the first label of ``labels`` (read from ``path``) that ``known`` does not hold, naming its line."""
    for lineno, label in enumerate(labels, start=1):
        if label not in known:
            allowed = list(known)
            shown = allowed if len(allowed) <= 8 else allowed[:8] + ["..."]
            raise InputError(f"{path}:{lineno}", f"{label!r} is not an {kind} label of the "
                                                 f"mechanism ({what}); expected one of "
                                                 f"{shown!r}")


def write_atomically(target: Path, text: str, what: str) -> None:
    """Write ``text`` to ``target`` through a temporary file in the same folder (never half a file)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".",
                                   prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError as err:
        raise InputError(str(target), f"cannot write the {what} file: {err}") from None
