"""Solver back-ends and algorithms: labeled LP, extreme rays, column generation, design."""
