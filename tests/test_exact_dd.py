"""The exact double description (mechopt/solvers/free/_exact_dd.py), checked against facts it
does not compute itself: an independent enclosure of e^x (the verifier's, and decimal
arithmetic), exhaustive vertex enumeration in Fractions, the double description over every
prior vertex (another formulation of the box cone), scaling laws, and the labeled LP."""

import itertools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

import mechopt
from mechopt import BPLIP, ELDP, LDP, LIP, MetricLDP
from mechopt._exact import exact, exp_bounds
from mechopt.solvers.free._exact_dd import (_integer_row, _lip_rows, box_lip_rays, box_vertices, budget_factors,
                                       cone_rows, exact_inner_outer, expm1_bounds, ppl_cone_rays)
from mechopt.solvers.free._rays import eldp_rays


def _random_box(k, seed, width=0.15):
    rng = np.random.default_rng(seed)
    c = rng.dirichlet(np.ones(k))
    lo = np.round(np.clip(c - rng.uniform(0, width, k), 0, 1), 3)
    hi = np.round(np.clip(c + rng.uniform(0, width, k), 0, 1), 3)
    if lo.sum() > 1 or hi.sum() < 1:  # keep the box meeting the simplex
        lo, hi = np.zeros(k), np.ones(k)
    return [exact(v) for v in lo], [exact(v) for v in hi]


def _normalised(rays):
    return {tuple(Fraction(c, max(v)) for c in v) for v in rays}


def _in_cone(v, A):
    return min(v) >= 0 and all(sum(a * c for a, c in zip(row, v)) <= 0 for row in A)


def _box_rows(lower, upper, r):
    k = len(lower)
    rows = []
    for P in box_vertices(lower, upper):
        rows += [_integer_row(row.lhs, row.rhs, r) for row in _lip_rows(P, Fraction(0), k)]
    return rows


# -- enclosures of e^b ------------------------------------------------------------------


@pytest.mark.parametrize("x", ["1e-300", "1e-20", "1e-9", "0.001", "0.5", "1", "4.65", "30", "700"])
def test_expm1_bounds_enclose_decimal_exp(x):
    X = Fraction(x)
    lo, hi = expm1_bounds(X)
    assert lo <= hi and (hi - lo) <= hi * Fraction(1, 10**30)
    if X < Fraction(1, 10**15):
        # 100 decimal digits cannot see e^x - 1 here: x <= e^x - 1 <= x + x^2 (x <= 1)
        assert lo <= X + X * X and X <= hi
        return
    with localcontext() as ctx:
        ctx.prec = 100
        d = Decimal(X.numerator) / Decimal(X.denominator)
        e = d.exp() - 1
        ulp = Decimal(10) ** (e.adjusted() - 90)
        assert Fraction(e - ulp) <= hi and lo <= Fraction(e + ulp)
        assert Fraction(e - ulp) >= lo and Fraction(e + ulp) <= hi


@pytest.mark.parametrize("b", [0.0, 1e-300, 1e-12, 1e-9, 0.3, 1.0, 1.599, 4.65, 29.99, 30.0, 700.0])
def test_budget_factors_enclose_the_verifiers_exp(b):
    """Inner cone ⊆ true cone ⊆ outer cone, row by row: every row is lhs <= e^b rhs with
    rhs >= 0, so it suffices that r_lo <= e^b <= r_hi for the budget as the verifier reads
    it — checked against the verifier's own 60-digit enclosure."""
    r_lo, r_hi = budget_factors(b)
    x = exact(b)
    if 0 < b < 1e-15:
        # the verifier's 60 digits cannot see e^b - 1 here: b <= e^b - 1 <= b + b^2
        assert r_lo - 1 <= x and x + x * x <= r_hi - 1
    else:
        v_lo, v_hi = exp_bounds(x)
        assert r_lo <= v_lo and v_hi <= r_hi
    if b == 0:
        assert r_lo == r_hi == 1
    else:
        # tight: the cones differ by ~2^-47 max(1, b) of e^b - 1, not of e^b
        assert (r_hi - r_lo) <= Fraction(4, 2**48) * max(1, x) * (r_hi - 1)


# -- the box BP-LIP cone ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("eps", [0.0, 1e-9, 0.7, 3.0])
def test_box_rays_are_every_extreme_ray_by_exhaustive_enumeration(seed, eps):
    """k = 3: every extreme ray of {q >= 0 : rows} is the null space of two independent
    tight rows; try every pair of rows (vertex rows and q >= 0) in Fractions."""
    k = 3
    lower, upper = _random_box(k, seed) if seed else ([Fraction(0)] * 3, [Fraction(1)] * 3)
    r = budget_factors(eps)[0]
    A = _box_rows(lower, upper, r)
    A_all = A + [[-int(i == j) for i in range(k)] for j in range(k)]
    brute = set()
    for a, b in itertools.combinations(A_all, 2):
        v = (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
        for s in (v, tuple(-c for c in v)):
            if any(s) and _in_cone(s, A):
                brute.add(s)
    chains = box_lip_rays(lower, upper, r)
    assert all(_in_cone(v, A) for v in chains)
    assert _normalised(brute) <= _normalised(chains)
    assert len(brute) >= 1


@pytest.mark.parametrize("k,seed", [(4, 0), (4, 1), (5, 2), (5, 3), (6, 4)])
@pytest.mark.parametrize("eps", [1e-9, 0.4, 2.5])
def test_box_rays_match_the_double_description_over_every_prior_vertex(k, seed, eps):
    lower, upper = _random_box(k, seed)
    r = budget_factors(eps)[0]
    A = _box_rows(lower, upper, r)
    chains = box_lip_rays(lower, upper, r)
    assert all(_in_cone(v, A) for v in chains)
    assert _normalised(ppl_cone_rays(A, k)) <= _normalised(chains)
    # at most three distinct values per ray (the structure the enumerator relies on)
    assert max(len(set(v)) for v in chains) <= 3


@pytest.mark.parametrize("k,seed", [(3, 5), (4, 6), (4, 7), (5, 8)])
def test_box_rows_left_out_are_redundant(k, seed):
    """The box's rows that cannot be tight (box_rows) are left out: the same cone."""
    from mechopt.solvers.free._exact_dd import box_rows

    lower, upper = _random_box(k, seed)
    r = budget_factors(1.3)[0]
    kept = [_integer_row(row.lhs, row.rhs, r) for row in box_rows(lower, upper, Fraction(0))]
    full = _box_rows(lower, upper, r)
    assert len(kept) < len(full)
    assert _normalised(ppl_cone_rays(kept, k)) == _normalised(ppl_cone_rays(full, k))


def test_box_with_equal_bounds_is_lip():
    """A box with lower = upper = P is LIP for P: the two cones have the same rays."""
    P = [exact(v) for v in (0.1, 0.2, 0.3, 0.4)]
    r = budget_factors(1.2)[0]
    A = [_integer_row(row.lhs, row.rhs, r) for row in _lip_rows(P, Fraction(0), 4)]
    assert _normalised(ppl_cone_rays(A, 4)) <= _normalised(box_lip_rays(P, P, r))


# -- inner and outer cones of combinations ----------------------------------------------------


TINY = [4.658484086197886e-09, 0.0010190707075136956, 0.9617655249242053, 0.0332515481333344, 0.00396385157646258]
COMBOS = {
    "bp_lip_box+metric": [BPLIP(1.599, lower=[0.0, 0.122, 0.201, 0.059, 0.041], upper=[0.261, 0.272, 0.46, 0.283, 0.408]),
                          MetricLDP(2.381, edges=[[0, 1, 1.136], [0, 3, 1.604], [2, 4, 1.571], [3, 4, 1.482]])],
    "lip+ldp_tiny_prior": [LIP(0.8, prior=TINY), LDP(2.0)],
    "bp_lip_priors_eps1e-9": [BPLIP(1e-9, priors=[[0.2, 0.2, 0.2, 0.2, 0.2], TINY])],
    "bp_lip_priors_eps30": [BPLIP(30.0, priors=[[0.2, 0.2, 0.2, 0.2, 0.2], TINY])],
    "eldp+bp_lip_tiny": [ELDP([[0, math.inf, 2.086, 1.823, 2.167], [0.353, 0, math.inf, 1.018, 0.204],
                               [math.inf, 0.326, 0, 0, 0], [0.549, 1.002, 1.91, 0, math.inf],
                               [math.inf, 1.328, 0.154, 2.779, 0]]), BPLIP(1.644, priors=[TINY])],
}


@pytest.mark.parametrize("name", sorted(COMBOS))
def test_inner_rays_meet_every_true_row_and_lie_in_the_outer_cone(name):
    """Each inner ray, in exact integers, satisfies lhs·q <= lo(e^b) rhs·q with lo the
    verifier's lower enclosure of e^b — the notion as defined; and lies in the outer cone."""
    notions = [n.bind([str(i) for i in range(5)]) for n in COMBOS[name]]
    inner, outer = exact_inner_outer(notions, 5)
    assert len(inner) and len(outer)
    rows = cone_rows(notions, 5)
    for v in inner:
        for row in rows:
            lhs = sum(a * c for a, c in zip(row.lhs, v))
            rhs = sum(a * c for a, c in zip(row.rhs, v))
            assert lhs <= exp_bounds(row.budget)[0] * rhs
    A_out = [_integer_row(row.lhs, row.rhs, budget_factors(row.budget)[1]) for row in rows]
    assert all(_in_cone(v, A_out) for v in inner)


def test_metric_rays_come_from_the_edges_not_from_float_shortest_paths():
    """A metric's float shortest paths are additive only up to an ulp; their exact cone
    splits each ray into near-copies. From the edges (exact ε·w), the log-space and the
    q-space descriptions give the same rays, and as many as the distinct ones."""
    edges = [[0, 1, 1.3465310371786177], [1, 2, 0.6856160847749666], [2, 3, 0.27375234308515045],
             [3, 4, 0.2297497439513524], [4, 5, 1.6638864305604903], [3, 5, 0.20492930030626658],
             [1, 4, 1.5133798035738992]]
    n = MetricLDP(1.3, edges=edges).bind([str(i) for i in range(6)])
    from mechopt.solvers.free._exact_dd import eldp_budgets

    V = eldp_rays(eldp_budgets([n], 6), 6)
    inner, outer = exact_inner_outer([n], 6)
    assert V.shape[1] == len(inner) == len(outer)
    rounded = {tuple(c) for c in np.round((V / V.max(axis=0)).T, 8)}
    assert len(rounded) == V.shape[1]


# -- E-LDP in log space at tiny budgets --------------------------------------------------


@pytest.mark.parametrize("scale", [1e-12, 1e-9, 1e-6])
def test_log_space_rays_scale_with_the_budgets(scale):
    """{u : u[x] - u[x'] <= c E} = c {u : u[x] - u[x'] <= E}: the same vertices, scaled.
    pycddlib in floating point returned 1 of 14 rays for the LDP pattern below 1e-8."""
    E = np.array([[0.0, 1.0, 5.0, np.inf], [1.0, 0.0, np.inf, 2.0], [5.0, 3.0, 0.0, 1.0], [np.inf, 2.0, 1.0, 0.0]])

    def logs(V, c):  # each ray's log, top entry 0, divided by c (exp rounds at 1e-16: 2 digits at c = 1e-12)
        return {tuple(np.round(np.log(V[:, j] / V[:, j].max()) / c, 2) + 0.0) for j in range(V.shape[1])}

    ref, small = eldp_rays(E), eldp_rays(E * scale)
    assert small.shape == ref.shape
    assert logs(small, scale) == logs(ref, 1.0)
    assert eldp_rays(np.where(np.eye(4, dtype=bool), 0.0, scale)).shape[1] == 2**4 - 2


# -- solving ------------------------------------------------------------------------------------


def test_bp_lip_at_eps_1e9_is_solved_optimal():
    """Issue 14 reproducer: the float double description lost rays and fell back to the
    constant channel."""
    r = mechopt.solve({"k": 2, "outputs": "free",
                       "privacy": [{"notion": "bp_lip", "epsilon": 1e-9, "priors": [[0.5, 0.5], [0.3, 0.7]]}],
                       "objective": {"kind": "mutual_information"}}, quiet=True)
    assert r.status == "optimal", r.message
    assert r.certificate.verified and "fallback" not in r.stats
    # mutual information at eps = 1e-9 is of order eps^2: nothing measurable
    assert 0 <= r.objective <= 1e-15 and r.bound <= 1e-15


def _privacy(case, eps):
    lower, upper = [0.0, 0.1, 0.2, 0.05, 0.1], [0.3, 0.35, 0.5, 0.25, 0.4]
    return {"box": [{"notion": "bp_lip", "epsilon": eps, "lower": lower, "upper": upper}],
            "box+metric": [{"notion": "bp_lip", "epsilon": eps, "lower": lower, "upper": upper},
                           {"notion": "metric", "epsilon": eps, "edges": [[0, 1, 1], [1, 2, 1], [2, 3, 2], [3, 4, 1]]}],
            "lip+ldp": [{"notion": "lip", "epsilon": eps, "prior": [5e-9, 0.2, 0.3, 0.25, 0.249999995]},
                        {"notion": "ldp", "epsilon": 2 * eps}]}[case]


@pytest.mark.parametrize("eps", [1e-9, 0.6, 3.0])
@pytest.mark.parametrize("case", ["box", "box+metric", "lip+ldp"])
def test_free_bayes_risk_equals_the_labeled_lp(case, eps):
    """With free outputs the Bayes risk optimum equals the labeled LP's expected-loss
    optimum with outputs = inputs (merge the outputs that lead to the same guess); the
    labeled LP writes the rows from the prior vertices in floats — another path."""
    k = 5
    privacy = _privacy(case, eps)
    prior = [0.3, 0.1, 0.25, 0.2, 0.15]
    free = mechopt.solve({"k": k, "outputs": "free", "privacy": privacy,
                          "objective": {"kind": "bayes_risk", "loss": "hamming", "prior": prior}}, quiet=True)
    labeled = mechopt.solve({"k": k, "outputs": "inputs", "privacy": privacy,
                             "objective": {"kind": "expected_loss", "loss": "hamming", "prior": prior}}, quiet=True)
    assert free.status == "optimal", free.message
    assert free.certificate.verified
    assert free.bound <= free.objective <= free.bound + 1e-9
    assert labeled.bound is not None
    assert free.objective == pytest.approx(labeled.objective, abs=1e-7)
    # each proven bound is below the other's verified channel
    assert free.bound <= labeled.objective + 1e-12 and labeled.bound <= free.objective + 1e-12


@pytest.mark.parametrize("case", ["box", "box+metric", "lip+ldp"])
def test_free_outputs_at_eps_30_are_optimal(case):
    """At ε = 30 every input can be identified up to ~k e^-30 (a column per input, e^-30
    elsewhere, meets each notion): the proven optimum is that small."""
    r = mechopt.solve({"k": 5, "outputs": "free", "privacy": _privacy(case, 30.0),
                       "objective": {"kind": "bayes_risk", "loss": "hamming", "prior": [0.3, 0.1, 0.25, 0.2, 0.15]}},
                      quiet=True)
    assert r.status == "optimal", r.message
    assert r.certificate.verified and 0 <= r.bound <= r.objective <= 5 * math.exp(-30) * 5


def test_eldp_free_outputs_at_budgets_of_1e9_are_optimal():
    """Float cdd kept 1 of the 14 log-space rays here: the constant-channel fallback."""
    E = [[0.0, 1e-9, 5e-9, "inf"], [1e-9, 0.0, "inf", 2e-9], [5e-9, 3e-9, 0.0, 1e-9], ["inf", 2e-9, 1e-9, 0.0]]
    r = mechopt.solve({"k": 4, "outputs": "free", "privacy": [{"notion": "eldp", "matrix": E}],
                       "objective": {"kind": "histogram_mse"}}, quiet=True)
    assert r.status == "optimal", r.message
    assert r.certificate.verified and r.stats["rays"] == eldp_rays(np.array(E, dtype=float)).shape[1] > 4
