"""The labeled LP: channels with fixed outputs (one output per label).

Owns: per-column constraints combined from the notions and reduced (:mod:`._structure`),
symmetry (orbit) reduction (:mod:`._symmetry`), the sparse LP and the ULDP role MILP
(:mod:`._lp`, row blocks in :mod:`._blocks`).

May import: :mod:`mechopt.notions`, the measures layer (:mod:`mechopt.objectives`),
:mod:`mechopt.solvers.backends`, :mod:`mechopt.solvers._outcome` and
:mod:`mechopt.solvers.metric` (the metric routes it hands large metric problems to).
"""
