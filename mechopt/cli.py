"""The ``mechopt`` command line (``docs/cli.md``): parse, call the public API, print, exit.

Exit codes: 0 success; 1 a failed privacy or hash check, an infeasible problem or a
solver failure; 2 bad input (one line on stderr naming the field and the rule); 3 the
reports cannot answer the question asked (``estimate`` on a channel that identifies
neither the input distribution nor the masses of its groups of identical inputs, without
``--method mmse``).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Sequence

from ._errors import InputError, MechoptError

_DOCS = "file formats: docs/formats.md; commands and exit codes: docs/cli.md"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse's default is 2 too)
        self.exit(2, f"mechopt: error: {message}\n")


def _positive_seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive finite number of seconds, got {text!r}")
    return v


def _relative_gap(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a relative gap (a number), got {text!r}") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must be a relative gap between 0 and 1 (e.g. 1e-6), got {text!r}")
    return v


def _cmd_solve(args) -> int:
    from dataclasses import replace

    from ._identifiability import IdentifiabilityWarning
    from ._solve import solve

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)  # said below, on one line
        result = solve(args.problem, backend=args.backend, method=args.method, quiet=args.quiet,
                       reduce=not args.no_reduce, time_limit=args.time_limit, gap=args.gap)
    if not result.ok:
        if args.json:
            print(json.dumps(_solve_json(result, None), indent=1))
        print(f"mechopt: {result.status}: {result.message}", file=sys.stderr)
        return 1
    mech = replace(result.mechanism, memoize=True) if args.memoize else result.mechanism
    mech.save(args.output)
    # the solver's own note (a fallback, a gap above tolerance); identifiability is said below
    note = result.message.split("; the channel cannot identify")[0].split("the channel cannot identify")[0]
    if note.strip("; "):
        print(f"mechopt: note: {note.strip('; ')}", file=sys.stderr)
    if args.json:
        print(json.dumps(_solve_json(result, args.output), indent=1))
    else:
        print(result.summary() + f" -> {args.output}")
    ident = mech.certificate.get("identifiability", {})
    if ident and not ident.get("identifiable", True):
        from ._identifiability import identifiability
        from .objectives import ESTIMATION_VARIANCE, HISTOGRAM_MSE, REGISTRY

        found = identifiability(mech.matrix)
        if REGISTRY.get(mech.objective.get("kind")) in (ESTIMATION_VARIANCE, HISTOGRAM_MSE):
            print(f"mechopt: warning: this channel cannot identify the input distribution: "
                  f"{found.describe(mech.inputs)}; {found.next_step()}", file=sys.stderr)
        else:  # designed for another purpose (reporting values, information): a note, not an alarm
            print(f"mechopt: note: designed for {mech.objective.get('kind')}, not for estimating frequencies "
                  f"(rank {found.rank} < {found.k} inputs): {found.next_step()}", file=sys.stderr)
    dropped = mech.certificate.get("dropped_outputs")
    if dropped:
        from ._identifiability import summarize_labels

        print(f"mechopt: note: dropped {dropped['count']} output(s) of total mass {dropped['mass']:.2g} "
              f"({summarize_labels(dropped['labels'])}); recorded in the certificate", file=sys.stderr)
    return 0


def _solve_json(result, output: str | None) -> dict:
    """``solve --json``: the status, the objective, its bound and gap (absolute and relative), timings, stats."""

    def clean(v):
        if isinstance(v, dict):
            return {str(k): clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        if hasattr(v, "item") and getattr(v, "ndim", 1) == 0:
            v = v.item()
        if isinstance(v, float):
            return v if v == v and abs(v) != float("inf") else None
        return v if isinstance(v, (str, int, bool)) or v is None else str(v)

    kind = result.mechanism.objective.get("kind") if result.mechanism is not None else None
    return clean({"status": result.status, "objective": kind, "value": result.objective, "bound": result.bound,
                  "gap": result.gap,
                  "relative_gap": result.stats.get("relative_gap"), "message": result.message, "output": output,
                  "timings": result.timings, "stats": result.stats})


def _cmd_verify(args) -> int:
    from ._mechanism import load_verified
    from ._problem import load_problem

    # the one path of every reader (strict JSON, structure, digest, claims' parameters), with
    # the client's exact verdict on the file's own claims: verify refuses what a client refuses
    failed: list[str] = []
    _, mech = load_verified(args.mechanism, verify=False, _collect=failed)
    client_detail = failed[0] if failed else ""
    if args.problem:
        problem = load_problem(args.problem)
        if tuple(problem.inputs) != tuple(mech.inputs):
            raise InputError("inputs", f"the mechanism's inputs {list(mech.inputs)!r} differ from the problem's "
                             f"{list(problem.inputs)!r}")
        notions = list(problem.notions)
    else:
        notions = mech.notions
    cert = mech.verify(notions)
    verified = cert.verified and not client_detail
    detail = cert.detail or client_detail
    if args.json:
        out = {**cert.to_dict(), "sha256_ok": True, "client_ok": not client_detail}
        if client_detail:
            out.update(verified=False, client_detail=client_detail)
        print(json.dumps(out, indent=1))
    else:
        for c in cert.checks:
            mark = "ok  " if c.ok else "FAIL"
            print(f"{mark} {c.notion:9s} budget {c.budget:.6g}  achieved {c.achieved:.10g}  "
                  f"worst slack {c.worst_slack:.3g}  (nats)")
        if not cert.rows_ok:
            print(f"FAIL rows: {cert.detail}")
        if client_detail:
            print(f"FAIL client check: {client_detail}")
        print("verified exactly" if verified else f"NOT verified: {detail}")
    if not verified:
        print(f"mechopt: verification failed: {detail}", file=sys.stderr)
    return 0 if verified else 1


def _cmd_closed_form(args) -> int:
    from ._closed_form_report import closed_form_report

    report = closed_form_report(args.problem)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        for row in report["closed_forms"]:
            print(f"{row['verdict']:17s} {row['name']} ({row['source']}): objective {row['objective']}, "
                  f"optimum {row['optimum']}")
    return 0


def _cmd_baselines(args) -> int:
    from ._baselines import baselines_report
    from ._identifiability import IdentifiabilityWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)  # only the optimum's value is printed
        report = baselines_report(args.problem)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(f"optimum ({report['solver_status']}): {report['optimum']}")
        for row in report["baselines"]:
            value = "n/a" if row["objective"] is None else f"{row['objective']:.10g}"
            ratio = f", x{row['ratio']:.4g} the optimum" if "ratio" in row else ""
            print(f"{'ok  ' if row['privacy_ok'] else 'FAIL'} {row['name']} (eps {row['epsilon']:.6g}): {value}"
                  f"{ratio} [{row['scored_by'] or row['note']}]")
    return 0


def _cmd_privatize(args) -> int:
    from .runtime._commands import privatize_file

    n = privatize_file(args.mechanism, args.input, args.output, seed=args.seed, memo=args.memo,
                      user_column=args.user_column)
    print(f"{n} reports -> {'standard output' if args.output == '-' else args.output}", file=sys.stderr)
    return 0


def _parse_prior(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError("prior", f"must be comma-separated probabilities, got {text!r}") from None


def _cmd_estimate(args) -> int:
    from .runtime._commands import estimate_from_files

    if args.reports is None and args.counts is None:
        raise InputError("reports", "give --reports FILE (one output label per line) or --counts FILE "
                                    "(CSV: output label,count); '-' reads standard input")
    if args.counts is None and (args.scheduler or args.column):
        raise InputError("scheduler" if args.scheduler else "column", "applies to --counts (partitioned files)")
    from ._identifiability import IdentifiabilityWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IdentifiabilityWarning)
        est = estimate_from_files(args.mechanism, args.reports, counts_path=args.counts, method=args.method,
                                  level=args.level, prior=_parse_prior(args.prior), postprocess=args.postprocess,
                                  resamples=args.resamples, seed=args.seed, column=args.column,
                                  scheduler=args.scheduler)
    for w in caught:  # merged inputs: their groups' mass was estimated; one line saying so
        if issubclass(w.category, IdentifiabilityWarning):
            print(f"mechopt: warning: {w.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    print(json.dumps(est.to_dict(), indent=1, ensure_ascii=False) if args.json else est.table())
    return 0


def _progress_line(i: int, count: int, x: float, value: float, seconds: float) -> None:
    shown = "no mechanism" if value != value else f"{value:.6g}"
    print(f"mechopt: point {i + 1}/{count}: x = {x:g}: {shown} ({seconds:.1f} s)", file=sys.stderr, flush=True)


def _cmd_tradeoff(args) -> int:
    from ._plots import tradeoff_plot

    if (args.target_error is None) != (args.n is None):
        raise InputError("target-error", "--target-error X and --n N go together (the error of the estimate "
                                         "from N users)")
    if args.target_error is not None:
        return _cmd_target_error(args)
    if args.png is None:
        raise InputError("png", "a PNG file to write is required (--png OUT.png)")
    data = tradeoff_plot(args.problem, args.epsilons, args.png, scale=args.scale, notion=args.notion,
                         baselines=not args.no_baselines, logx=args.logx, logy=args.logy, progress=_progress_line,
                         time_limit=args.time_limit)
    if args.json:
        clean = {**data, "curves": {k: [None if y != y else y for y in ys] for k, ys in data["curves"].items()}}
        print(json.dumps(clean, indent=1, ensure_ascii=False))
    else:
        for label, ys in data["curves"].items():
            shown = ", ".join("—" if y != y else f"{y:.6g}" for y in ys)
            print(f"{label}: {shown}")
        print(f"x = {data['xlabel']}: {', '.join(f'{x:g}' for x in data['x'])}; y = {data['ylabel']}")
    print(f"-> {args.png}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _cmd_target_error(args) -> int:
    from ._target_error import smallest_epsilon

    def show(point: dict) -> None:
        err = "no mechanism" if point["error"] != point["error"] else f"error {point['error']:.6g}"
        print(f"mechopt: {point['phase']} point {len(seen) + 1}: x = {point['x']:.6g}: {err} ({point['status']}, "
              f"{point['seconds']:.1f} s)", file=sys.stderr, flush=True)
        seen.append(point)

    seen: list = []
    out = smallest_epsilon(args.problem, args.target_error, args.n, epsilons=args.epsilons, scale=args.scale,
                           notion=args.notion, progress=show)
    if args.json:
        clean = {**out, "points": [{**q, "error": None if q["error"] != q["error"] else q["error"]}
                                   for q in out["points"]]}
        print(json.dumps(clean, indent=1, ensure_ascii=False))
    else:
        what = f"epsilon of {out['notion']}" if out["axis"] == "epsilon" else "budget multiplier t"
        print(f"{what:>24s}  E|p_hat - p|^2 at n = {out['n']}")
        for q in sorted(out["points"], key=lambda q: q["x"]):
            print(f"{q['x']:24.6g}  {q['error']:.6g}{'  (meets)' if q['error'] <= out['target_error'] else ''}")
        if out["answer"] is None:
            print(f"no answer: {out['note']}")
        else:
            print(f"smallest {what} meeting error <= {out['target_error']:g} at n = {out['n']}: "
                  f"{out['answer']:.6g} (misses at {out['bracket'][0]:.6g}; {out['note']})")
    if args.png:
        _draw_target(out, args.png)
        print(f"-> {args.png}", file=sys.stderr if args.json else sys.stdout)
    return 0 if out["answer"] is not None else 1


def _draw_target(out: dict, png: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = sorted((q["x"], q["error"]) for q in out["points"] if q["error"] == q["error"])
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    ax.plot([x for x, _ in pts], [e for _, e in pts], marker="o", label="optimal mechanism")
    ax.axhline(out["target_error"], color="grey", linestyle="--", label="target")
    if out["answer"] is not None:
        ax.axvline(out["answer"], color="grey", linestyle=":")
    ax.set_yscale("log")
    ax.set_xlabel("ε" if out["axis"] == "epsilon" else "budget multiplier t")
    ax.set_ylabel(f"E‖p̂ − p‖² at n = {out['n']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def _cmd_plot(args) -> int:
    from ._plots import plot_mechanism

    plot_mechanism(args.mechanism, args.png)
    print(f"-> {args.png}")
    return 0


def _cmd_report(args) -> int:
    from .report import write_report

    write_report(args.mechanism, args.output, n=args.n, problem=args.problem, delta=args.delta)
    print(f"-> {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from ._plots import DEFAULT_SCALE

    p = _Parser(prog="mechopt", description="Design optimal local privacy mechanisms, verified exactly.",
                epilog=f"{_DOCS}. Exit codes: 0 success; 1 a failed check, an infeasible problem or a solver "
                       "failure; 2 bad input; 3 not identifiable (estimate).")
    p.add_argument("--version", action="version", version=f"mechopt {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("solve", help="solve a problem file and export a verified mechanism",
                       epilog=_DOCS)
    s.add_argument("problem", help="problem file (YAML or JSON; docs/formats.md)")
    s.add_argument("-o", "--output", required=True, help="mechanism file to write (JSON, format version 2)")
    s.add_argument("--backend", default="auto", help="auto (default) | highs | highs-ipm | highs-ds | cvxpy:SOLVER")
    s.add_argument("--method", default="auto", metavar="METHOD",
                   help="auto (default: mechopt picks the route). Free outputs: rays | colgen | orbit; "
                        "estimation_variance: cvxpy | frank-wolfe (fw); labeled outputs: lp | decompose | ipm | "
                        "lazy (the IPM with its own growing pairs per output: places from a map) | outputs (the IPM "
                        "over a growing set of outputs) | relax (the IPM on the pairs of small budget, lifted: "
                        "feasible with a proven gap)")
    s.add_argument("--no-reduce", action="store_true", help="do not reduce constraints (for comparison)")
    s.add_argument("--memoize", action="store_true",
                   help="mark the mechanism memoized: clients keep one permanent response per true value")
    s.add_argument("--time-limit", type=_positive_seconds, default=None, metavar="S",
                   help="seconds for the labeled LP or the free-output column generation; the best verified "
                        "mechanism found so far is exported with "
                        "status feasible and its proven gap")
    s.add_argument("--gap", type=_relative_gap, default=None, metavar="G",
                   help="labeled outputs: the proven relative gap at which the answer counts as optimal "
                        "(default 1e-7); the metric routes stop as soon as they prove it")
    s.add_argument("--quiet", action="store_true", help="no progress display (the one-line summary is still printed)")
    s.add_argument("--json", action="store_true",
                   help="print the result as JSON (status, value, bound, gap, timings, solver statistics with "
                        "peak_memory_mb) instead of the summary line")
    s.set_defaults(func=_cmd_solve)

    v = sub.add_parser("verify", help="re-verify a mechanism file exactly and check its hash", epilog=_DOCS)
    v.add_argument("mechanism", help="mechanism file (JSON, format version 1 or 2)")
    v.add_argument("--problem", help="also check the problem's notions (YAML or JSON)")
    v.add_argument("--json", action="store_true", help="print the certificate as JSON")
    v.set_defaults(func=_cmd_verify)

    c = sub.add_parser("closed-form", help="judge the papers' closed forms against the solver", epilog=_DOCS)
    c.add_argument("problem", help="problem file (YAML or JSON)")
    c.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    c.set_defaults(func=_cmd_closed_form)

    b = sub.add_parser("baselines", help="score the standard mechanisms (k-RR, RAPPOR, OUE, OLH, subset selection, "
                       "Hadamard) on a problem")
    b.add_argument("problem", help="problem file (YAML or JSON)")
    b.add_argument("--json", action="store_true", help="print the rows as JSON")
    b.set_defaults(func=_cmd_baselines)

    pr = sub.add_parser("privatize", help="turn input labels into privatized reports (each line one user)",
                        epilog=_DOCS)
    pr.add_argument("mechanism", help="mechanism file (JSON)")
    pr.add_argument("--input", required=True, help="one input label per line ('-': standard input)")
    pr.add_argument("--output", required=True, help="file for one report per line ('-': standard output)")
    pr.add_argument("--seed", type=int, default=None,
                    help="seeded simulation (not for deployment); default: a secure generator")
    pr.add_argument("--memo", metavar="STORE.json", default=None,
                    help="memoized mechanism: keep the permanent responses in this JSON file (one device; "
                         "with --user-column one store per user)")
    pr.add_argument("--user-column", action="store_true",
                    help="the input is CSV 'user id,input label': each user is one device (for --memo)")
    pr.set_defaults(func=_cmd_privatize)

    e = sub.add_parser("estimate", help="estimate the input distribution, with standard errors and intervals",
                       epilog=f"A channel that merges inputs (identical rows): each group's total mass is estimated, "
                              f"with a warning. Exit code 3 when not even that is identifiable (use --method mmse). "
                              f"{_DOCS}")
    e.add_argument("mechanism", help="mechanism file (JSON)")
    e.add_argument("--reports", default=None, help="one output label per line ('-': standard input)")
    e.add_argument("--counts", default=None,
                   help="CSV of output label,count ('-': standard input), or a Parquet/CSV file, folder or glob of "
                        "partitions: one report per row, or pre-aggregated report,count rows")
    e.add_argument("--column", default=None, help="--counts: the report column (default 'report', or the only one)")
    e.add_argument("--scheduler", default=None, metavar="ADDRESS|local:N",
                   help="--counts: count on Dask, on a LocalCluster of N workers or the scheduler at ADDRESS")
    e.add_argument("--method", default="em", choices=["em", "inversion", "projected", "mmse"],
                   help="em: maximum likelihood (default); inversion: unbiased; projected: inversion onto the "
                        "simplex; mmse: Bayesian under a prior")
    e.add_argument("--prior", default=None, help="mmse: comma-separated prior (default: the mechanism's design prior)")
    e.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    e.add_argument("--postprocess", default="none", choices=["none", "simplex", "norm-sub"],
                   help="consistent estimate: none (default); simplex: Euclidean projection onto the simplex; "
                        "norm-sub: zero the negatives, subtract one delta from the rest (Wang et al. NDSS 2020); "
                        "intervals then come from a parametric bootstrap")
    e.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples with --postprocess (default 1000)")
    e.add_argument("--seed", type=int, default=0, help="seed of the bootstrap draws (default 0)")
    e.add_argument("--json", action="store_true", help="print the estimate as JSON")
    e.set_defaults(func=_cmd_estimate)

    t = sub.add_parser("tradeoff", help="plot utility against a budget multiplier or one notion's epsilon",
                       epilog=_DOCS)
    t.add_argument("problem", help="problem file (YAML or JSON)")
    axis = t.add_mutually_exclusive_group()
    axis.add_argument("--scale", default=None,
                      help=f"multiply every budget by t over start:stop:step or a comma list "
                           f"(default: --scale {DEFAULT_SCALE})")
    axis.add_argument("--epsilons", default=None, help="set one notion's epsilon: start:stop:step or a comma list")
    t.add_argument("--notion", default=None,
                   help="with --epsilons: the notion to vary (name or index), if the problem has several")
    t.add_argument("--no-baselines", action="store_true", help="do not draw the standard mechanisms (k-RR, ...)")
    t.add_argument("--logx", action="store_true", help="log scale on the x axis")
    t.add_argument("--logy", action="store_true", help="log scale on the y axis")
    t.add_argument("--json", action="store_true", help="print the data drawn as JSON")
    t.add_argument("--time-limit", type=_positive_seconds, default=None, metavar="S",
                   help="seconds for each solve (as solve --time-limit): each point is then the best verified "
                        "mechanism found in that time")
    t.add_argument("--png", default=None, help="PNG file to write (required unless --target-error)")
    t.add_argument("--target-error", type=float, default=None, metavar="X",
                   help="find the smallest epsilon (or multiplier) whose optimal mechanism's E|p_hat - p|^2 "
                        "at --n users is <= X: scan the grid, then bisect")
    t.add_argument("--n", type=int, default=None, metavar="N", help="with --target-error: the number of users")
    t.set_defaults(func=_cmd_tradeoff)

    pl = sub.add_parser("plot", help="draw a mechanism's channel as a heat map", epilog=_DOCS)
    pl.add_argument("mechanism", help="mechanism file (JSON)")
    pl.add_argument("--png", required=True, help="PNG file to write")
    pl.set_defaults(func=_cmd_plot)
    rp = sub.add_parser("report", help="one self-contained HTML page: channel, certificate, expected error, "
                        "baselines, central ε after shuffling, privacy-loss distribution", epilog=_DOCS)
    rp.add_argument("mechanism", help="mechanism file (JSON)")
    rp.add_argument("-o", "--output", required=True, help="HTML file to write")
    rp.add_argument("--n", type=int, default=10_000, help="number of reports (default 10000)")
    rp.add_argument("--problem", default=None,
                    help="score the baselines on this problem (default: the objective the file records)")
    rp.add_argument("--delta", type=float, default=1e-6, help="δ of the central guarantee (default 1e-6)")
    rp.set_defaults(func=_cmd_report)

    from .accounting._commands import add_parser as _add_account

    _add_account(sub, _DOCS)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mechopt`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except MechoptError as err:
        print(f"mechopt: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("mechopt: interrupted", file=sys.stderr)
        return 130
    except OSError as err:
        print(f"mechopt: {getattr(err, 'filename', '') or 'file'}: {err.strerror or err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
