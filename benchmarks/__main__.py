"""``python -m benchmarks [--quick] [--json out.json] [--md out.md]``: see :mod:`benchmarks.run`."""

from benchmarks.run import main

# the guard matters: Dask and process-pool workers started with "spawn" re-import __main__
if __name__ == "__main__":
    main()
