"""``mechopt report``: one self-contained page; its numbers against closed forms; Chromium renders it.

The Chromium part drives ``clients/js/test-browser/report-check.mjs`` (playwright-core, as the
JS client's browser tests do); it is skipped without node, Chromium or ``npm ci`` in clients/js.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import mechopt
from mechopt.cli import main
from mechopt.report import report_html, report_sections, write_report
from mechopt.report import _sections
from mechopt.report._sections import mmse_per_input

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "clients" / "vectors" / "mechanisms" / "solved_web_high_low_v2.json"
QUICKSTART = ROOT / "clients" / "vectors" / "mechanisms" / "solved_quickstart_v2.json"
SECTIONS = ["channel", "certificate", "error", "baselines", "shuffle", "pld"]
CHECK = ROOT / "clients" / "js" / "test-browser" / "report-check.mjs"
NODE = shutil.which("node")
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
PLAYWRIGHT = ROOT / "clients" / "js" / "node_modules" / "playwright-core"


def krr(k: int, eps: float) -> np.ndarray:
    e = math.exp(eps)
    return (np.ones((k, k)) + (e - 1) * np.eye(k)) / (e + k - 1)


def krr_mechanism(k: int, eps: float, path: Path) -> Path:
    prior = [1.0 / k] * k  # the claim 1e-9 above ε: the float channel sits on its boundary
    m = mechopt.Mechanism.from_channel(krr(k, eps), [{"notion": "ldp", "epsilon": eps + 1e-9}],
                                       objective={"kind": "expected_loss", "value": (k - 1) / (math.exp(eps) + k - 1),
                                                  "bound": None, "gap": None, "prior": prior, "loss": "hamming"})
    m.save(path)
    return path


#: the pages drawn: the quickstart (ε0 finite: every figure) and the web channel (ε0 infinite:
#: the central ε is infinite at every n, the shuffle section says so and draws nothing)
PAGES = {"quickstart": (QUICKSTART, {"fig-heatmap", "fig-error", "fig-baselines", "fig-shuffle", "fig-pld"}),
         "web": (WEB, {"fig-heatmap", "fig-error", "fig-baselines", "fig-pld"})}


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for name, (mech, _) in PAGES.items():
        out[name] = tmp_path_factory.mktemp("report") / f"{name}.html"
        write_report(mech, out[name], n=1000)
    return out


def figures(html: str) -> dict[str, bytes]:
    return {m.group(1): base64.b64decode(m.group(2))
            for m in re.finditer(r'<img id="([^"]+)" src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_page_is_self_contained_and_has_every_section_and_figure(pages, name):
    import matplotlib.image as mpimg

    html = pages[name].read_text(encoding="utf-8")
    for bad in ("http://", "https://", 'src="//', "<script", "<link", "url(", "@import"):
        assert bad not in html.lower(), bad
    assert re.findall(r'<section id="([^"]+)"', html) == SECTIONS
    figs = figures(html)
    assert set(figs) == PAGES[name][1]
    assert len(re.findall(r"<img ", html)) == len(figs)  # every image is one of them: inline PNG
    for name, png in figs.items():
        img = mpimg.imread(io.BytesIO(png), format="png")
        assert img.shape[0] > 100 and img.shape[1] > 100, name
        assert img[..., :3].std() > 0.01, f"{name} is blank"


def test_certificate_section_reports_the_file(pages):
    doc = json.loads(WEB.read_text())
    html = pages["web"].read_text(encoding="utf-8")
    assert doc["sha256"] in html and "verified exactly" in html
    for p in doc["privacy"]:
        assert p["notion"] in html
    assert "The central ε is infinite at every n" in html  # ε0 = ∞: a report can rule an input out


def test_expected_error_is_the_krr_closed_form(tmp_path):
    """k-RR, uniform p: p̂_x = (c_x/n - q)/(p - q) with c_x ~ Bin(n, π), π = q + (p - q)/k, so
    Var p̂_x = π(1 - π)/(n (p - q)^2) (the inversion estimate lies on the simplex's hull: it is the ML one)."""
    k, eps, n = 10, 0.5, 5000
    e = math.exp(eps)
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    pi = q + (p - q) / k
    var = pi * (1 - pi) / (n * (p - q) ** 2)
    sec = _sections.expected_error(mechopt.Mechanism.load(krr_mechanism(k, eps, tmp_path / "krr.json")), n)
    assert sec.data["method"] == "em"
    assert sec.data["expected_squared_error"] == pytest.approx(k * var, rel=1e-9)
    assert sec.data["expected_squared_error"] * n == pytest.approx(242.5, abs=0.05)  # docs/model.md
    assert np.allclose(sec.data["standard_errors"], math.sqrt(var), rtol=1e-9)
    lo, hi = (float(v) for v in sec.rows[0][3].strip("[]").split(","))
    assert hi - lo == pytest.approx(2 * 1.959964 * math.sqrt(var), abs=2e-4)


def test_expected_error_matches_monte_carlo_em(tmp_path):
    """The predicted E‖p̂ − p‖² against 300 simulated collections of n reports (EM estimates)."""
    k, eps, n, runs = 4, 1.0, 4000, 300
    Q = krr(k, eps)
    sec = _sections.expected_error(mechopt.Mechanism.load(krr_mechanism(k, eps, tmp_path / "krr.json")), n)
    rng = np.random.default_rng(11)
    p = np.full(k, 1 / k)
    errs = []
    for _ in range(runs):
        counts = rng.multinomial(n, p @ Q)
        est = mechopt.runtime.estimate_em(Q, counts)
        errs.append(float(np.sum((est - p) ** 2)))
    errs = np.array(errs)
    # the mean of 300 squared errors: 5 standard errors of the mean (plus 5% for the first-order formula)
    assert abs(errs.mean() - sec.data["expected_squared_error"]) < 5 * errs.std() / math.sqrt(runs) + \
        0.05 * sec.data["expected_squared_error"]


def test_not_identifiable_channel_gets_the_bayesian_error():
    """Two identical rows: no frequentist estimate; the MMSE per-input errors sum to eq. 31's risk."""
    Q = np.array([[0.5, 0.5], [0.5, 0.5], [0.2, 0.8]])
    m = mechopt.Mechanism.from_channel(Q, [{"notion": "ldp", "epsilon": 1.0}])
    sec = _sections.expected_error(m, 100)
    assert sec.data["method"] == "mmse"
    prior = np.full(3, 1 / 3)
    assert sec.data["expected_squared_error"] * 100 == pytest.approx(mechopt.runtime.mmse_histogram_risk(Q, prior))
    # by hand for input 2: P = 1/3, columns' mass 0.4 and 0.6: 1/3 - (0.2/3)^2/0.4 - (0.8/3)^2/0.6
    r2 = 1 / 3 - (0.2 / 3) ** 2 / 0.4 - (0.8 / 3) ** 2 / 0.6
    assert mmse_per_input(Q, prior)[2] == pytest.approx(r2)


def test_baselines_put_krr_next_to_itself(tmp_path):
    """A k-RR file under uniform hamming loss: the k-RR baseline scores the same (k-1)/(e^ε+k-1)."""
    k, eps = 5, 1.0
    mech = mechopt.Mechanism.load(krr_mechanism(k, eps, tmp_path / "krr.json"))
    sec = _sections.baselines(mech, _sections.problem_of(mech))
    row = next(r for r in sec.data["rows"] if r["name"] == "k-RR")
    assert row["objective"] == pytest.approx((k - 1) / (math.exp(eps) + k - 1), rel=1e-8)
    assert row["ratio"] == pytest.approx(1.0, rel=1e-8)
    assert sec.figures and sec.figures[0].id == "fig-baselines"


def test_shuffle_and_pld_sections_on_krr(tmp_path):
    """k-RR, k = 8, ε = 1: ε_central(10⁴, δ = 1e-6) ≤ 0.2 and falling with n, never above the closed form;
    the worst pair's loss takes ε (mass p), -ε (mass q) and 0 (mass (k-2) q); one collection costs ε."""
    k, eps = 8, 1.0
    e = math.exp(eps)
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    secs = {s.id: s for s in report_sections(krr_mechanism(k, eps, tmp_path / "krr.json"), n=10_000)}
    sh = secs["shuffle"].data
    assert sh["n"] == [10, 100, 1000, 10_000]
    assert sh["numeric"][-1] <= 0.2
    assert all(a > b for a, b in zip(sh["numeric"], sh["numeric"][1:]))
    assert all(a <= c + 1e-12 for a, c in zip(sh["numeric"], sh["closed_form"]))
    pl = secs["pld"].data
    assert np.allclose(pl["losses"], [-eps, 0.0, eps], atol=1e-9)
    assert np.allclose(pl["probs"], [q, (k - 2) * q, p], rtol=1e-12) and pl["inf_mass"] == 0
    assert pl["epsilon"] == pytest.approx(eps, abs=2e-4)  # dp_accounting's grid: 1e-4, rounded up
    assert pl["composed"][0] == pytest.approx(eps, abs=2e-4) and pl["memoized"] == pytest.approx(eps, abs=2e-4)
    assert all(c <= t * eps + 1e-3 for c, t in zip(pl["composed"], (1, 2, 5, 10)))  # basic composition
    assert [f.id for f in secs["shuffle"].figures] == ["fig-shuffle"] and secs["pld"].figures[0].id == "fig-pld"


def test_without_accounting_the_sections_say_so(monkeypatch):
    from mechopt.report import _accounting

    monkeypatch.setattr(_accounting, "_accounting", lambda: None)
    m = mechopt.Mechanism.from_channel([[0.75, 0.25], [0.25, 0.75]], [{"notion": "ldp", "epsilon": 1.1}])
    html = report_html(m, n=50)
    assert html.count("shuffle accounting unavailable") == 2
    assert 'id="fig-heatmap"' in html and 'id="fig-shuffle"' not in html


def test_report_of_a_channel_without_objective_says_so():
    m = mechopt.Mechanism.from_channel([[0.75, 0.25], [0.25, 0.75]], [{"notion": "ldp", "epsilon": 1.1}])
    html = report_html(m, n=50)
    assert "no objective recorded" in html and "nothing to be scored on" in html
    assert f"sha256 {m.to_dict()['sha256']} — of the RFC 8785 canonical form of this mechanism" in html


def test_cli_report_writes_the_page_and_refuses_bad_input(tmp_path, capsys):
    out = tmp_path / "r.html"
    small = krr_mechanism(3, 1.0, tmp_path / "krr.json")
    assert main(["report", str(small), "-o", str(out), "--n", "500"]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    capsys.readouterr()
    assert main(["report", str(WEB), "-o", str(out), "--n", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["mechopt: n: must be >= 2, got 1"]
    assert main(["report", str(WEB), "-o", str(out), "--delta", "0"]) == 2
    assert capsys.readouterr().err.strip() == "mechopt: delta: must lie in (0, 1), got 0.0"
    assert main(["report", str(WEB), "-o", str(out), "--problem", str(ROOT / "problems" / "quickstart.yaml")]) == 2
    assert capsys.readouterr().err.startswith("mechopt: problem: the problem's inputs differ")
    from mechopt.families import FamilyMechanism, HadamardFamily
    from mechopt.solvers.design._route import ratio_below

    family = tmp_path / "hr.json"
    FamilyMechanism.from_family(HadamardFamily.spec(ratio_below(1.0), ["0", "1", "2"]),
                                [{"notion": "high_low", "epsilon": 1.0, "sensitive": ["0", "1"]}],
                                inputs=[str(i) for i in range(6)]).save(family)
    assert main(["report", str(family), "-o", str(out)]) == 2
    assert "a family file has no matrix" in capsys.readouterr().err


browser = pytest.mark.skipif(NODE is None or not Path(CHROMIUM).exists() or not PLAYWRIGHT.exists(),
                             reason="needs node, Chromium and 'npm ci' in clients/js")


def chromium_check(page: Path) -> dict:
    env = dict(os.environ, CHROMIUM_PATH=CHROMIUM)
    proc = subprocess.run([NODE, str(CHECK), str(page)], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@browser
def test_chromium_renders_every_figure_with_no_error_and_no_request(pages):
    seen = chromium_check(pages["quickstart"])
    assert seen["consoleErrors"] == [] and seen["pageErrors"] == [] and seen["requests"] == []
    assert seen["sections"] == SECTIONS
    figs = figures(pages["quickstart"].read_text(encoding="utf-8"))
    assert set(figs) == PAGES["quickstart"][1]
    assert sorted(f["id"] for f in seen["figures"]) == sorted(figs)
    for f in seen["figures"]:
        assert f["naturalWidth"] > 0 and f["width"] > 0 and f["height"] > 0, f


@browser
def test_chromium_check_sees_a_broken_figure_an_error_and_a_request(tmp_path):
    """The check itself can fail: a bad image, a script error and an external image are all seen."""
    page = tmp_path / "bad.html"
    page.write_text('<!doctype html><html><body><section id="a"><img id="x" src="data:image/png;base64,AAAA">'
                    '<img id="y" src="https://example.invalid/y.png"></section>'
                    '<script>console.error("boom")</script></body></html>')
    seen = chromium_check(page)
    assert seen["requests"] == ["https://example.invalid/y.png"]
    assert any("boom" in e for e in seen["consoleErrors"])
    assert [f["naturalWidth"] for f in seen["figures"]] == [0, 0]
