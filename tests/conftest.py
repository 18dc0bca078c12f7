"""Test-wide settings.

OpenBLAS's second thread makes small dense solves (SLSQP in the optimality tests) much
slower on this 2-core machine; one thread is set before numpy is imported.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
