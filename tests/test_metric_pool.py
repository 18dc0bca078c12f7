"""The IPM's pool of large arrays (solvers/metric/_pool.py) and the shared pair rows' products into it."""

from __future__ import annotations

import gc

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import mechopt.solvers.metric._pool as pool
from mechopt.solvers.metric._rows import SharedRows


def _small_pool(monkeypatch, nbytes: int = 8 * 1024) -> None:
    monkeypatch.setattr(pool, "FROM_BYTES", nbytes)


def test_a_block_is_not_reused_while_any_view_of_it_lives(monkeypatch):
    _small_pool(monkeypatch)
    with pool.pooled():
        a = pool.empty((2048,))
        a[:] = 1.0
        address = a.ctypes.data
        tail = a[1024:].reshape(32, 32).T  # a view of a view: keeps the block too
        del a
        gc.collect()
        b = pool.empty((2048,))
        assert b.ctypes.data != address  # the first block is still read through ``tail``
        b[:] = 2.0
        assert np.all(tail == 1.0)
        del tail
        gc.collect()
        c = pool.empty((2048,))
        assert c.ctypes.data == address  # now free: the same memory again
        assert pool.held_bytes() == 0


def test_a_request_takes_the_same_size_or_with_fit_the_smallest_block_that_holds_it(monkeypatch):
    _small_pool(monkeypatch, 1024)
    with pool.pooled():
        big, small = pool.empty((4096,)), pool.empty((2048,))  # 32 and 16 KiB
        addresses = {big.ctypes.data: "big", small.ctypes.data: "small"}
        del big, small
        gc.collect()
        assert pool.held_bytes() == 48 * 1024
        w = pool.empty((1500,))  # 12 KiB, no fit: no block of that size, a new one
        assert w.ctypes.data not in addresses
        x = pool.empty((1500,), np.float64, fit=4)  # the 16 KiB block
        assert addresses[x.ctypes.data] == "small"
        y = pool.empty((1100,), np.float64, fit=4)  # 8.8 KiB: the 32 KiB block is within 4 times
        assert addresses[y.ctypes.data] == "big"
        z = pool.empty((1100,), np.float64, fit=4)  # nothing free: a new block
        assert z.ctypes.data not in addresses
        assert x.shape == (1500,) and y.dtype == np.float64 and z.flags.c_contiguous
        del x
        gc.collect()
        v = pool.empty((480,), np.float64, fit=4)  # 3.75 KiB: 16 KiB is over 4 times, a new block
        assert v.base is not None and addresses.get(v.ctypes.data) is None
        assert pool.held_bytes() == 16 * 1024


def test_outside_the_pool_and_below_its_size_arrays_are_plain(monkeypatch):
    _small_pool(monkeypatch)
    a = pool.empty((4096,))
    assert a.base is None  # numpy's own array, nothing kept
    with pool.pooled():
        b = pool.empty((16,))
        assert b.base is None
        c = pool.empty((4096,))
        assert c.base is not None
    del c
    gc.collect()
    assert pool.held_bytes() == 0  # let go on leaving, and blocks freed later are not kept


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 12), st.integers(1, 9), st.integers(0, 2**31 - 1), st.booleans())
def test_shared_rows_products_equal_scipys_to_the_bit(n, k, m, seed, threaded):
    """``A @ Q`` and ``A.T @ Pi`` into pooled arrays, in threaded row parts or not: scipy's numbers."""
    import mechopt.solvers.metric._rows as rows

    rng = np.random.default_rng(seed)
    A = sp.random(n, k, density=0.4, random_state=seed, format="csr")
    Q, Pi = rng.normal(size=(k, m)), rng.normal(size=(n, m))
    old = rows.SPLIT_FROM
    rows.SPLIT_FROM = 1 if threaded else old
    try:
        S = SharedRows(A)
        assert np.array_equal(S @ Q, A @ Q)
        assert np.array_equal(S.T @ Pi, A.T.tocsr() @ Pi)
        assert S.T.T is S
    finally:
        rows.SPLIT_FROM = old
