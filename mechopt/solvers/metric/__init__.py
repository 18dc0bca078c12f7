"""Labeled E-LDP and metric (geo) privacy at city size.

Owns: the structured interior-point method (:mod:`._ipm`), its route with the relaxation
and the proven bound (:mod:`._route`), the IPM over lazy pairs per output (:mod:`._lazy`)
or a growing set of outputs (:mod:`._outputs`), and the decomposition over outputs
(:mod:`._decompose`, parts in :mod:`._parts`).

May import: :mod:`mechopt.notions`, :mod:`mechopt.objectives`,
:mod:`mechopt.solvers.backends`, :mod:`mechopt.solvers._outcome`,
:mod:`mechopt.solvers.labeled` (its constraint structure) and the column-generation loop.
Never the labeled LP (:mod:`mechopt.solvers.labeled._lp`), which calls this package.
"""

#: the ``method`` values that name a route of this package
METRIC_METHODS = ("decompose", "ipm", "lazy", "outputs", "relax")
