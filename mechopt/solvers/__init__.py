"""Solver back-ends and algorithms: labeled LP, extreme rays, column generation, design.

**Solvers return candidates.** A route (:mod:`.free._route`, :mod:`.free._orbit`,
:mod:`.design._route`, the labeled LP, the metric routes) returns what it found — a
:class:`._outcome.Candidate` (channel, proven bound or None, whether it is proven, the
relative gap that makes it optimal, the columns the repair may mix, statistics), a
:class:`._outcome.FamilyCandidate`, a :class:`._outcome.Failure` or a
:class:`._outcome.LabeledSolution` — and never repairs, verifies, falls back or sets a
status: the dispatcher (:mod:`mechopt._solve`, :mod:`mechopt._settle`) alone does.

**Imports point down.** Sub-packages by route, each saying what it owns and may import:
:mod:`.backends` (the LP adapters and certified bounds: nothing else of mechopt),
:mod:`.labeled`, :mod:`.metric`, :mod:`.free`, :mod:`.design`; beside them
:mod:`._outcome` (the outcome types and tolerances, nothing of mechopt) and
:mod:`._repair`. A module here may import :mod:`mechopt.notions`, the objectives, the
verifier, :mod:`.backends` and :mod:`._outcome`; never :mod:`mechopt._solve`,
:mod:`mechopt._solve_design`, :mod:`mechopt._settle`, the CLI or the exporter. A metric
module never imports the labeled LP (:mod:`.labeled._lp` hands large metric problems
down to :mod:`.metric`, not the reverse).
"""
