"""mechopt — optimal local privacy mechanisms, verified exactly.

State a context-aware privacy requirement and a utility; get the provably optimal
channel, checked exactly, exported as a JSON mechanism.

>>> import mechopt
>>> r = mechopt.solve({"k": 2, "outputs": "inputs",
...                    "privacy": [{"notion": "ldp", "epsilon": 1.0}],
...                    "objective": {"kind": "expected_loss"}})
>>> r.status
'optimal'

Public names are loaded lazily (PEP 562), so ``import mechopt.client`` on a device
without numpy imports nothing but the standard library (and, to check a format
version 2 digest, the pure-Python ``rfc8785``).

The file formats are specified in ``docs/formats.md``, the command line in
``docs/cli.md``, the model in ``docs/model.md``.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    # errors
    "MechoptError": "mechopt._errors",
    "InputError": "mechopt._errors",
    "InputTypeError": "mechopt._errors",
    "VerificationError": "mechopt._errors",
    "SolverError": "mechopt._errors",
    "NotIdentifiableError": "mechopt._identifiability",
    "IdentifiabilityWarning": "mechopt._identifiability",
    # notions
    "Notion": "mechopt.notions",
    "ELDP": "mechopt.notions",
    "LDP": "mechopt.notions",
    "BlockLDP": "mechopt.notions",
    "HighLowLDP": "mechopt.notions",
    "MetricLDP": "mechopt.notions",
    "LIP": "mechopt.notions",
    "BPLIP": "mechopt.notions",
    "WCLIP": "mechopt.notions",
    "ULDP": "mechopt.notions",
    "notion_from_spec": "mechopt.notions",
    "register_notion": "mechopt.notions",
    # problems and objectives
    "Problem": "mechopt._problem",
    "Objective": "mechopt.objectives",
    "ObjectiveType": "mechopt.objectives",
    "register_objective": "mechopt.objectives",
    "load_problem": "mechopt._problem",
    "evaluate": "mechopt.objectives",
    "estimation_risk": "mechopt.objectives",
    # verification, leakage, files
    "verify": "mechopt._verify",
    "Certificate": "mechopt._verify",
    "Check": "mechopt._verify",
    "leakage_report": "mechopt._leakage",
    "identifiability": "mechopt._identifiability",
    "Mechanism": "mechopt._mechanism",
    "mechanism_schema": "mechopt._mechanism",
    # solving
    "solve": "mechopt._solve",
    "SolveResult": "mechopt._result",
    "solve_many": "mechopt._batch",
    "model": "mechopt._model",
    "ChannelModel": "mechopt._model",
    "solve_sublinear": "mechopt._sublinear",
    "closed_form_report": "mechopt._closed_form_report",
    "baselines": "mechopt._baselines",
    "FamilyMechanism": "mechopt.families",
    # figures
    "tradeoff": "mechopt._plots",
    "tradeoff_plot": "mechopt._plots",
    "plot_mechanism": "mechopt._plots",
    "smallest_epsilon": "mechopt._target_error",
    # deployment (client: standard library only)
    "Sampler": "mechopt.client",
    "load_document": "mechopt.client",
    "simulate_reports": "mechopt.runtime",
    "estimate_inversion": "mechopt.runtime",
    "estimate_projected": "mechopt.runtime",
    "estimate_em": "mechopt.runtime",
    "estimate": "mechopt.runtime",
    "Estimate": "mechopt.runtime",
    "mmse_aggregate": "mechopt.runtime",
    "mmse_histogram": "mechopt.runtime",
    "variance_report": "mechopt.runtime",
    "PrivacyBudget": "mechopt.runtime",
    "BudgetExceededError": "mechopt.runtime",
    "PersonalizedULDP": "mechopt.runtime",
    "memoization_savings": "mechopt.runtime",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mechopt' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
