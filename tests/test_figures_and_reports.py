"""Figures are drawn from solver results; the closed-form report tells the truth."""

import json

import numpy as np
import pytest

import mechopt
from mechopt.cli import main


def _png_ok(path):
    import matplotlib.image as mpimg

    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[0] >= 200 and img.shape[1] >= 300
    # not blank: many distinct colours, and real variation in every channel used
    flat = img[..., :3].reshape(-1, 3)
    assert len(np.unique(np.round(flat, 2), axis=0)) > 20
    assert flat.std() > 0.05


def test_tradeoff_png_is_drawn_from_solver_optima(tmp_path):
    out = tmp_path / "tradeoff.png"
    data = mechopt.tradeoff_plot("problems/mimo_000.yaml", "1:3:1", out)
    _png_ok(out)
    lip, ldp = data["curves"]["lip"], data["curves"]["ldp"]
    # every point is a solver optimum: re-solve one and compare
    r = mechopt.solve({"inputs": ["a", "b", "c"], "outputs": "free",
                       "privacy": [{"notion": "ldp", "epsilon": 2.0}],
                       "objective": {"kind": "histogram_mse", "prior": [0.1, 0.2, 0.7]}}, quiet=True)
    assert ldp[1] == pytest.approx(r.objective, rel=1e-9)
    # LIP with the true prior is a weaker requirement than LDP: never worse, and MSE falls with eps
    assert all(a <= b + 1e-9 for a, b in zip(lip, ldp))
    assert lip[0] > lip[1] > lip[2]


def test_cli_tradeoff_and_plot(tmp_path):
    png = tmp_path / "t.png"
    assert main(["tradeoff", "problems/binary_asymmetric_002.yaml", "--scale", "0.5,1,2", "--png", str(png)]) == 0
    _png_ok(png)
    mech = tmp_path / "m.json"
    assert main(["solve", "problems/metric_grid.yaml", "-o", str(mech), "--quiet"]) == 0
    heat = tmp_path / "h.png"
    assert main(["plot", str(mech), "--png", str(heat)]) == 0
    _png_ok(heat)


def test_bad_epsilon_range_is_one_line_exit_2(tmp_path, capsys):
    code = main(["tradeoff", "problems/mimo_000.yaml", "--epsilons", "5:1:0.5", "--png", str(tmp_path / "x.png")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "epsilons" in err[0]


@pytest.mark.parametrize("path,verdict", [("problems/mimo_000.yaml", "violates-privacy"),
                                          ("problems/mimo_000_eps3.yaml", "optimal")])
def test_closed_form_cli_judges_lip_rr(path, verdict, capsys):
    assert main(["closed-form", path, "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    rows = {r["name"]: r for r in rep["closed_forms"]}
    assert rows["lip_rr"]["verdict"] == verdict
    for r in rep["closed_forms"]:
        assert set(r) >= {"name", "source", "applies", "privacy_ok", "achieved", "objective", "optimum", "gap",
                          "verdict"}
        assert r["verdict"] in {"optimal", "suboptimal", "violates-privacy", "not-applicable"}


def test_no_verified_closed_form_beats_the_solver():
    """House style 12: the solver never loses to a closed form that verifies."""
    for path in ["problems/mimo_000_eps3.yaml", "problems/disease_survey_000_ex1.yaml",
                 "problems/binary_asymmetric_002.yaml", "problems/uldp_labeled_001.yaml",
                 "problems/wc_lip_003.yaml", "problems/bp_lip_box_003.yaml"]:
        rep = mechopt.closed_form_report(path)
        for r in rep["closed_forms"]:
            if r["privacy_ok"] and r["gap"] is not None:
                assert r["gap"] >= -1e-7 * max(1.0, abs(r["optimum"])), (path, r["name"], r["gap"])


def test_bp_lip_box_tradeoff_works(tmp_path, capsys):
    """The issue's command failed with exit 2 ("give either 'priors' or 'lower'/'upper'")."""
    png = tmp_path / "x.png"
    assert main(["tradeoff", "problems/bp_lip_box_003.yaml", "--epsilons", "0.5,1", "--png", str(png)]) == 0
    _png_ok(png)
    out = capsys.readouterr().out
    assert "bp_lip:" in out and "nats" in out
    data = mechopt.tradeoff("problems/bp_lip_box_003.yaml", "1")
    assert data["curves"]["bp_lip"][0] == pytest.approx(mechopt.solve("problems/bp_lip_box_003.yaml",
                                                                     quiet=True).objective, rel=1e-9)


def test_multiplier_axis_puts_the_problem_on_its_own_curve():
    """high-low 1 + LDP 2: t = 1 is the problem itself; t scales both budgets."""
    data = mechopt.tradeoff("problems/quickstart.yaml", scale="0.5,1,2", baselines=False)
    assert data["axis"] == "multiplier" and data["x"] == [0.5, 1.0, 2.0]
    ys = data["curves"]["high_low+ldp"]
    r = mechopt.solve("problems/quickstart.yaml", quiet=True)
    assert ys[1] == pytest.approx(r.objective, rel=1e-9)
    doubled = mechopt.solve({**_quickstart(), "privacy": [{"notion": "high_low", "epsilon": 2.0,
                                                           "sensitive": ["bar"]},
                                                          {"notion": "ldp", "epsilon": 4.0}]}, quiet=True)
    assert ys[2] == pytest.approx(doubled.objective, rel=1e-9)
    assert ys[0] > ys[1] > ys[2]
    assert "probability of a wrong report" in data["ylabel"]
    with pytest.raises(mechopt.InputError, match="notion: the problem has 2 notions with an epsilon"):
        mechopt.tradeoff("problems/quickstart.yaml", "1,2")
    one = mechopt.tradeoff("problems/quickstart.yaml", "1,2", notion="ldp", baselines=False)
    assert one["curves"]["high_low+ldp"][1] == pytest.approx(r.objective, rel=1e-9)  # LDP 2: the problem


def _quickstart():
    import yaml

    with open("problems/quickstart.yaml") as f:
        return yaml.safe_load(f)


def test_krr_baseline_is_the_textbook_error_and_log_axes_draw(tmp_path):
    problem = {"k": 4, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
               "objective": {"kind": "expected_loss"}}
    png = tmp_path / "k.png"
    data = mechopt.tradeoff_plot(problem, "0.5,1,2", png, logx=True, logy=True)
    _png_ok(png)
    krr = data["curves"]["baseline: k_rr"]
    for eps, err in zip(data["x"], krr):
        assert err == pytest.approx(3 / (np.exp(eps) + 3), rel=1e-9)  # k-RR errs w.p. (k-1)/(e^ε+k-1)
    assert all(o <= b + 1e-12 for o, b in zip(data["curves"]["ldp"], krr))
    mi = mechopt.tradeoff({"k": 3, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                           "objective": {"kind": "mutual_information"}}, scale="1", baselines=False)
    assert mi["ylabel"] == "mutual_information (nats)"


def test_solve_summary_says_the_unit(tmp_path, capsys):
    assert main(["solve", "problems/ldp_mi.yaml", "-o", str(tmp_path / "m.json"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mutual_information = " in out and "[nats]" in out


def test_losses_between_latlon_places_print_in_km(tmp_path, capsys):
    """A squared great-circle loss is in km², a haversine one in km (summary, trade-off axis, file)."""
    base = {"places": {"latlon": [[48.85, 2.35], [48.86, 2.36], [48.87, 2.34]], "labels": ["a", "b", "c"]},
            "outputs": "inputs", "privacy": [{"notion": "metric", "epsilon": 1.0, "distance": "haversine"}]}
    for loss, unit in (("squared", "km²"), ("haversine", "km")):
        path = tmp_path / f"{loss}.json"
        path.write_text(json.dumps({**base, "objective": {"kind": "expected_loss", "loss": loss}}))
        assert main(["solve", str(path), "-o", str(tmp_path / "m.json"), "--quiet"]) == 0
        assert f"[{unit}]" in capsys.readouterr().out
        assert json.loads((tmp_path / "m.json").read_text())["objective"]["unit"] == unit
        assert mechopt.tradeoff(str(path), scale="1", baselines=False)["ylabel"] == f"expected_loss ({unit})"
    with pytest.raises(mechopt.InputError, match="objective.unit"):
        mechopt.load_problem({**base, "objective": {"kind": "expected_loss", "loss": "squared", "unit": 3}})
    with pytest.raises(mechopt.InputError, match="objective.unit: is not a field"):
        mechopt.load_problem({"k": 2, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                              "objective": {"kind": "mutual_information", "unit": "bits"}})


def test_a_long_axis_label_stays_inside_the_tradeoff_figure():
    import matplotlib.pyplot as plt

    from mechopt._plots import tradeoff_figure

    data = {"curves": {"ldp": [1.0, 0.5]}, "x": [1.0, 2.0], "axis": "epsilon", "xlabel": "ε of ldp",
            "ylabel": "expected_loss (" + "a very long unit of the loss " * 4 + ")"}
    fig = tradeoff_figure(data)
    try:
        fig.canvas.draw()
        box = fig.axes[0].yaxis.label.get_window_extent(fig.canvas.get_renderer())
        assert box.y0 >= 0 and box.y1 <= fig.bbox.height and box.x0 >= 0
    finally:
        plt.close(fig)
