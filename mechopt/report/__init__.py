"""``mechopt report``: one self-contained HTML page about a mechanism file.

The page holds, in order: the channel (heat map), the certificate (the exact verification
re-run, the solver's recorded value, bound and gap, the sha256), the expected error of the
estimated distribution at ``n`` reports with its intervals, the standard mechanisms on the
same axis, the central ε after shuffling (as a function of n) and the privacy-loss
distribution of the worst pair of inputs. Figures are PNG images inside the page
(``data:`` URIs); there is no script and no external reference, so the file can be mailed
or archived and opens offline.

Modules: :mod:`._sections` (what each section computes), :mod:`._accounting` (the shuffle
and privacy-loss sections), :mod:`._figures` (matplotlib, Agg), :mod:`._html` (the page).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._errors import InputError
from .._validation import check_delta, check_k

#: the default number of reports of the expected-error and shuffle sections
DEFAULT_N = 10_000
#: the default δ of the shuffle section
DEFAULT_DELTA = 1e-6

__all__ = ["DEFAULT_DELTA", "DEFAULT_N", "report_html", "report_sections", "write_report"]


def _load(mechanism: Any):
    from .._mechanism import Mechanism

    if isinstance(mechanism, Mechanism):
        return mechanism, "mechanism", mechanism.to_dict()["sha256"], False
    from .._mechanism import load_verified

    checked, mech = load_verified(mechanism)
    if not isinstance(mech, Mechanism):
        raise InputError("mechanism", f"{mechanism}: a family file has no matrix to draw; the report needs a "
                                      "mechanism file with a matrix")
    return mech, Path(str(mechanism)).name, checked.doc["sha256"], True




def report_sections(mechanism: Any, *, n: int = DEFAULT_N, problem: Any = None,
                    delta: float = DEFAULT_DELTA) -> list:
    """The sections of the page, with their data (``Section.data``) and figures.

    Parameters
    ----------
    mechanism : Mechanism or path
        A mechanism file (read and verified exactly, as ``mechopt verify`` reads it).
    n : int, keyword-only
        Number of reports for the expected error and the shuffle section.
    problem : Problem, dict or path, optional, keyword-only
        The problem the baselines are scored on; default: the one the file records (its
        inputs, claims and objective). A problem file with ``places:`` adds the location
        baselines.
    delta : float, keyword-only
        δ of the central guarantee after shuffling.

    Returns
    -------
    list of Section
        ``channel``, ``certificate``, ``error``, ``baselines``, ``shuffle``, ``pld``.
    """
    from .._baselines import _places_of
    from .._problem import Problem, load_problem
    from . import _accounting, _sections

    n = check_k(n, "n", minimum=2)
    delta = check_delta(delta, "delta", low_open=True, high_open=True)
    mech, source, sha256, from_file = _load(mechanism)
    places = None
    if problem is None:
        prob = _sections.problem_of(mech)
    else:
        prob = problem if isinstance(problem, Problem) else load_problem(problem)
        places = _places_of(problem)
        if tuple(prob.inputs) != tuple(mech.inputs):
            raise InputError("problem", f"the problem's inputs differ from the mechanism's ({len(prob.inputs)} vs "
                                        f"{len(mech.inputs)} labels)")
    return [_sections.channel(mech, source), _sections.certificate(mech, sha256, from_file),
            _sections.expected_error(mech, n), _sections.baselines(mech, prob, places),
            _accounting.shuffle(mech, n, float(delta)), _accounting.pld(mech, float(delta))]


def _render(sections: list, n: int, delta: float) -> str:
    from .. import __version__
    from . import _html

    k, m = sections[0].data["k"], sections[0].data["m"]
    return _html.page(f"mechopt report: {sections[0].data['source']}",
                      f"{k} inputs × {m} outputs; n = {n:,} reports; δ = {delta:g} for the central guarantee",
                      sections, f"Written by mechopt {__version__} ('mechopt report'). Self-contained: no script, "
                                "no external reference.")


def report_html(mechanism: Any, *, n: int = DEFAULT_N, problem: Any = None, delta: float = DEFAULT_DELTA) -> str:
    """The report as one HTML document (a string); arguments as :func:`report_sections`.

    Examples
    --------
    >>> import mechopt
    >>> m = mechopt.Mechanism.from_channel([[0.75, 0.25], [0.25, 0.75]], [{"notion": "ldp", "epsilon": 1.1}])
    >>> page = report_html(m, n=1000)
    >>> page.startswith("<!doctype html>") and 'id="fig-heatmap"' in page and "http" not in page
    True
    """
    return _render(report_sections(mechanism, n=n, problem=problem, delta=delta), n, delta)


def write_report(mechanism: Any, path: str | Path, *, n: int = DEFAULT_N, problem: Any = None,
                 delta: float = DEFAULT_DELTA) -> list:
    """Write :func:`report_html` to ``path`` (UTF-8); returns the sections drawn."""
    sections = report_sections(mechanism, n=n, problem=problem, delta=delta)
    Path(path).write_text(_render(sections, n, delta), encoding="utf-8")
    return sections
