"""A result without a mechanism still has a certificate: ``r.certificate.verified`` is safe to read."""

import cvxpy as cp

import mechopt
from mechopt._result import SolveResult


def test_infeasible_result_has_an_unverified_certificate_with_the_reason():
    m = mechopt.model([mechopt.LDP(1.0)], inputs=["a", "b"])
    # ε = 1 LDP forces Q[1][1] <= e·Q[0][1] = e·(1 − Q[0][0]) <= 0.03: no channel has both diagonals >= 0.99
    r = m.solve(cp.Minimize(0), [m.Q[0, 0] >= 0.99, m.Q[1, 1] >= 0.99])
    assert r.status == "infeasible" and not r.ok and r.mechanism is None
    assert r.certificate.verified is False and r.certificate.checks == ()
    assert r.certificate.method == "none" and "infeasible" in r.certificate.detail
    assert r.certificate.to_dict()["verified"] is False


def test_a_given_certificate_is_kept():
    r = mechopt.solve({"k": 2, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                       "objective": {"kind": "expected_loss"}}, quiet=True)
    assert r.status == "optimal" and r.certificate.verified and r.certificate.method == "exact"
    bare = SolveResult("error", None, None, None, None, None, message="boom")
    assert not bare.certificate.verified and bare.certificate.detail.endswith("error): boom")
