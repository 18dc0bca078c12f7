"""Issue 20, item 6: hostile problem files and numbers are refused on one line, exit code 2.

Each case was a traceback, a hang or a silently wrong reading before the fix: integers beyond
float range (OverflowError), a YAML alias bomb (minutes and gigabytes), duplicate keys (the
last one silently won), deep nesting (RecursionError). The expectations are the plain rules
(a key given twice is refused; a number that has no float is refused), and where a parser
used to read something else, the test shows what a plain parser reads.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

import mechopt
from mechopt import InputError, load_problem
from mechopt._jsonsafe import MAX_DEPTH, json_depth, loads_strict
from mechopt._problem import parse_document
from mechopt._validation import check_tree
from mechopt.cli import main
from mechopt.notions import ELDP, LDP, LIP, MetricLDP

HUGE = 10**400  # no float: float(HUGE) raises OverflowError
BEYOND = "beyond the range of a float"


def run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def base(privacy, objective=None, **extra):
    return {"k": 3, "outputs": "inputs", "privacy": privacy,
            "objective": objective or {"kind": "expected_loss"}, **extra}


# -- 1. integers beyond float range, in every field that holds a number ------------------------------

FIELDS = {
    "privacy[0].epsilon": base([{"notion": "ldp", "epsilon": HUGE}]),
    "privacy[0].prior[0]": base([{"notion": "lip", "epsilon": 1, "prior": [HUGE, 0, 0]}]),
    "privacy[0].delta": base([{"notion": "lip", "epsilon": 1, "delta": HUGE, "prior": [0.2, 0.3, 0.5]}]),
    "privacy[0].matrix[0][1]": base([{"notion": "eldp", "matrix": [[0, HUGE, 1], [1, 0, 1], [1, 1, 0]]}]),
    "privacy[0].distance[1][0]": base([{"notion": "metric", "epsilon": 1,
                                        "distance": [[0, 1, 1], [HUGE, 0, 1], [1, 1, 0]]}]),
    "privacy[0].edges[0][2]": base([{"notion": "metric", "epsilon": 1, "edges": [["0", "1", HUGE], ["1", "2", 1]]}]),
    "privacy[0].priors[1][2]": base([{"notion": "bp_lip", "epsilon": 1, "priors": [[0.2, 0.3, 0.5], [0, 0, HUGE]]}]),
    "objective.values[0]": base([{"notion": "ldp", "epsilon": 1}], {"kind": "mmse", "values": [HUGE, 0, 1]},
                                outputs="free"),
    "objective.loss[2][0]": base([{"notion": "ldp", "epsilon": 1}],
                                 {"kind": "expected_loss", "loss": [[0, 1, 1], [1, 0, 1], [HUGE, 1, 0]]}),
    "objective.prior[0]": base([{"notion": "ldp", "epsilon": 1}], {"kind": "expected_loss", "prior": [HUGE, 0, 0]}),
    "objective.p0[1]": base([{"notion": "ldp", "epsilon": 1}], {"kind": "estimation_variance", "p0": [0.5, HUGE, 0]},
                            outputs="free"),
    "objective.terms[0].weight": base([{"notion": "ldp", "epsilon": 1}],
                                      {"kind": "weighted", "terms": [{"weight": HUGE, "kind": "expected_loss"}]}),
    "k": {"k": HUGE, "privacy": [{"notion": "ldp", "epsilon": 1}]},
    "privacy[0].epsilon (negative)": base([{"notion": "uldp", "epsilon": -HUGE, "sensitive": ["0"]}]),
}


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_an_integer_beyond_float_range_is_refused_naming_its_field(field):
    with pytest.raises(OverflowError):  # the independent fact: this number has no float
        float(HUGE)
    where = field.split(" (")[0]
    with pytest.raises(InputError, match=re.escape(where) + ": the integer ~-?1e400 is " + BEYOND):
        load_problem(FIELDS[field])


@pytest.mark.parametrize("make", [lambda: LDP(HUGE), lambda: LIP(HUGE, [0.5, 0.5]), lambda: LIP(1.0, [HUGE, 0]),
                                  lambda: ELDP([[0, HUGE], [1, 0]]), lambda: MetricLDP(1.0, distance=[[0, 1], [HUGE, 0]]),
                                  lambda: MetricLDP(1.0, edges=[(0, 1, HUGE)]),
                                  lambda: mechopt.verify([[HUGE, 0], [0, 1]], [LDP(1.0)])])
def test_notion_constructors_and_verify_refuse_an_integer_beyond_float_range(make):
    with pytest.raises(InputError, match=BEYOND):
        make()


def test_a_huge_but_finite_integer_is_read_as_its_float():
    """Documented choice: an integer with a float (10**300) is accepted, rounded like any number."""
    p = load_problem(base([{"notion": "ldp", "epsilon": 10**300}]))
    assert p.notions[0].epsilon == float(10**300) == 1e300
    p = load_problem(base([{"notion": "eldp", "matrix": [[0, 10**300, 1], [1, 0, 1], [1, 1, 0]]}]))
    assert p.notions[0].matrix[0, 1] == 1e300
    # the integers on either side of the edge: the largest float, read exactly, is accepted;
    # one more is refused (float() would still round it down, but files are read exactly)
    edge = int(sys.float_info.max)
    assert float(edge) == sys.float_info.max
    for wrap in (lambda v: v, lambda v: [0.5, v, 1], lambda v: [[1, 2], [-v, 0]]):
        check_tree({"a": wrap(edge)})
        with pytest.raises(InputError, match=BEYOND):
            check_tree({"a": wrap(edge + 1)})
    for text in (str(edge), str(edge + 1)):
        accepted = text == str(edge)
        for parse in (lambda t: loads_strict(t, "a.json"), lambda t: parse_document(f"a: {t}", "a.yaml")["a"]):
            if accepted:
                assert parse(text) == edge
            else:
                with pytest.raises(InputError, match=BEYOND):
                    parse(text)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
@pytest.mark.parametrize("where, text", [
    ("privacy[0].epsilon", '{"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1%s}]}'),
    ("privacy[0].prior[1]", '{"k": 2, "privacy": [{"notion": "lip", "epsilon": 1, "prior": [0, 1%s]}]}'),
    ("privacy[0].matrix[1][0]", '{"k": 2, "privacy": [{"notion": "eldp", "matrix": [[0, 1], [1%s, 0]]}]}'),
])
def test_the_cli_refuses_an_integer_beyond_float_range_in_a_problem_file(tmp_path, capsys, suffix, where, text):
    path = tmp_path / f"p{suffix}"
    path.write_text(text % ("0" * 400))
    rc, _, err = run(["solve", str(path), "-o", str(tmp_path / "m.json")], capsys)
    line = one_line(err)
    assert rc == 2 and BEYOND in line and "the integer ~1e400 is" in line
    assert (where in line) if suffix == ".json" else ("line 1" in line)
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("digits", [400, 5000])  # Python's own int() refuses more than 4300 digits
def test_an_integer_too_long_for_python_is_refused_the_same_way(tmp_path, digits):
    for name, text in [("p.yaml", "k: 2\nprivacy: [{notion: ldp, epsilon: 1%s}]\n"),
                       ("p.json", '{"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1%s}]}')]:
        (tmp_path / name).write_text(text % ("0" * digits))
        with pytest.raises(InputError, match=f"the integer ~1e{digits} is "):
            load_problem(tmp_path / name)


def test_a_decimal_beyond_float_range_is_not_read_as_infinity(tmp_path):
    """An E-LDP entry 1e400 would silently become inf (no constraint); .inf says so on purpose."""
    assert yaml.safe_load("x: 1.0e+400")["x"] == math.inf  # what a plain parser reads
    assert json.loads("1e400") == math.inf
    for name, text in [("p.yaml", "k: 2\nprivacy: [{notion: eldp, matrix: [[0, 1e400], [1, 0]]}]\n"),
                       ("p.json", '{"k": 2, "privacy": [{"notion": "eldp", "matrix": [[0, 1e400], [1, 0]]}]}')]:
        (tmp_path / name).write_text(text)
        with pytest.raises(InputError, match="the number 1e400 is " + BEYOND):
            load_problem(tmp_path / name)
    (tmp_path / "inf.yaml").write_text("k: 2\nprivacy: [{notion: eldp, matrix: [[0, .inf], [1, 0]]}]\n")
    assert load_problem(tmp_path / "inf.yaml").notions[0].matrix[0, 1] == math.inf


# -- 2. YAML aliases and anchors -----------------------------------------------------------------------


def _alias_bomb() -> str:
    """The "billion laughs": nine levels of nine aliases each, 9^9 strings once expanded, in ``name``."""
    levels = ["&a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        levels.append(f"&{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "k: 2\nprivacy: [{notion: ldp, epsilon: 1}]\nname: [" + ", ".join(levels) + "]\n"


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(_alias_bomb())
    assert len(path.read_bytes()) < 1500
    # in a child process with a memory ceiling, so that a regression fails instead of hanging the suite
    code = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
        from mechopt.cli import main
        sys.exit(main(["solve", {str(path)!r}, "-o", {str(tmp_path / "m.json")!r}]))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2, proc.stderr
    line = one_line(proc.stderr)
    assert "bomb.yaml: line 3" in line and "anchor &a is refused" in line


@pytest.mark.parametrize("text, what", [
    ("k: 2\nprivacy: [&p {notion: ldp, epsilon: 1}]\n", "anchor &p"),
    ("k: &k 2\nprivacy: [{notion: ldp, epsilon: 1}]\n", "anchor &k"),
    ("k: 2\nprivacy: [*p]\n", "alias *p"),  # an alias with no anchor is refused before PyYAML complains
])
def test_yaml_anchors_and_aliases_are_refused(text, what):
    with pytest.raises(InputError, match=re.escape(what) + " is refused"):
        parse_document(text, "p.yaml")


def test_a_yaml_merge_key_is_a_plain_key_not_a_merge():
    text = "k: 2\nprivacy: [{notion: ldp, epsilon: 0.1, <<: {epsilon: 50}}]\n"
    assert parse_document(text, "p.yaml")["privacy"][0] == {"notion": "ldp", "epsilon": 0.1, "<<": {"epsilon": 50}}
    with pytest.raises(InputError, match=r"privacy\[0\]\.<<: is not a field"):
        load_problem(parse_document(text, "p.yaml"))


# -- 3. duplicate keys ---------------------------------------------------------------------------------

DUP_YAML = "k: 2\nprivacy:\n  - notion: ldp\n    epsilon: 0.1\n    epsilon: 50\nobjective: {kind: expected_loss}\n"
DUP_JSON = '{"k": 2, "privacy": [{"notion": "ldp", "epsilon": 0.1, "epsilon": 50}]}'


def test_duplicate_keys_are_what_plain_parsers_silently_accept():
    """The hazard: both standard parsers keep the last value, so the problem would be solved at ε = 50."""
    assert yaml.safe_load(DUP_YAML)["privacy"][0]["epsilon"] == 50
    assert json.loads(DUP_JSON)["privacy"][0]["epsilon"] == 50


@pytest.mark.parametrize("name, text, expect", [
    ("p.yaml", DUP_YAML, "p.yaml: line 5: the key 'epsilon' appears twice in one mapping (first on line 4)"),
    ("p.json", DUP_JSON, "p.json: privacy[0]: has the key 'epsilon' twice"),
    ("p.yaml", "k: 2\nprivacy: [{notion: ldp, epsilon: 1}]\nk: 3\n", "line 3: the key 'k' appears twice"),
    ("p.yaml", "k: 2\nprivacy: [{notion: ldp, epsilon: 0.1, epsilon: 0.1}]\n", "the key 'epsilon' appears twice"),
    ("p.json", '{"k": 2, "k": 2, "privacy": []}', "p.json: has the key 'k' twice"),
    ("p.json", '{"k": 3, "privacy": [{"notion": "eldp", "matrix": [[0, 1, {"a": 1, "a": 1}]]}]}',
     "p.json: privacy[0].matrix[0][2]: has the key 'a' twice"),
])
def test_duplicate_keys_are_refused_naming_the_key_and_where(tmp_path, capsys, name, text, expect):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(expect)):
        load_problem(path)
    rc, _, err = run(["solve", str(path), "-o", str(tmp_path / "m.json")], capsys)
    assert rc == 2 and expect in one_line(err) and "duplicate keys are refused" in err
    assert not (tmp_path / "m.json").exists()


def test_a_file_without_the_duplicate_is_solved_at_its_own_epsilon(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(DUP_YAML.replace("    epsilon: 50\n", ""))
    assert load_problem(path).notions[0].epsilon == 0.1


def test_keys_equal_as_yaml_values_are_duplicates():
    """``1`` and ``0x1`` are the same integer key in YAML 1.2."""
    with pytest.raises(InputError, match="the key 1 appears twice"):
        parse_document("1: a\n0x1: b\n", "p.yaml")


# -- 4. deep nesting -----------------------------------------------------------------------------------

DEEP = {
    "yaml block sequences": "k: 2\nprivacy: [{notion: ldp, epsilon: 1}]\nname:\n" + "- " * 5000 + "x\n",
    "yaml block mappings": "k: 2\nprivacy: [{notion: ldp, epsilon: 1}]\nname:\n"
                           + "".join(" " * (i + 1) + f"a{i}:\n" for i in range(100)) + " " * 101 + "x\n",
    "yaml flow": "k: 2\nname: " + "[" * 100_000 + "]" * 100_000 + "\n",
    "json objects": '{"k": 2, "name": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001,
}


@pytest.mark.parametrize("case", sorted(DEEP))
def test_deep_nesting_is_one_line(tmp_path, capsys, case):
    path = tmp_path / ("p.json" if case.startswith("json") else "p.yaml")
    path.write_text(DEEP[case])
    rc, _, err = run(["solve", str(path), "-o", str(tmp_path / "m.json")], capsys)
    assert rc == 2 and f"nests deeper than {MAX_DEPTH} levels" in one_line(err)


def test_a_deep_dict_given_to_the_api_is_refused_without_recursion():
    name: object = "x"
    for _ in range(100_000):
        name = [name]
    with pytest.raises(InputError, match="nests deeper than 64 levels"):
        load_problem({"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1}], "name": name})


def test_brackets_inside_strings_are_not_nesting(tmp_path):
    """A label or name may contain brackets; only lists and mappings count."""
    path = tmp_path / "p.yaml"
    path.write_text("inputs: ['[[[', ']]]']\nprivacy: [{notion: ldp, epsilon: 1}]\nname: '" + "[" * 200 + "'\n")
    assert load_problem(path).name == "[" * 200
    name = "{" * 200 + '"\\"'  # quotes and backslashes inside the string, escaped by json.dumps
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"inputs": ["[[[", "]]]"], "privacy": [{"notion": "ldp", "epsilon": 1}], "name": name}))
    assert load_problem(path).name == name


def test_the_depth_limit_is_exact():
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert json_depth(ok) == MAX_DEPTH and loads_strict(ok, "a.json") is not None
    assert parse_document(ok, "a.yaml") is not None
    with pytest.raises(InputError, match="nests deeper"):
        loads_strict("[" + ok + "]", "a.json")
    with pytest.raises(InputError, match="nests deeper"):
        parse_document("[" + ok + "]", "a.yaml")


# -- YAML 1.1 types that YAML 1.2 core does not have ---------------------------------------------------


@pytest.mark.parametrize("tag", ["!!timestamp abc", "!!binary '%%%'", "!!set {a, b}", "!!omap [{a: 1}]",
                                 "!!pairs [{a: 1}]"])
def test_yaml_1_1_tags_are_refused(tag):
    with pytest.raises(InputError, match=re.escape(tag.split()[0]) + " is refused"):
        parse_document(f"k: 2\nname: {tag}\n", "p.yaml")


@pytest.mark.parametrize("text, rule", [("epsilon: !!int abc", "'abc' is not an integer"),
                                        ("epsilon: !!float abc", "'abc' is not a number")])
def test_explicit_number_tags_with_no_number_are_one_line(text, rule):
    with pytest.raises(InputError, match=re.escape(f"p.yaml: line 1: {rule}")):
        parse_document(text, "p.yaml")


@pytest.mark.parametrize("char", ["\x00", "\x02", "\x7f"])
def test_control_characters_in_yaml_are_one_line(char):
    with pytest.raises(InputError, match="p.yaml: is not valid YAML: unacceptable character"):
        parse_document(f"k: 2{char}\n", "p.yaml")


def test_dates_are_strings_as_in_yaml_1_2():
    assert parse_document("inputs: [2020-01-01, 2020-01-02]", "p.yaml") == {"inputs": ["2020-01-01", "2020-01-02"]}


# -- the strict JSON reader shared with the mechanism files --------------------------------------------


def test_loads_strict_reads_what_json_reads():
    doc = {"inputs": ["a", "b\u00e9", "[{"], "matrix": [[0.1, 0.9], [1, 0]], "n": None, "t": True,
           "big": 10**300, "tiny": 5e-324, "neg": -1.5e308, "nested": {"x": [{"y": []}]}}
    text = json.dumps(doc)
    assert loads_strict(text, "a.json") == json.loads(text) == doc


@pytest.mark.parametrize("text, expect", [
    ("[NaN]", "a.json: [0]: NaN is not a JSON number"),
    ('{"e": Infinity}', "a.json: e: Infinity is not a JSON number"),
    ('{"e": [1, -Infinity]}', "a.json: e[1]: -Infinity is not a JSON number"),
    ('{"e": -1e309}', "a.json: e: the number -1e309 is " + BEYOND),
    ('{"m": [[0, 1' + "0" * 400 + ']]}', "a.json: m[0][1]: the integer ~1e400 is " + BEYOND),
    ('{"a": {"b": 1, "c": 2, "b": 3}}', "a.json: a: has the key 'b' twice"),
    ('{"a": 1', "a.json: is not valid JSON"),
    ("[[Infinity0, 1]]", "a.json: is not valid JSON: Expecting ',' delimiter"),  # refused value, then bad syntax
    ('{"a": 1, "a": 2 "b"}', "a.json: is not valid JSON: Expecting ',' delimiter"),
    ("", "a.json: is not valid JSON"),
])
def test_loads_strict_refusals_name_the_place(text, expect):
    with pytest.raises(InputError, match=re.escape(expect)):
        loads_strict(text, "a.json")


def test_loads_strict_is_standard_library_only():
    """The device client imports it: it may import only the standard library and mechopt._errors."""
    src = Path(mechopt.__file__).with_name("_jsonsafe.py").read_text()
    imported = set(re.findall(r"^(?:from|import) ([\w.]+)", src, re.M))
    assert imported <= {"__future__", "json", "math", "re", "typing", "mechopt._errors"}, imported
    errors_src = Path(mechopt.__file__).with_name("_errors.py").read_text()
    assert set(re.findall(r"^(?:from|import) ([\w.]+)", errors_src, re.M)) <= {"__future__"}


# -- 5. one reader for problem files -------------------------------------------------------------------


def test_problem_files_are_parsed_in_one_place():
    """YAML is parsed only by mechopt._problem.parse_document; no module calls yaml.load/safe_load elsewhere."""
    root = Path(mechopt.__file__).parent
    users = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                   if re.search(r"yaml\.(safe_)?load\b|yaml\.(full_|unsafe_)?load\(", p.read_text()))
    assert users == [], users
    assert "yaml.SafeLoader" in (root / "_problem.py").read_text()


def test_a_huge_grid_of_places_is_refused_before_its_labels_are_built():
    """``places: {grid: [10**30, 2]}`` used to build labels forever."""
    doc = {"places": {"grid": [10**30, 2]}, "privacy": [{"notion": "metric", "epsilon": 1}],
           "objective": {"kind": "expected_loss"}}
    with pytest.raises(InputError, match=r"places\.grid: a 10+ x 2 grid has 20+ places; at most 100000"):
        load_problem(doc)


# -- docs/formats.md's table of refusals shows the messages these files produce ------------------------

DOC_EXAMPLES = [
    ("p.yaml", DUP_YAML),
    ("p.yaml", "k: 2\nprivacy: [{notion: ldp, epsilon: 1}]\nname: [&a [lol], *a]\n"),
    ("p.json", "[" * 65 + "]" * 65),
    ("p.json", '{"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1' + "0" * 400 + "}]}"),
    ("p.yaml", "k: 2\nprivacy: [{notion: eldp, matrix: [[0, 1e400], [1, 0]]}]\n"),
    ("p.json", '{"k": 2, "privacy": [{"notion": "eldp", "matrix": [[0, Infinity], [1, 0]]}]}'),
    ("p.yaml", "k: 2\nname: !!set {a}\n"),
]


def test_the_documented_messages_are_the_ones_produced(tmp_path):
    doc = (Path(__file__).parents[1] / "docs" / "formats.md").read_text()
    table = doc[doc.index("### How a problem file is read"):doc.index("## Mechanism file")]
    shown = [m.rstrip(" …") for m in re.findall(r"\| `([^`]*(?:refused|levels|float|number)[^`]*)` \|", table)]
    assert len(shown) == len(DOC_EXAMPLES)
    for (name, text), message in zip(DOC_EXAMPLES, shown):
        (tmp_path / name).write_text(text)
        with pytest.raises(InputError) as info:
            load_problem(tmp_path / name)
        got = str(info.value).replace(str(tmp_path) + "/", "")
        for part in message.split(" …"):
            assert part in got, (message, got)


def test_tradeoff_epsilons_beyond_float_range_are_one_line():
    prob = {"k": 3, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1}],
            "objective": {"kind": "expected_loss"}}
    with pytest.raises(InputError, match=r"epsilons\[1\]: the integer ~1e400 is " + BEYOND):
        mechopt.tradeoff(prob, [1, HUGE], quiet=True)


# -- found by mutating the fields of valid problems (15 000 mutations, 0 tracebacks after the fix) ------

MUTANTS = {
    "privacy[0].matrix: must be 3x3 (one row per input), got 100001 rows":  # allocated 75 GB
        base([{"notion": "eldp", "matrix": [0.1] * 100_001}]),
    "privacy[0].lower: must have one entry per input (3), got 40":
        base([{"notion": "bp_lip", "epsilon": 1, "lower": [0.0] * 40, "upper": [1.0] * 40}]),
    "upper: must be a list of numbers, one per input, got -1.0":
        base([{"notion": "bp_lip", "epsilon": 1, "lower": [0.1, 0.1, 0.1], "upper": -1.0}]),
    "places.labels: must be a list of labels, one per place, got True":
        {"places": {"xy": [[0, 0], [1, 2]], "labels": True}, "privacy": [{"notion": "metric", "epsilon": 1}]},
    "privacy[0]": base([{"notion": {"a": 1}, "epsilon": 1}]),
}


@pytest.mark.parametrize("expect", sorted(MUTANTS))
def test_mutated_fields_are_one_line(expect):
    with pytest.raises(InputError, match=re.escape(expect)):
        load_problem(MUTANTS[expect])


def test_many_repeated_labels_are_named_in_linear_time():
    """100 001 equal output labels: the repeated ones were found by list.count per label (quadratic)."""
    doc = base([{"notion": "ldp", "epsilon": 1}], outputs=["a"] * 100_001)
    with pytest.raises(InputError, match=re.escape("outputs: labels must be unique; repeated ['a']")):
        load_problem(doc)
    with pytest.raises(InputError, match=re.escape("'16', '17', '…']")):  # the first ten, sorted as strings
        load_problem(base([{"notion": "ldp", "epsilon": 1}], outputs=[str(i % 20) for i in range(100)]))


# -- a seeded mutation run: whatever a problem holds, the answer is a problem or one InputError ----------

SEED_PROBLEMS = [
    "inputs: [a, b, c]\noutputs: inputs\nprivacy:\n  - {notion: ldp, epsilon: 1.0}\n"
    "  - {notion: lip, epsilon: 0.5, prior: [0.2, 0.3, 0.5], delta: 0.01}\n"
    "objective: {kind: expected_loss, loss: hamming}\n",
    "k: 3\noutputs: free\nprivacy: [{notion: eldp, matrix: [[0, 1, .inf], [1, 0, 2], [3, 1, 0]]}]\n"
    "objective: {kind: mmse, values: [0, 1, 2]}\n",
    "k: 3\noutputs: inputs\nprivacy: [{notion: metric, epsilon: 1, edges: [['0', '1', 1.0], ['1', '2', 2]]}]\n"
    "objective: {kind: weighted, terms: [{weight: 1, kind: expected_loss}, {weight: 0.5, kind: worst_case_loss}]}\n",
    "k: 3\noutputs: free\nprivacy: [{notion: bp_lip, epsilon: 1, lower: [0.1, 0.1, 0.1], upper: [0.8, 0.8, 0.8]}]\n"
    "objective: {kind: estimation_variance, p0: [0.3, 0.3, 0.4]}\n",
    "k: 3\nprivacy: [{notion: uldp, epsilon: 1, sensitive: ['0']}, {notion: block, epsilon: 2, blocks: [['0', '1'], ['2']]}]\n"
    "objective: {kind: expected_loss, loss: [[0, 1, 2], [1, 0, 1], [2, 1, 0]]}\nconstraints: [{kind: max_loss, value: 0.9}]\n",
    "places: {xy: [[0, 0], [1, 2], [3, 1]], labels: [a, b, c]}\nprivacy: [{notion: metric, epsilon: 1}]\n"
    "objective: {kind: expected_loss, loss: squared}\n",
]
_DEEP: object = "x"
for _ in range(100):
    _DEEP = [_DEEP]
HOSTILE_VALUES = [HUGE, -HUGE, 10**300, 1e308, -1.0, 0, math.nan, math.inf, -math.inf, "inf", "x", "", None, True, [], {},
                  [[]], [1, 1, 1], [[1, 2], [3]], _DEEP, {"a": 1}, 2**63, 1e-320, "1e400", ["0"] * 3, [0.1] * 100_001,
                  100_001]
HOSTILE_TEXT = ["1" + "0" * 400, "1e400", "NaN", "Infinity", ".nan", "&a ", "*a", "<<", "!!set ", "!!timestamp ",
                "[" * 80, "]", "{", "}", "\n  epsilon: 2", ", epsilon: 3", "\x00", "\ufeff", "0x" + "f" * 300, "---"]


def _paths(node, path=()):
    yield path
    if len(path) < 6 and not (isinstance(node, list) and len(node) > 1000):
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in children:
            yield from _paths(value, path + (key,))


@pytest.mark.parametrize("seed", range(4))
def test_mutated_problems_are_read_or_refused_on_one_line(seed):
    import copy
    import random

    rng = random.Random(seed)
    outcomes = {"read": 0, "refused": 0}
    for _ in range(150):
        text = rng.choice(SEED_PROBLEMS)
        doc = None
        if rng.random() < 0.5:  # mutate the text
            for _ in range(rng.randint(1, 3)):
                pos = rng.randrange(len(text) + 1)
                text = text[:pos] + rng.choice(HOSTILE_TEXT) + text[pos + rng.randint(0, 3):]
        else:  # mutate the parsed fields
            doc = copy.deepcopy(parse_document(text, "seed.yaml"))
            for _ in range(rng.randint(1, 2)):
                path = rng.choice([p for p in _paths(doc) if p])
                parent = doc
                for key in path[:-1]:
                    parent = parent[key]
                parent[path[-1]] = rng.choice(HOSTILE_VALUES)
        try:
            load_problem(problem_from_dict_text(text) if doc is None else doc)
            outcomes["read"] += 1
        except InputError as err:
            assert "\n" not in str(err)
            outcomes["refused"] += 1
    assert outcomes["refused"] > 100  # the mutations do reach the checks


def problem_from_dict_text(text: str):
    """Parse text as a problem file would be parsed (YAML, or strict JSON for a JSON-looking text)."""
    json_only = text.lstrip().startswith("{")
    return parse_document(text, "p.json" if json_only else "p.yaml", json_only=json_only)


@pytest.mark.parametrize("xy, loss, expect", [
    ([[-1e308, 0], [1e308, 0]], "hamming", "places: two places are so far apart that their distance overflows"),
    ([[0, 0], [1e200, 1e200]], "squared", "objective.loss: the squared distance between two places overflows"),
])
def test_places_whose_distances_overflow_are_refused_not_infinitely_far(xy, loss, expect):
    """An overflowing distance read as inf would drop the metric constraint (or make the loss infinite)."""
    doc = {"places": {"xy": xy}, "privacy": [{"notion": "metric", "epsilon": 1, "distance": "euclidean"}],
           "objective": {"kind": "expected_loss", "loss": loss}}
    with pytest.raises(InputError, match=re.escape(expect)):
        load_problem(doc)
    doc["places"]["xy"] = [[0, 0], [3, 4]]  # the same problem at a sane scale: distance 5 (a 3-4-5 triangle)
    assert load_problem(doc).notions[0].distances(2)[0, 1] == 5.0
