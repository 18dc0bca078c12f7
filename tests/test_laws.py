"""Laws that must hold for every channel and prior (property tests, STYLE §12).

Random channels have k = 2..5 inputs and m = 2..5 outputs with strictly positive
entries; random priors have full support. Every bound is computed here, from the
papers' statements, not from mechopt:

* Jiang, Li, Tandon (seed 000), Thm 1: ε-LDP ⇒ ε-LIP for every prior, ε-LIP ⇒ 2ε-LDP;
  Prop. 1: ε-LIP ⇒ ε-MIP, i.e. I(X; Y) ≤ ε (nats).
* Jiang, Seif, Tandon, Li (seed 003), Thm 1: ε-LDP ⇒ ln(P_min + e^ε (1 − P_min))-LIP;
  Prop. 1: ε-LIP ⇒ min{2ε, ln((e^ε − 1 + P_min) / P_min)}-LDP.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mechopt import BPLIP, ELDP, LDP, LIP, ULDP, BlockLDP, HighLowLDP, MetricLDP, verify
from mechopt._notions import uldp_roles

from _exact_reference import DEN, decimal_channels, eldp_holds, fr, lip_holds

TOL = 1e-12
LAWS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- strategies ------------------------------------------------------------------------


def _positive(n):
    return st.lists(st.floats(0.02, 1.0, allow_nan=False, allow_infinity=False), min_size=n, max_size=n)


@st.composite
def channels(draw, k=None, m=None):
    k = k if k is not None else draw(st.integers(2, 5))
    m = m if m is not None else draw(st.integers(2, 5))
    W = np.array([draw(_positive(m)) for _ in range(k)])
    return W / W.sum(axis=1, keepdims=True)


@st.composite
def priors(draw, k):
    w = np.array(draw(_positive(k)))
    return w / w.sum()


@st.composite
def channel_and_priors(draw, n_priors=1):
    Q = draw(channels())
    ps = [draw(priors(Q.shape[0])) for _ in range(n_priors)]
    return Q, ps


# -- independent measures ---------------------------------------------------------------


def ldp_budget(Q):
    """max over columns of ln(max / min), straight from the definition."""
    return max(math.log(Q[:, y].max() / Q[:, y].min()) for y in range(Q.shape[1]))


def lip_budget(Q, P):
    """max over x, y of |ln(Q[x, y] / P·q_y)| (000 Def. 3 with Bayes' rule)."""
    py = P @ Q
    return max(abs(math.log(Q[x, y] / py[y])) for x in range(Q.shape[0]) for y in range(Q.shape[1]))


def mutual_information(Q, P):
    py = P @ Q
    return sum(P[x] * Q[x, y] * math.log(Q[x, y] / py[y]) for x in range(Q.shape[0]) for y in range(Q.shape[1]))


# -- LIP and LDP --------------------------------------------------------------------------


@LAWS
@given(channel_and_priors())
def test_ldp_implies_lip_for_every_prior(data):
    """000 Thm 1: an ε-LDP channel is ε-LIP whatever the prior."""
    Q, (P,) = data
    eps_ldp = LDP(1.0).achieved(Q)
    assert eps_ldp == pytest.approx(ldp_budget(Q), rel=1e-12, abs=1e-15)
    assert LIP(1.0, prior=P).achieved(Q) <= eps_ldp + TOL
    # and exactly: claim the LDP budget (rounded up), the same ε-LIP claim verifies
    eps = eps_ldp + 1e-9
    assert verify(Q, [LDP(eps)]).verified
    assert verify(Q, [LIP(eps, prior=P)]).verified


@LAWS
@given(channel_and_priors())
def test_lip_implies_2eps_ldp(data):
    """000 Thm 1 and 003 Prop. 1: ε-LIP ⇒ min{2ε, ln((e^ε − 1 + P_min)/P_min)}-LDP."""
    Q, (P,) = data
    eps = LIP(1.0, prior=P).achieved(Q)
    assert eps == pytest.approx(lip_budget(Q, P), rel=1e-12, abs=1e-15)
    bound = min(2 * eps, math.log((math.exp(eps) - 1 + P.min()) / P.min()))
    assert LDP(1.0).achieved(Q) <= bound + TOL


@LAWS
@given(channel_and_priors())
def test_ldp_implies_pmin_lip(data):
    """003 Thm 1 (converse part): ε-LDP ⇒ ln(P_min + e^ε (1 − P_min))-LIP."""
    Q, (P,) = data
    eps = LDP(1.0).achieved(Q)
    p_min = P.min()
    bound = math.log(p_min + math.exp(eps) * (1 - p_min))
    assert bound <= eps + TOL  # the theorem tightens 000 Thm 1
    assert LIP(1.0, prior=P).achieved(Q) <= bound + TOL


@LAWS
@given(channel_and_priors())
def test_lip_implies_mutual_information_privacy(data):
    """000 Prop. 1: ε-LIP ⇒ ε-MIP, i.e. I(X; Y) ≤ ε (both in nats)."""
    Q, (P,) = data
    mi = mutual_information(Q, P)
    assert mi >= -TOL
    assert mi <= LIP(1.0, prior=P).achieved(Q) + TOL


@LAWS
@given(channel_and_priors(n_priors=3))
def test_bp_lip_with_several_priors_is_the_max(data):
    """BP-LIP over a finite set of priors is LIP for each: the budget is the max."""
    Q, ps = data
    each = [LIP(1.0, prior=P).achieved(Q) for P in ps]
    n = BPLIP(1.0, priors=[P.tolist() for P in ps])
    assert n.achieved(Q) == pytest.approx(max(each), rel=1e-12, abs=1e-15)
    assert max(each) == pytest.approx(max(lip_budget(Q, P) for P in ps), rel=1e-12, abs=1e-15)
    # the exact verdicts: BP-LIP holds iff every LIP holds, on both sides of the budget
    for eps in (max(each) * (1 + 1e-6) + 1e-9, max(each) * (1 - 1e-6), min(each) * (1 + 1e-6) + 1e-9):
        if eps < 1e-12:
            continue  # sub-resolution budgets need exactly-summing priors (tests/test_bad_input.py)
        bp = verify(Q, [BPLIP(eps, priors=[P.tolist() for P in ps])]).verified
        assert bp == all(verify(Q, [LIP(eps, prior=P)]).verified for P in ps)


# -- the E-LDP family ---------------------------------------------------------------------------


@LAWS
@given(channels(), st.floats(0.05, 3.0))
def test_uniform_E_is_ldp(Q, eps):
    """An E matrix with every off-diagonal entry ε is ε-LDP: same budget, same verdicts."""
    k = Q.shape[0]
    E = np.full((k, k), eps)
    np.fill_diagonal(E, 0.0)
    n = ELDP(E)
    achieved = LDP(eps).achieved(Q)
    assert n.achieved(Q) * eps == pytest.approx(achieved, rel=1e-9, abs=1e-15)
    assert n.eldp_matrix(k).tolist() == E.tolist()
    assert LDP(eps).eldp_matrix(k).tolist() == E.tolist()
    # exact verdicts agree for the claimed ε and right at the achieved budget
    assert verify(Q, [n]).verified == verify(Q, [LDP(eps)]).verified
    for claim in (achieved, achieved * (1 + 1e-12), achieved * (1 - 1e-12)):
        if claim <= 0:
            continue
        Ec = np.full((k, k), claim)
        np.fill_diagonal(Ec, 0.0)
        assert verify(Q, [ELDP(Ec)]).verified == verify(Q, [LDP(claim)]).verified


@st.composite
def weighted_graphs(draw):
    k = draw(st.integers(2, 7))
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs)))
    g = nx.Graph()
    g.add_nodes_from(range(k))
    for a, b in chosen:
        g.add_edge(a, b, weight=draw(st.floats(0.0, 5.0)))
    return g


@LAWS
@given(weighted_graphs(), st.floats(0.01, 2.0))
def test_metric_E_is_eps_times_shortest_path(g, eps):
    """Metric privacy: E = ε · d_G, d_G from networkx's Floyd–Warshall (inf if disconnected)."""
    k = g.number_of_nodes()
    labels = [str(i) for i in range(k)]
    D = nx.floyd_warshall_numpy(g, nodelist=range(k), weight="weight")
    expected = np.where(np.isinf(D), np.inf, eps * D)
    np.fill_diagonal(expected, 0.0)
    from_graph = MetricLDP(eps, graph=g).bind(labels).eldp_matrix(k)
    edges = [[str(a), str(b), d["weight"]] for a, b, d in g.edges(data=True)]
    from_edges = MetricLDP(eps, edges=edges).bind(labels).eldp_matrix(k)
    for E in (from_graph, from_edges):
        assert np.array_equal(np.isinf(E), np.isinf(expected))
        fin = np.isfinite(expected)
        np.testing.assert_allclose(E[fin], expected[fin], rtol=1e-12, atol=1e-15)


@LAWS
@given(channels(), st.data())
def test_metric_verdict_matches_its_E_matrix(Q, data):
    """Checking a graph's edges only (the verifier's shortcut) decides the same as all pairs."""
    k = Q.shape[0]
    w = data.draw(st.lists(st.floats(0.2, 3.0), min_size=k - 1, max_size=k - 1))
    path = [[str(i), str(i + 1), w[i]] for i in range(k - 1)]  # a path graph: connected
    labels = [str(i) for i in range(k)]
    scale = MetricLDP(1.0, edges=path).bind(labels).achieved(Q)
    for eps in (scale * (1 + 1e-6) + 1e-9, scale * (1 - 1e-6)):
        metric = MetricLDP(eps, edges=path).bind(labels)
        E = metric.eldp_matrix(k)
        assert verify(Q, [metric]).verified == verify(Q, [ELDP(E)]).verified
        # independent all-pairs check in floats (the margin 1e-6 keeps it decisive)
        ok = all(Q[x, y] <= math.exp(E[x, xp]) * Q[xp, y]
                 for x in range(k) for xp in range(k) for y in range(Q.shape[1]) if x != xp)
        assert verify(Q, [metric]).verified == ok


# -- ULDP ---------------------------------------------------------------------------------------


@st.composite
def uldp_channels(draw):
    """A ULDP channel: protected columns for everyone plus invertible columns of non-sensitive inputs."""
    k = draw(st.integers(2, 5))
    sensitive = draw(st.lists(st.integers(0, k - 1), unique=True, min_size=1, max_size=k - 1))
    mp = draw(st.integers(1, 4))
    W = np.array([draw(_positive(mp)) for _ in range(k)])
    inv_of = [x for x in range(k) if x not in sensitive]
    cols = [W]
    for x in inv_of:
        c = np.zeros((k, 1))
        c[x, 0] = draw(st.floats(0.05, 2.0))
        cols.append(c)
    Q = np.hstack(cols)
    Q = Q / Q.sum(axis=1, keepdims=True)
    return Q, sensitive, mp


def _split(Q, y, t):
    return np.hstack([Q[:, :y], t * Q[:, [y]], (1 - t) * Q[:, [y]], Q[:, y + 1:]])


@LAWS
@given(uldp_channels(), st.floats(0.05, 0.95), st.data())
def test_uldp_survives_splitting_a_column(chan, t, data):
    Q, sensitive, mp = chan
    n0 = ULDP(1.0, sensitive=sensitive)
    eps = n0.achieved(Q) * (1 + 1e-6) + 1e-9
    notion = ULDP(eps, sensitive=sensitive)
    roles = uldp_roles(Q, sensitive)
    assert roles[:mp] == ["protected"] * mp and roles[mp:] == ["invertible"] * (Q.shape[1] - mp)
    assert verify(Q, [notion]).verified
    # the budget is the LDP budget of the protected columns alone
    assert n0.achieved(Q) == pytest.approx(ldp_budget(Q[:, :mp]), rel=1e-12, abs=1e-15)
    # split a protected column
    yp = data.draw(st.integers(0, mp - 1))
    Qp = _split(Q, yp, t)
    assert uldp_roles(Qp, sensitive).count("protected") == mp + 1
    assert verify(Qp, [notion]).verified
    # split an invertible column: both halves stay invertible
    if Q.shape[1] > mp:
        yi = data.draw(st.integers(mp, Q.shape[1] - 1))
        Qi = _split(Q, yi, t)
        assert uldp_roles(Qi, sensitive).count("invertible") == Q.shape[1] - mp + 1
        assert verify(Qi, [notion]).verified


def test_uldp_rejects_an_invertible_column_at_a_sensitive_input():
    # column 2 reveals input 0 exactly; input 0 is sensitive, so it is "protected" and fails LDP
    Q = np.array([[0.25, 0.25, 0.5], [0.5, 0.5, 0.0]])
    assert verify(Q, [ULDP(1.0, sensitive=[1])]).verified
    cert = verify(Q, [ULDP(1.0, sensitive=[0])])
    assert not cert.verified and "column 2" in cert.detail


# -- the verifier against a brute force in exact arithmetic ------------------------------------



def exp80(eps: float) -> Fraction:
    with localcontext() as ctx:
        ctx.prec = 80
        return Fraction(Decimal(repr(float(eps))).exp())


def brute_eldp(Q, E) -> bool:
    return eldp_holds(Q, lambda x, xp: None if math.isinf(E[x][xp]) else exp80(E[x][xp]))


def brute_lip(Q, P, eps, delta=0.0) -> bool:
    return lip_holds(Q, [fr(p) for p in P], exp80(eps), fr(delta))


def brute_rows(Q) -> bool:
    return all(fr(v) >= 0 for v in Q.ravel()) and all(
        abs(sum((fr(v) for v in row), Fraction(0)) - 1) <= Fraction(1, 10**12) for row in Q)


@st.composite
def near_budgets(draw, achieved):
    """A claim close to the achieved budget: rounded to a few digits, so either side of it."""
    if not math.isfinite(achieved) or achieved <= 0:
        return draw(st.floats(0.05, 3.0))
    digits = draw(st.integers(1, 15))
    return max(round(achieved, digits), 1e-3)


@pytest.mark.parametrize("kind", ["ldp", "eldp", "high_low", "block", "lip"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(Q=decimal_channels(), data=st.data())
def test_verify_agrees_with_exact_brute_force(kind, Q, data):
    """Claims near the achieved budget (rounded to 1..15 digits) land on both sides of it."""
    k, m = Q.shape
    idx = list(range(k))
    if kind == "ldp":
        eps = data.draw(near_budgets(LDP(1.0).achieved(Q)))
        notion = LDP(eps)
        expected = brute_eldp(Q, [[0 if a == b else eps for b in idx] for a in idx])
    elif kind == "eldp":
        E = [[0.0 if a == b else data.draw(st.sampled_from([math.inf, 0.3, 1.0, 2.5])) for b in idx] for a in idx]
        # put one entry right at the budget of its pair, so the exact path decides it
        a, b = data.draw(st.sampled_from([(a, b) for a in idx for b in idx if a != b]))
        ratios = [Q[a, y] / Q[b, y] for y in range(m) if Q[b, y] > 0 and Q[a, y] > 0]
        if ratios and max(ratios) > 1:
            E[a][b] = data.draw(near_budgets(math.log(max(ratios))))
        notion = ELDP(E)
        expected = brute_eldp(Q, E)
    elif kind == "high_low":
        sens = data.draw(st.lists(st.sampled_from(idx), unique=True, min_size=1, max_size=k))
        eps = data.draw(near_budgets(HighLowLDP(1.0, sensitive=sens).achieved(Q)))
        notion = HighLowLDP(eps, sensitive=sens)
        expected = brute_eldp(Q, [[0 if a == b else (eps if a in sens else math.inf) for b in idx] for a in idx])
    elif kind == "block":
        cut = data.draw(st.integers(1, k - 1))
        blocks = [idx[:cut], idx[cut:]]
        eps = data.draw(near_budgets(BlockLDP(1.0, blocks=blocks).achieved(Q)))
        notion = BlockLDP(eps, blocks=blocks)
        same = {(a, b) for blk in blocks for a in blk for b in blk}
        expected = brute_eldp(Q, [[0 if a == b else (eps if (a, b) in same else math.inf) for b in idx] for a in idx])
    else:
        cuts = sorted(data.draw(st.lists(st.integers(1, DEN - 1), min_size=k - 1, max_size=k - 1, unique=True)))
        P = np.diff([0, *cuts, DEN]) / DEN
        eps = data.draw(near_budgets(LIP(1.0, prior=P).achieved(Q)))
        notion = LIP(eps, prior=P)
        expected = brute_lip(Q, P, eps)
    cert = verify(Q, [notion])
    event("holds" if expected else "violated")
    assert cert.checks[0].ok == expected, (kind, Q.tolist(), notion)
    assert cert.verified == (expected and brute_rows(Q))
