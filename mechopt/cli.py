"""The ``mechopt`` command line (SPEC §6): parse, call the public API, print, exit.

Exit codes: 0 success; 1 a failed privacy or hash check, an infeasible problem or a
solver failure; 2 bad input (one line on stderr naming the field and the rule).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from ._errors import InputError, MechoptError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse's default is 2 too)
        self.exit(2, f"mechopt: error: {message}\n")


def _cmd_solve(args) -> int:
    from ._solve import solve

    result = solve(args.problem, backend=args.backend, method=args.method, quiet=args.quiet,
                   reduce=not args.no_reduce)
    if not result.ok:
        print(f"mechopt: {result.status}: {result.message}", file=sys.stderr)
        return 1
    result.mechanism.save(args.output)
    print(result.summary() + f" -> {args.output}")
    return 0


def _cmd_verify(args) -> int:
    from ._mechanism import Mechanism
    from ._problem import load_problem

    mech = Mechanism.load(args.mechanism, verify=False)
    if args.problem:
        problem = load_problem(args.problem)
        if tuple(problem.inputs) != tuple(mech.inputs):
            raise InputError("inputs", f"the mechanism's inputs {list(mech.inputs)!r} differ from the problem's "
                             f"{list(problem.inputs)!r}")
        notions = list(problem.notions)
    else:
        notions = mech.notions
    cert = mech.verify(notions)
    if args.json:
        print(json.dumps({**cert.to_dict(), "sha256_ok": True}, indent=1))
    else:
        for c in cert.checks:
            mark = "ok  " if c.ok else "FAIL"
            print(f"{mark} {c.notion:9s} budget {c.budget:.6g}  achieved {c.achieved:.10g}  "
                  f"worst slack {c.worst_slack:.3g}")
        if not cert.rows_ok:
            print(f"FAIL rows: {cert.detail}")
        print("verified exactly" if cert.verified else f"NOT verified: {cert.detail}")
    if not cert.verified:
        print(f"mechopt: verification failed: {cert.detail}", file=sys.stderr)
    return 0 if cert.verified else 1


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

    n = privatize_file(args.mechanism, args.input, args.output, seed=args.seed)
    print(f"{n} reports -> {args.output}", file=sys.stderr)
    return 0


def _cmd_estimate(args) -> int:
    from .runtime._commands import estimate_file

    out = estimate_file(args.mechanism, args.reports, method=args.method)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"n = {out['n']}, method = {out['method']}")
        for label, p in out["estimate"].items():
            print(f"{label}\t{p:.6f}")
    return 0


def _cmd_tradeoff(args) -> int:
    from ._plots import tradeoff_plot

    tradeoff_plot(args.problem, args.epsilons, args.png)
    print(f"-> {args.png}")
    return 0


def _cmd_plot(args) -> int:
    from ._plots import plot_mechanism

    plot_mechanism(args.mechanism, args.png)
    print(f"-> {args.png}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mechopt", description="Design optimal local privacy mechanisms, verified exactly.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("solve", help="solve a problem file and export a verified mechanism")
    s.add_argument("problem", help="problem file (YAML or JSON, SPEC §5)")
    s.add_argument("-o", "--output", required=True, help="mechanism file to write (JSON)")
    s.add_argument("--backend", default="auto", help="highs | highs-ipm | highs-ds | cvxpy:SOLVER")
    s.add_argument("--method", default="auto", help="rays | colgen | cvxpy | frank-wolfe")
    s.add_argument("--no-reduce", action="store_true", help="do not reduce constraints (for comparison)")
    s.add_argument("--quiet", action="store_true", help="no progress display (the one-line summary is still printed)")
    s.set_defaults(func=_cmd_solve)

    v = sub.add_parser("verify", help="re-verify a mechanism file exactly and check its hash")
    v.add_argument("mechanism", help="mechanism file (JSON)")
    v.add_argument("--problem", help="also check the problem's notions (YAML or JSON)")
    v.add_argument("--json", action="store_true", help="print the certificate as JSON")
    v.set_defaults(func=_cmd_verify)

    c = sub.add_parser("closed-form", help="judge the papers' closed forms against the solver")
    c.add_argument("problem", help="problem file (YAML or JSON)")
    c.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    c.set_defaults(func=_cmd_closed_form)

    b = sub.add_parser("baselines", help="score the standard mechanisms (k-RR, RAPPOR, OUE, OLH, subset selection, "
                       "Hadamard) on a problem")
    b.add_argument("problem", help="problem file (YAML or JSON)")
    b.add_argument("--json", action="store_true", help="print the rows as JSON")
    b.set_defaults(func=_cmd_baselines)

    pr = sub.add_parser("privatize", help="turn input labels into privatized reports")
    pr.add_argument("mechanism", help="mechanism file (JSON)")
    pr.add_argument("--input", required=True, help="one input label per line")
    pr.add_argument("--output", required=True, help="file for one report per line")
    pr.add_argument("--seed", type=int, default=None,
                    help="seeded simulation (not for deployment); default: a secure generator")
    pr.set_defaults(func=_cmd_privatize)

    e = sub.add_parser("estimate", help="estimate the input distribution from reports")
    e.add_argument("mechanism", help="mechanism file (JSON)")
    e.add_argument("--reports", required=True, help="one output label per line")
    e.add_argument("--method", default="em", choices=["em", "inversion", "projected"])
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=_cmd_estimate)

    t = sub.add_parser("tradeoff", help="plot utility against epsilon")
    t.add_argument("problem", help="problem file (YAML or JSON)")
    t.add_argument("--epsilons", default="0.5:5:0.5", help="start:stop:step or a comma list")
    t.add_argument("--png", required=True, help="PNG file to write")
    t.set_defaults(func=_cmd_tradeoff)

    pl = sub.add_parser("plot", help="draw a mechanism's channel as a heat map")
    pl.add_argument("mechanism", help="mechanism file (JSON)")
    pl.add_argument("--png", required=True, help="PNG file to write")
    pl.set_defaults(func=_cmd_plot)
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
