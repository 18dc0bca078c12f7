"""Estimation-optimal design (docs/design.md): minimise the estimator's risk over channels.

Owns: the convex route over enumerated rays (:mod:`._convex`: cvxpy, Frank–Wolfe), the
column generation with a certified bound (:mod:`._colgen`, pricing in :mod:`._pricing`:
staircases and listed rays; :mod:`._pricing_lip`: LIP slices),
the subset-selection orbit for a uniform p0 (:mod:`._orbit`) and which of them runs
(:mod:`._route`).

May import: :mod:`mechopt.notions`, :mod:`mechopt.objectives`,
:mod:`mechopt.solvers.backends`, :mod:`mechopt.solvers.free` (rays),
:mod:`mechopt.solvers._outcome` and the column-generation loop. Never the dispatcher.
"""
