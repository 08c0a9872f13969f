"""Speed benchmarks. ``python -m bench`` (``make bench``) runs the suite (``bench/suite.py``).

Modules: ``hooks`` (P1 fast paths), ``atof`` (relay throughput), ``session`` (P3),
``atif_convert`` (P4), ``concurrency`` (P5), ``many_agents`` (M), ``otel`` and
``turn_overhead`` (details), with
``reference`` (the nemo-relay / Hermes worker run inside ``.venv-bench``), ``env`` (that
environment) and ``model_server`` (the scripted server in its own process). Each prints
measured figures next to their goals; none asserts on time.
"""
