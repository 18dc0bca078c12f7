"""Privacy notions: each one is a polyhedral condition on every output column.

Every notion of docs/model.md constrains each column ``q = Q[:, y]`` of a channel separately
by homogeneous linear inequalities (one exception: (ε, δ)-LIP with δ > 0). A notion
object (:class:`Notion`) therefore offers

* :meth:`Notion.column_constraints` — the H-representation ``A q <= b`` of one column,
  with the clique groups ``max_{x in U} q[x] <= e^eps min_{x in L} q[x]`` kept as
  groups so the solver can use two auxiliary variables instead of ``|U||L|`` rows;
* :meth:`Notion.eldp_matrix`, :meth:`Notion.tie_groups`, :meth:`Notion.relaxed`,
  :meth:`Notion.structured_rays` — the facts the solvers read;
* :meth:`Notion.achieved` — the smallest budget the channel satisfies (float);
* :attr:`Notion.composition` (a :class:`CompositionRule`: how repeated reports compose,
  read by :class:`mechopt.runtime.PrivacyBudget`), :meth:`Notion.ldp_equivalent` (the ε
  whose ε-LDP implies the notion: the baselines' budget), :attr:`Notion.per_input` (the
  problem-file fields sized by the inputs) — the facts the budget, the baselines and the
  parser read, so none of them names a notion;
* :meth:`Notion.check` — the exact check: the checker registered with the notion's class
  (the built-in ones live in :mod:`mechopt._verify`, which shares no code with the solver);
* :meth:`Notion.to_spec` — the problem-file notation (docs/formats.md).

One module per family — :mod:`._eldp` (E-LDP, LDP, WC-LIP, block, high-low, metric),
:mod:`._lip` (LIP, BP-LIP), :mod:`._uldp` — and :mod:`._registry`, the one list of names.
Notions are written over input *indices* ``0..k-1``; labels in user-facing
constructors are resolved by :meth:`Notion.bind` against the problem's inputs.
"""

from __future__ import annotations

from .._composition import ADDITIVE, CompositionRule
from ._base import ColumnConstraints, Notion
from ._eldp import ELDP, LDP, WCLIP, BlockLDP, HighLowLDP, MetricLDP
from ._lip import BPLIP, LIP, box_prior_vertices, lip_cone_rows, same_prior
from ._registry import REGISTRY, NotionType, notion_from_spec, notion_names, register_notion
from ._uldp import ULDP, uldp_roles

from .._verify import (check_block, check_bp_lip, check_eldp, check_high_low, check_ldp,  # noqa: E402
                       check_lip_notion, check_metric, check_uldp)

for _cls, _checker in ((ELDP, check_eldp), (LDP, check_ldp), (BlockLDP, check_block), (HighLowLDP, check_high_low),
                       (MetricLDP, check_metric), (LIP, check_lip_notion), (BPLIP, check_bp_lip), (WCLIP, check_ldp),
                       (ULDP, check_uldp)):
    register_notion(_cls, checker=_checker, builtin=True)

__all__ = ["ADDITIVE", "BPLIP", "CompositionRule", "ELDP", "LDP", "LIP", "REGISTRY", "ULDP", "WCLIP", "BlockLDP",
           "ColumnConstraints", "HighLowLDP", "MetricLDP", "Notion", "NotionType", "box_prior_vertices", "lip_cone_rows",
           "notion_from_spec", "notion_names", "register_notion", "same_prior", "uldp_roles"]
