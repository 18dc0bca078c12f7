"""Counting reports at volume: Parquet or CSV partitions, in this process or on a Dask cluster.

An estimator needs only the count of each output; the counting is the part that grows
with the number of reports, and the part that spreads over machines. Each partition (one
file) is counted on its own — a value count of one column: pyarrow reads it, numpy's
``bincount`` counts output indices, pyarrow's ``value_counts`` counts labels — and the
counts are summed by a tree reduction. With a Dask scheduler the files are grouped into
about :data:`TASKS_PER_THREAD` tasks per worker thread; a worker reads its files itself
(local paths must be on storage every worker sees; ``s3://``, ``gs://``... URLs are read
through fsspec) and sums them; the task sums are added on the workers in groups of
:data:`FAN_IN` until at most that many remain, which the caller adds: only one count
vector per task crosses the network.

The forms a partition may take (``docs/cli.md``, "estimate"):

- **Parquet** (detected by its magic bytes ``PAR1``): the column ``column`` (default
  ``report``; a file with one column needs no name). An integer column holds output
  *indices* (0-based, in the order of the mechanism's ``outputs``), a string or
  dictionary column output *labels*. With a ``count`` column beside it, each row is a
  pre-aggregated ``report, count`` pair.
- **CSV** (anything else; ``.gz``/``.bz2`` compressed by suffix): one report label per
  row; or ``label,count`` rows (the ``--counts`` format, optional header
  ``label,count``); or a header row naming the column, with a ``count`` column for
  pre-aggregated rows. Values in CSV are always labels, never indices.

A label repeated within one pre-aggregated file is refused (a hand-made file's likely
mistake); across files counts add up.
"""

from __future__ import annotations

import csv
import glob as _glob
import io
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mechopt._errors import InputError
from mechopt.runtime._inference import parse_counts_csv

__all__ = ["count_reports", "list_partitions"]

#: counts of this many tasks are added in one reduction task
FAN_IN = 8
#: on Dask, files are grouped into about this many tasks per worker thread: few enough that
#: scheduling costs little next to reading, enough to balance partitions of unequal size
TASKS_PER_THREAD = 2
#: output indices are widened for ``bincount`` this many at a time (256 KiB of int64)
BLOCK = 1 << 15
#: the name of the report column when none is given
DEFAULT_COLUMN = "report"
_PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
_CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".tsv", ".txt")
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class _Rejected:
    """An InputError raised in a worker, carried back as data (InputError does not pickle)."""

    field: str
    rule: str


# ------------------------------------------------------------------------- listing


def _is_url(source: str) -> bool:
    return "://" in source and not source.startswith("file://")


def _wanted(name: str) -> bool:
    """Data files of a partitioned folder; ``_SUCCESS``, ``_metadata``, hidden files are not."""
    return not name.startswith((".", "_")) and name.lower().endswith(_PARQUET_SUFFIXES + _CSV_SUFFIXES)


def list_partitions(source: str | Path) -> list[str]:
    """The files that ``source`` names: a file, a folder (searched recursively) or a glob.

    Parameters
    ----------
    source : str or pathlib.Path
        A local file, folder or glob pattern (``data/*.parquet``, ``data/**/*.csv``), or
        a URL fsspec reads (``s3://bucket/reports/``). In a folder, files ending in
        ``.parquet``, ``.parq``, ``.pq``, ``.csv``, ``.csv.gz``, ``.csv.bz2``, ``.tsv`` or
        ``.txt`` are partitions; names starting with ``.`` or ``_`` are skipped.

    Returns
    -------
    list of str
        Absolute paths (or URLs), sorted.

    Raises
    ------
    InputError
        When nothing matches, or a URL is given and fsspec is not installed.

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.mkdtemp()
    >>> for name in ("b.csv", "a.csv", "_SUCCESS"):
    ...     open(os.path.join(tmp, name), "w").close()
    >>> [os.path.basename(p) for p in list_partitions(tmp)]
    ['a.csv', 'b.csv']
    """
    source = str(source)
    if source.startswith("file://"):
        source = source[len("file://"):]
    if _is_url(source):
        return _list_url(source)
    path = Path(source).expanduser()
    if path.is_dir():
        files = sorted(str(p.resolve()) for p in path.rglob("*")
                       if p.is_file() and _wanted(p.name) and not any(part.startswith((".", "_"))
                                                                    for part in p.relative_to(path).parts[:-1]))
        if not files:
            raise InputError("counts", f"the folder {source!r} holds no .parquet or .csv partitions")
        return files
    if _GLOB_CHARS & set(source):
        files = sorted(str(Path(p).resolve()) for p in _glob.glob(str(path), recursive=True) if os.path.isfile(p))
        if not files:
            raise InputError("counts", f"no file matches {source!r}")
        return files
    if not path.is_file():
        raise InputError("counts", f"no such file or folder: {source!r}")
    return [str(path.resolve())]


def _list_url(url: str) -> list[str]:
    try:
        import fsspec
    except ImportError:
        raise InputError("counts", f"reading {url!r} needs fsspec (pip install mechopt[dask])") from None
    try:
        fs, root = fsspec.core.url_to_fs(url)
        if _GLOB_CHARS & set(root):
            found = fs.glob(root)
        elif fs.isdir(root):
            found = [p for p in fs.find(root) if _wanted(p.rsplit("/", 1)[-1])]
        else:
            found = [root] if fs.isfile(root) else []
    except (OSError, ValueError, ImportError) as err:
        raise InputError("counts", f"cannot list {url!r}: {err}") from None
    if not found:
        raise InputError("counts", f"nothing to count at {url!r}")
    return sorted(fs.unstrip_protocol(p) for p in found)


# ---------------------------------------------------------------- one partition


def _open(path: str):
    """A readable binary stream: fsspec for a URL; a local file decompressed by its suffix."""
    if _is_url(path):
        import fsspec

        return fsspec.open(path, "rb", compression="infer").open()
    if path.endswith(".gz"):
        import gzip

        return gzip.open(path, "rb")
    if path.endswith(".bz2"):
        import bz2

        return bz2.open(path, "rb")
    return open(path, "rb")


def _pyarrow(path: str):
    try:
        import pyarrow
    except ImportError:
        raise InputError(path, "reading Parquet or one-report-per-row CSV partitions needs pyarrow, which is not "
                               "installed; pip install mechopt[dask]") from None
    return pyarrow


def _is_parquet(path: str) -> bool:
    if _is_url(path):
        return path.lower().endswith(_PARQUET_SUFFIXES)
    with open(path, "rb") as f:
        return f.read(4) == b"PAR1"


def _add_codes(out: np.ndarray, codes: np.ndarray, path: str, m: int) -> None:
    """Add a chunk of output indices, refusing any outside [0, m).

    Codes of 8 or 16 bits are counted as unsigned (a negative one lands above 32 767), so
    the counting pass also finds a bad index; wider codes are checked first. ``bincount``
    wants machine integers: blocks of :data:`BLOCK` codes are widened into one small buffer
    that stays in cache, rather than the whole column into a fresh array (which, under an
    allocator that returns memory eagerly — Dask sets ``MALLOC_TRIM_THRESHOLD_`` in its
    workers — costs a page fault every 4 KiB).
    """
    n = codes.size
    if n == 0:
        return
    given = codes
    if codes.dtype.itemsize <= 2:
        codes = codes.view(f"u{codes.dtype.itemsize}")
    elif codes.min() < 0 or codes.max() >= m:
        _refuse_index(codes, path, m)
    buf = np.empty(min(n, BLOCK), dtype=np.intp)
    for start in range(0, n, BLOCK):
        block = buf[:min(BLOCK, n - start)]
        np.copyto(block, codes[start:start + BLOCK], casting="unsafe")
        counted = np.bincount(block, minlength=m)
        if len(counted) > m:
            _refuse_index(given, path, m)
        out += counted


def _refuse_index(codes: np.ndarray, path: str, m: int) -> None:
    bad = codes[(codes < 0) | (codes >= m)][0]
    raise InputError(path, f"output index {int(bad)} is not an output of the mechanism (indices are 0 to {m - 1})")


def _label_codes(values: Sequence[Any], index: dict[str, int], path: str, what: str) -> np.ndarray:
    """The output index of each distinct label; the first unknown one is refused, naming the file."""
    codes = np.empty(len(values), dtype=np.intp)
    for i, label in enumerate(values):
        j = index.get(label) if isinstance(label, str) else None
        if j is None:
            shown = list(index)[:8] + (["..."] if len(index) > 8 else [])
            raise InputError(path, f"{label!r} is not an output label of the mechanism ({what}); "
                                   f"expected one of {shown!r}")
        codes[i] = j
    return codes


def _add_value_counts(out: np.ndarray, column, index: dict[str, int], path: str, what: str) -> None:
    """Add a string column's counts: value counts of the distinct labels, then their indices."""
    import pyarrow.compute as pc

    if column.null_count:
        raise InputError(path, f"the {what} column has {column.null_count} empty values")
    vc = pc.value_counts(column)
    labels = vc.field("values").to_pylist()
    np.add.at(out, _label_codes(labels, index, path, what), vc.field("counts").to_numpy().astype(np.int64))


def _add_pairs(out: np.ndarray, labels, counts, index: dict[str, int], path: str, what: str) -> None:
    """Add pre-aggregated (label or index, count) rows; a value twice in one file is refused."""
    import pyarrow as pa

    if labels.null_count or counts.null_count:
        raise InputError(path, f"the pre-aggregated rows have empty values ({what} or count)")
    if not pa.types.is_integer(counts.type):
        raise InputError(path, f"the count column must hold integers, got {counts.type}")
    c = counts.to_numpy().astype(np.int64)
    if c.size and c.min() < 0:
        raise InputError(path, f"count must be a non-negative integer, got {int(c.min())}")
    if pa.types.is_integer(labels.type):
        codes = labels.to_numpy().astype(np.intp)
        if codes.size and (codes.min() < 0 or codes.max() >= len(out)):
            bad = int(codes.min()) if codes.min() < 0 else int(codes.max())
            raise InputError(path, f"output index {bad} is not an output of the mechanism "
                                   f"(indices are 0 to {len(out) - 1})")
    else:
        codes = _label_codes(labels.to_pylist(), index, path, what)
    uniq, first = np.unique(codes, return_counts=True)
    if (first > 1).any():
        label = list(index)[int(uniq[first > 1][0])]
        raise InputError(path, f"{label!r} is listed twice in this pre-aggregated file")
    np.add.at(out, codes, c)


def _pick_column(names: list[str], column: str | None, path: str, count_too: bool) -> str:
    if column is not None:
        if column not in names:
            raise InputError(path, f"has no column {column!r}; its columns are {names!r}")
        return column
    if DEFAULT_COLUMN in names:
        return DEFAULT_COLUMN
    rest = [n for n in names if not (count_too and n == "count")]
    if len(rest) == 1:
        return rest[0]
    raise InputError(path, f"has columns {names!r}: name the report column (--column)")


def _count_parquet(path: str, index: dict[str, int], column: str | None, out: np.ndarray) -> None:
    pa = _pyarrow(path)
    import pyarrow.parquet as pq

    with pq.ParquetFile(_open(path) if _is_url(path) else path) as pf:
        names = pf.schema_arrow.names
        col = _pick_column(names, column, path, "count" in names)
        aggregated = "count" in names and col != "count"
        table = pf.read(columns=[col, "count"] if aggregated else [col], use_threads=False)
    data = table.column(col)
    kind = data.type.value_type if pa.types.is_dictionary(data.type) else data.type
    if aggregated:
        _add_pairs(out, data.combine_chunks(), table.column("count").combine_chunks(), index, path, col)
    elif pa.types.is_integer(data.type):
        if data.null_count:
            raise InputError(path, f"the column {col!r} has {data.null_count} empty values")
        for chunk in data.chunks:
            _add_codes(out, chunk.to_numpy(), path, len(out))
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
        _add_value_counts(out, data, index, path, col)
    else:
        raise InputError(path, f"the column {col!r} holds {data.type}; expected output labels (strings) "
                               "or output indices (integers)")


def _first_row(path: str) -> list[str]:
    with _open(path) as f:
        head = f.read(1 << 16)
    text = head.decode("utf-8", errors="replace")
    for row in csv.reader(io.StringIO(text)):
        if row and any(cell.strip() for cell in row):
            return row
    return []


def _count_csv(path: str, index: dict[str, int], column: str | None, out: np.ndarray) -> None:
    row = _first_row(path)
    if not row:
        return
    name = column or DEFAULT_COLUMN
    if name in row and not (len(row) == 2 and row[1].strip().isdigit()):  # a header naming the column
        if len(row) == 1 and name in index:
            raise InputError(path, f"the first row {name!r} is both the column name and an output label: "
                                   "name the column otherwise (--column) and write that header")
        names, skip, col = row, 1, name
    elif len(row) == 2:  # label,count rows (the --counts format): its own parser and messages
        with _open(path) as f:
            try:
                text = f.read().decode("utf-8")
            except UnicodeDecodeError as err:
                raise InputError(path, f"is not UTF-8 text: {err}") from None
        try:
            out += parse_counts_csv(text, list(index), source=path).astype(np.int64)
        except InputError as err:
            if not err.rule.startswith("holds no reports"):  # an empty partition adds nothing
                raise
        return
    elif len(row) == 1:
        names, skip, col = ["report"], 0, "report"
    else:
        raise InputError(path, f"cannot tell the form of this CSV: its first row {row!r} is neither one report "
                               f"label, nor 'label,count', nor a header naming the column {name!r}")
    pa = _pyarrow(path)
    import pyarrow.csv as pcsv

    aggregated = "count" in names and col != "count"
    types = {col: pa.string()} | ({"count": pa.int64()} if aggregated else {})
    try:
        with (_open(path) if _is_url(path) else pa.input_stream(path, compression="detect")) as f:
            table = pcsv.read_csv(f, read_options=pcsv.ReadOptions(column_names=names, skip_rows=skip,
                                                                   use_threads=False),
                                  convert_options=pcsv.ConvertOptions(column_types=types,
                                                                      include_columns=list(types)))
    except pa.ArrowInvalid as err:
        raise InputError(path, f"cannot read as CSV: {str(err).splitlines()[0]}") from None
    if aggregated:
        _add_pairs(out, table.column(col).combine_chunks(), table.column("count").combine_chunks(), index, path,
                   col)
    else:
        _add_value_counts(out, table.column(col), index, path, col)


def count_partition(path: str, outputs: Sequence[str], column: str | None = None) -> np.ndarray | _Rejected:
    """The counts of one file (a worker's task); an input error comes back as data.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "part.csv")
    >>> _ = open(p, "w").write("y\\nn\\ny\\n")
    >>> count_partition(p, ["n", "y"]).tolist()
    [1, 2]
    """
    index = {y: j for j, y in enumerate(outputs)}
    out = np.zeros(len(outputs), dtype=np.int64)
    try:
        try:
            if _is_parquet(path):
                _count_parquet(path, index, column, out)
            else:
                _count_csv(path, index, column, out)
        except OSError as err:
            raise InputError(path, f"cannot read: {err}") from None
        except Exception as err:  # pyarrow's errors (ArrowInvalid, ...) name what is wrong in the file
            if isinstance(err, InputError) or type(err).__module__.split(".")[0] != "pyarrow":
                raise
            raise InputError(path, f"cannot read: {str(err).splitlines()[0]}") from None
    except InputError as err:
        return _Rejected(err.field, err.rule)
    return out


def sum_counts(*parts: np.ndarray | _Rejected) -> np.ndarray | _Rejected:
    """One step of the tree reduction; the first rejected part wins."""
    for p in parts:
        if isinstance(p, _Rejected):
            return p
    return np.sum(parts, axis=0, dtype=np.int64)


# ---------------------------------------------------------------------- schedulers


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise InputError("scheduler", "counting on Dask needs dask.distributed, which is not installed; "
                                      "pip install mechopt[dask]") from None
    return distributed


def open_client(scheduler: str) -> tuple[Any, bool]:
    """A Dask client for ``local:N`` (a LocalCluster started here) or a scheduler address.

    Returns the client and whether it was started here (and must be closed by the caller).
    """
    distributed = _import_distributed()
    if scheduler.startswith("local"):
        spec = scheduler[len("local"):]
        try:
            n = int(spec[1:]) if spec.startswith(":") else (os.cpu_count() or 1) if spec == "" else None
        except ValueError:
            n = None
        if n is None or n < 1:
            raise InputError("scheduler", f"must be 'local:N' with N >= 1 workers, or an address such as "
                                          f"tcp://host:8786, got {scheduler!r}")
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=logging.ERROR)
        return distributed.Client(cluster), True
    try:
        return distributed.Client(scheduler, timeout="10s"), True
    except (OSError, TimeoutError, ValueError) as err:
        raise InputError("scheduler", f"cannot connect to the Dask scheduler at {scheduler!r}: {err}") from None


def close_client(client) -> None:
    cluster = getattr(client, "cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


def count_files(paths: Sequence[str], outputs: Sequence[str], column: str | None = None) -> np.ndarray | _Rejected:
    """One task: the summed counts of a few files, one after the other (the first refusal stops it)."""
    total: np.ndarray | _Rejected = np.zeros(len(outputs), dtype=np.int64)
    for path in paths:
        total = sum_counts(total, count_partition(path, outputs, column))
        if isinstance(total, _Rejected):
            break
    return total


def _reduce_on(client, files: list[str], outputs: list[str], column: str | None):
    """Count on a Dask cluster: about :data:`TASKS_PER_THREAD` tasks per worker thread, then a tree of sums.

    Sums of :data:`FAN_IN` task results run on the workers until at most :data:`FAN_IN`
    remain; the calling process adds those (one round trip, not two).
    """
    threads = sum(client.nthreads().values()) or 1
    per_task = max(1, math.ceil(len(files) / (TASKS_PER_THREAD * threads)))
    groups = [files[i:i + per_task] for i in range(0, len(files), per_task)]
    level = client.map(count_files, groups, outputs=outputs, column=column, pure=False)
    while len(level) > FAN_IN:
        level = [client.submit(sum_counts, *level[i:i + FAN_IN], pure=False) for i in range(0, len(level), FAN_IN)]
    return sum_counts(*client.gather(level))


def count_reports(source: str | Path | Sequence[str], outputs: Sequence[str], *, column: str | None = None,
                  scheduler: Any = None) -> np.ndarray:
    """Count reports in Parquet or CSV partitions: one count per output.

    Parameters
    ----------
    source : str, pathlib.Path or sequence of str
        A file, a folder, a glob or a URL (see :func:`list_partitions`), or a list of files.
    outputs : sequence of str
        The mechanism's output labels, in order (an integer Parquet column holds indices
        into it).
    column : str or None, keyword-only
        The report column (default ``report``, or the only column).
    scheduler : None, str or dask.distributed.Client, keyword-only
        ``None``: count in this process, one file after the other. ``"local:N"``: a Dask
        ``LocalCluster`` of N single-threaded worker processes, started and closed here.
        An address (``tcp://host:8786``): that cluster's scheduler; its workers read the
        files. A ``dask.distributed.Client`` is used as is and left open.

    Returns
    -------
    numpy.ndarray of int64, shape (len(outputs),)

    Raises
    ------
    InputError
        When nothing matches ``source``, a file cannot be read, a label is not an output
        or an index is out of range (the message names the file), a pre-aggregated count
        is negative or not an integer, or the scheduler cannot be started or reached.

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.mkdtemp()
    >>> _ = open(os.path.join(tmp, "part-0.csv"), "w").write("a\\nb\\nb\\n")
    >>> _ = open(os.path.join(tmp, "part-1.csv"), "w").write("label,count\\nc,5\\nb,1\\n")
    >>> count_reports(tmp, ["a", "b", "c"]).tolist()
    [1, 3, 5]
    """
    outputs = [str(y) for y in outputs]
    if isinstance(source, (str, Path)):
        files = list_partitions(source)
    else:
        files = [f for s in source for f in list_partitions(s)]
        if not files:
            raise InputError("counts", "no files given")
    if scheduler is None:
        total = count_files(files, outputs, column)
    elif isinstance(scheduler, str):
        client, _ = open_client(scheduler)
        try:
            total = _reduce_on(client, files, outputs, column)
        finally:
            close_client(client)
    else:
        total = _reduce_on(scheduler, files, outputs, column)
    if isinstance(total, _Rejected):
        raise InputError(total.field, total.rule)
    return total
