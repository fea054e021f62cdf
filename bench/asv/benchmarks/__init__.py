"""asv benchmark suite of sgmcmc-bench (see ``bench/asv/asv.conf.json``).

Run once, quickly, in the current environment (the ``asv-quick`` tox environment)::

    asv machine --yes --config bench/asv/asv.conf.json
    asv run --python=same --quick --show-stderr --config bench/asv/asv.conf.json

The project must be importable in that environment (``pip install -e ".[bench]"``).
"""
