"""The error hierarchy of mechopt.

Every error a user can cause is an :class:`InputError` (also a ``ValueError``) whose
message names the field and the rule; the CLI prints it on one line and exits 2.
A privacy or hash check that fails is a :class:`VerificationError` (exit 1); a solver
that fails or returns a numerically doubtful answer is a :class:`SolverError` (exit 1).
"""

from __future__ import annotations


class MechoptError(Exception):
    """Base class of every error mechopt raises on purpose."""

    exit_code = 1


class InputError(MechoptError, ValueError):
    """Malformed input: a problem file, a mechanism file, an argument.

    Parameters
    ----------
    field : str
        Where the problem is, e.g. ``"privacy[1].epsilon"``.
    rule : str
        What must hold, with the offending value, e.g. ``"must be >= 0, got -1.0"``.
    """

    exit_code = 2

    def __init__(self, field: str, rule: str):
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}" if field else rule)


class InputTypeError(InputError, TypeError):
    """Malformed input of the wrong type (a string where a number belongs, say).

    An :class:`InputError` (exit code 2, one line) that is also a ``TypeError``.
    """


class VerificationError(MechoptError):
    """A mechanism fails its privacy claim or its sha256 digest."""

    exit_code = 1


class SolverError(MechoptError, RuntimeError):
    """The optimiser failed, or its answer could not be repaired and verified."""

    exit_code = 1
