"""Write a synthetic street-network problem: GraphML, check-ins and a problem file.

``python -m benchmarks.street_city --nodes 2000 --seed 7 --epsilon 4 -o /tmp/city`` writes
``/tmp/city/streets_2000.{graphml,yaml}`` and ``streets_2000_checkins.csv``
(:func:`mechopt._street.write_city`); ``problems/geo_streets.yaml`` is
``--nodes 120 --seed 7 --epsilon 4 --name geo_streets -o problems``.
"""

from __future__ import annotations

import argparse

from mechopt._street import write_city


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2000, help="intersections (default 2000)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--epsilon", type=float, default=4.0, help="metric privacy budget per km (default 4)")
    ap.add_argument("--name", default=None, help="file stem (default streets_NODES)")
    ap.add_argument("-o", "--out", default=".", help="directory to write into")
    args = ap.parse_args(argv)
    print(write_city(args.out, args.nodes, args.seed, name=args.name, epsilon=args.epsilon))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
