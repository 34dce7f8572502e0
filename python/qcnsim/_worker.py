"""Entry point of a local sweep worker process: ``python -m qcnsim._worker`` (see executors.py)."""

from qcnsim.executors import worker_main

if __name__ == "__main__":
    worker_main()
