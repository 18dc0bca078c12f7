"""Counting reports in Parquet/CSV partitions (mechopt.runtime.count_reports, estimate --counts)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechopt
from mechopt._errors import InputError
from mechopt.cli import main
from mechopt.runtime import count_reports, list_partitions

pa = pytest.importorskip("pyarrow", reason="counting partitions needs pyarrow (pip install mechopt[dask])")
pq = pytest.importorskip("pyarrow.parquet", reason="counting partitions needs pyarrow (pip install mechopt[dask])")

OUTPUTS = ["news", "mail", "shop,online", "vidéo", "clinic"]  # a comma and a non-ASCII label on purpose


def _labels(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [OUTPUTS[j] for j in rng.choice(len(OUTPUTS), size=n, p=[0.4, 0.3, 0.15, 0.1, 0.05])]


def _direct(labels: list[str]) -> list[int]:
    """The count the tests compare with: a plain Python tally, independent of the code under test."""
    return [labels.count(y) for y in OUTPUTS]


def _write_csv(path, labels, header=None):
    import csv

    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        if header:
            w.writerow([header])
        for y in labels:
            w.writerow([y])


def test_parquet_index_partitions_equal_a_direct_count(tmp_path):
    rng = np.random.default_rng(1)
    parts = [rng.integers(0, len(OUTPUTS), size=n).astype(dt) for n, dt in
             [(100_000, np.int16), (1, np.int8), (2500, np.int32), (700, np.int64), (300, np.uint64), (90, np.uint8)]]
    for i, codes in enumerate(parts):
        # small row groups: a column arrives in several chunks
        pq.write_table(pa.table({"report": codes}), tmp_path / f"part-{i}.parquet", row_group_size=300)
    allc = np.concatenate(parts)
    expected = [int((allc == j).sum()) for j in range(len(OUTPUTS))]
    assert count_reports(tmp_path, OUTPUTS).tolist() == expected
    assert count_reports(str(tmp_path / "part-*.parquet"), OUTPUTS).tolist() == expected


def test_parquet_label_columns_strings_and_dictionaries(tmp_path):
    a, b = _labels(800, 2), _labels(500, 3)
    pq.write_table(pa.table({"user": list(range(800)), "report": a}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"answer": pa.array(b).dictionary_encode()}), tmp_path / "b.parquet")
    # b has one column: no name needed; a has two: 'report' is taken
    assert count_reports(tmp_path, OUTPUTS).tolist() == _direct(a + b)
    assert count_reports(tmp_path / "b.parquet", OUTPUTS, column="answer").tolist() == _direct(b)
    with pytest.raises(InputError, match=r"a\.parquet: has no column 'answer'"):
        count_reports(tmp_path, OUTPUTS, column="answer")


def test_csv_partitions_with_and_without_header_and_compressed(tmp_path):
    a, b, c = _labels(600, 4), _labels(400, 5), _labels(300, 6)
    _write_csv(tmp_path / "a.csv", a)
    _write_csv(tmp_path / "b.csv", b, header="report")
    with gzip.open(tmp_path / "c.csv.gz", "wt", encoding="utf-8", newline="") as f:
        f.write("".join(f'"{y}"\r\n' for y in c))  # quoted, CRLF
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / ".hidden.csv").write_text("nonsense\n")
    assert count_reports(tmp_path, OUTPUTS).tolist() == _direct(a + b + c)
    # a multi-column CSV with a header: the report column is picked by name
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.csv").write_text("user,answer\n1,news\n2,clinic\n3,news\n", encoding="utf-8")
    assert count_reports(tmp_path / "d", OUTPUTS, column="answer").tolist() == [2, 0, 0, 0, 1]


def test_pre_aggregated_forms_add_up_across_files(tmp_path):
    (tmp_path / "1.csv").write_text('news,5\n"shop,online",7\n', encoding="utf-8")      # the --counts format
    (tmp_path / "2.csv").write_text("label,count\nnews,1\nclinic,2\n", encoding="utf-8")
    (tmp_path / "3.csv").write_text("report,count\nmail,3\nvidéo,4\n", encoding="utf-8")
    pq.write_table(pa.table({"report": ["news", "mail"], "count": [10, 20]}), tmp_path / "4.parquet")
    pq.write_table(pa.table({"report": pa.array([4, 0], pa.int16()), "count": [100, 1000]}), tmp_path / "5.parquet")
    assert count_reports(tmp_path, OUTPUTS).tolist() == [5 + 1 + 10 + 1000, 3 + 20, 7, 4, 2 + 100]
    (tmp_path / "6.parquet").write_bytes(b"")
    pq.write_table(pa.table({"report": ["news", "news"], "count": [1, 2]}), tmp_path / "6.parquet")
    with pytest.raises(InputError, match=r"6\.parquet: 'news' is listed twice"):
        count_reports(tmp_path, OUTPUTS)
    pq.write_table(pa.table({"report": ["news"], "count": [-1]}), tmp_path / "6.parquet")
    with pytest.raises(InputError, match=r"6\.parquet: count must be a non-negative integer, got -1"):
        count_reports(tmp_path, OUTPUTS)


def test_the_counts_csv_format_needs_no_pyarrow(tmp_path, monkeypatch):
    (tmp_path / "c.csv").write_text('label,count\nnews,5\n"shop,online",7\n', encoding="utf-8")
    (tmp_path / "empty.csv").write_text("label,count\n", encoding="utf-8")
    _write_csv(tmp_path / "r.csv", ["news"])
    monkeypatch.setitem(__import__("sys").modules, "pyarrow", None)  # as if it were not installed
    assert count_reports([str(tmp_path / "c.csv"), str(tmp_path / "empty.csv")], OUTPUTS).tolist() == [5, 0, 7, 0, 0]
    with pytest.raises(InputError, match=r"r\.csv: reading .* needs pyarrow, which is not installed"):
        count_reports(tmp_path / "r.csv", OUTPUTS)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, len(OUTPUTS) - 1), min_size=1, max_size=60), st.data())
def test_counts_do_not_depend_on_how_the_reports_are_split(tmp_path_factory, codes, data):
    """The law behind the tree reduction: any split into partitions gives the same counts."""
    tmp = tmp_path_factory.mktemp("split")
    cuts = sorted(data.draw(st.lists(st.integers(0, len(codes)), max_size=5)))
    bounds = [0, *cuts, len(codes)]
    for i, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        piece = codes[lo:hi]
        if i % 2:
            pq.write_table(pa.table({"report": pa.array(piece, pa.int16())}), tmp / f"{i}.parquet")
        else:
            _write_csv(tmp / f"{i}.csv", [OUTPUTS[j] for j in piece])
    assert count_reports(tmp, OUTPUTS).tolist() == [codes.count(j) for j in range(len(OUTPUTS))]


def test_bad_partitions_are_refused_naming_the_label_and_file(tmp_path):
    _write_csv(tmp_path / "ok.csv", ["news"])
    _write_csv(tmp_path / "bad.csv", ["news", "weather"])
    with pytest.raises(InputError, match=r"bad\.csv: 'weather' is not an output label"):
        count_reports(tmp_path, OUTPUTS)
    for codes, bad in [(pa.array([0, 5], pa.int16()), 5), (pa.array([-1, 0], pa.int16()), -1),
                       (pa.array([0, 2 ** 40], pa.int64()), 2 ** 40), (pa.array([40000], pa.uint16()), 40000)]:
        pq.write_table(pa.table({"report": codes}), tmp_path / "bad.parquet")
        with pytest.raises(InputError, match=rf"bad\.parquet: output index {bad} is not an output"):
            count_reports(tmp_path / "bad.parquet", OUTPUTS)
    late = np.zeros(70_000, dtype=np.int16)
    late[-1] = 9  # in the last block
    pq.write_table(pa.table({"report": late}), tmp_path / "bad.parquet")
    with pytest.raises(InputError, match=r"bad\.parquet: output index 9 is not an output"):
        count_reports(tmp_path / "bad.parquet", OUTPUTS)
    pq.write_table(pa.table({"report": [1.5]}), tmp_path / "bad.parquet")
    with pytest.raises(InputError, match=r"holds double; expected output labels"):
        count_reports(tmp_path / "bad.parquet", OUTPUTS)
    (tmp_path / "three.csv").write_text("a,b,c\n")
    with pytest.raises(InputError, match=r"three\.csv: cannot tell the form"):
        count_reports(tmp_path / "three.csv", OUTPUTS)
    (tmp_path / "amb.csv").write_text("news\nmail\n")
    with pytest.raises(InputError, match=r"both the column name and an output label"):
        count_reports(tmp_path / "amb.csv", OUTPUTS, column="news")
    with pytest.raises(InputError, match=r"no file matches"):
        count_reports(str(tmp_path / "*.nothing"), OUTPUTS)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"holds no \.parquet or \.csv partitions"):
        list_partitions(tmp_path / "empty")


@pytest.fixture
def mech_file(tmp_path):
    Q = (np.full((len(OUTPUTS), len(OUTPUTS)), 1.0) + np.eye(len(OUTPUTS))) / (len(OUTPUTS) + 1)  # ratio 2 < e
    path = tmp_path / "m.json"
    mechopt.Mechanism.from_channel(Q, [{"notion": "ldp", "epsilon": 1.0}], inputs=OUTPUTS, outputs=OUTPUTS).save(path)
    return path


def test_cli_estimate_from_partitions_equals_estimate_from_reports(tmp_path, mech_file, capsys):
    a, b = _labels(3000, 7), _labels(2000, 8)
    (tmp_path / "parts").mkdir()
    _write_csv(tmp_path / "parts" / "a.csv", a)
    pq.write_table(pa.table({"report": pa.array([OUTPUTS.index(y) for y in b], pa.int16())}),
                   tmp_path / "parts" / "b.parquet")
    (tmp_path / "reports.txt").write_text("".join(y + "\n" for y in a + b), encoding="utf-8")
    assert main(["estimate", str(mech_file), "--counts", str(tmp_path / "parts"), "--json"]) == 0
    from_parts = json.loads(capsys.readouterr().out)
    assert main(["estimate", str(mech_file), "--reports", str(tmp_path / "reports.txt"), "--json"]) == 0
    assert from_parts == json.loads(capsys.readouterr().out) and from_parts["n"] == 5000
    _write_csv(tmp_path / "parts" / "c.csv", ["news", "gym"])
    assert main(["estimate", str(mech_file), "--counts", str(tmp_path / "parts")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "c.csv: 'gym' is not an output label" in err[0]
    for bad in (["--scheduler", "local:0"], ["--scheduler", "local:x"]):
        assert main(["estimate", str(mech_file), "--counts", str(tmp_path / "parts"), *bad]) == 2
        assert "scheduler: must be 'local:N'" in capsys.readouterr().err
    assert main(["estimate", str(mech_file), "--reports", str(tmp_path / "reports.txt"), "--column", "x"]) == 2
    assert "column: applies to --counts" in capsys.readouterr().err


def test_a_two_worker_local_cluster_counts_the_same(tmp_path, mech_file, capsys, monkeypatch):
    """Dask: a LocalCluster of 2 worker processes (a few seconds to start) and its scheduler address."""
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (mechopt[dask])")
    from mechopt.runtime._counting import close_client, open_client

    labels = []
    for i in range(12):
        part = _labels(200 + 37 * i, 10 + i)
        labels += part
        if i % 3:
            _write_csv(tmp_path / f"p{i:02d}.csv", part)
        else:
            pq.write_table(pa.table({"report": part}), tmp_path / f"p{i:02d}.parquet")
    client, _ = open_client("local:2")
    try:
        assert isinstance(client, distributed.Client) and len(client.nthreads()) == 2
        assert count_reports(tmp_path, OUTPUTS, scheduler=client).tolist() == _direct(labels)
        from mechopt.runtime import _counting

        monkeypatch.setattr(_counting, "TASKS_PER_THREAD", 10)  # 12 one-file tasks: sums run on the workers too
        assert count_reports(tmp_path, OUTPUTS, scheduler=client).tolist() == _direct(labels)
        address = client.scheduler.address
        assert main(["estimate", str(mech_file), "--counts", str(tmp_path), "--scheduler", address, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["n"] == len(labels)
        _write_csv(tmp_path / "p99.csv", ["nope"])
        with pytest.raises(InputError, match=r"p99\.csv: 'nope' is not an output label"):
            count_reports(tmp_path, OUTPUTS, scheduler=client)
    finally:
        close_client(client)


def test_the_benchmark_data_is_what_its_manifest_says(tmp_path):
    """benchmarks/bench_counting.py checks every timed count against its manifest: the manifest must be right."""
    from benchmarks.bench_counting import TRUE_P, generate, measure_in_process

    manifest = generate(tmp_path, 6000, 3, log=lambda *a: None)
    files = [str(tmp_path / f"part-{i:04d}.parquet") for i in range(3)]
    for path, expected in zip(files, manifest["per_file"]):
        codes = pq.read_table(path).column("report").to_numpy()
        assert codes.dtype == np.int16 and np.bincount(codes, minlength=len(expected)).tolist() == expected
    assert sum(map(sum, manifest["per_file"])) == 6000
    assert mechopt.Mechanism.load(tmp_path / "mechanism.json").outputs == tuple(manifest["outputs"])
    measure_in_process(files, manifest["outputs"], np.sum(manifest["per_file"], axis=0))  # raises on a wrong count
    with pytest.raises(AssertionError, match="expected"):  # a wrong expectation is caught
        measure_in_process(files, manifest["outputs"], np.zeros(len(manifest["outputs"]), dtype=int))
    assert len(TRUE_P) == len(mechopt.Mechanism.load(tmp_path / "mechanism.json").inputs)
