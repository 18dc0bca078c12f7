"""Seeded benchmarks of mechopt; each compares against a baseline run in the same process."""
