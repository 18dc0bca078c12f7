"""Free outputs: channels as mixtures of the privacy cone's extreme rays.

Owns: the rays (:mod:`._rays` structured, :mod:`._exact_dd` exact double description),
the ray LP (:mod:`._raylp`), exact pricing (:mod:`._pricing`, :mod:`._pricing_lip`,
:mod:`._pricing_sep`) and its column generation (:mod:`._colgen`), the symmetric d-subset
orbit (:mod:`._orbit`) and which of them runs (:mod:`._route`).

May import: :mod:`mechopt.notions`, :mod:`mechopt.objectives`,
:mod:`mechopt.solvers.backends`, :mod:`mechopt.solvers._outcome` and the
column-generation loop. Never the dispatcher (:mod:`mechopt._solve`).
"""
