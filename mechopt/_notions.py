"""Compatibility: the notions now live in :mod:`mechopt.notions` (one module per family)."""

from __future__ import annotations

from .notions import *  # noqa: F401,F403
from .notions import BPLIP, ELDP, LDP, LIP, ULDP, WCLIP, BlockLDP, HighLowLDP, MetricLDP, Notion  # noqa: F401
from .notions._base import ColumnConstraints, _eldp_rows, _eldp_scale, _empty_constraints, _ratio_budget  # noqa: F401
from .notions._eldp import _group_matrix, _resolve  # noqa: F401
from .notions._lip import _exact_sum_check, _lip_budget, _lip_constraints, box_prior_vertices  # noqa: F401
from .notions._registry import notion_from_spec  # noqa: F401
from .notions._uldp import uldp_roles  # noqa: F401
