"""LP back-ends and what certifies their answers.

Owns: the registered adapters and the one policy that picks one (:mod:`._adapters`:
``register_backend``, ``choose``, ``LinearProgram``, retries), certified bounds from any
solver's duals (:mod:`._safe_bound`) and the safe branch and bound of 0/1 programs
(:mod:`._safe_bnb`). Every HiGHS or cvxpy object of the solve wing is created here.

May import: numpy, scipy, highspy, cvxpy, and :mod:`mechopt._errors`. Nothing else of mechopt.
"""
