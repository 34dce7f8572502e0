"""Executors: where the runs of a sweep are simulated.

An executor has one method, ``map(text, tasks)``: a generator that runs every
:class:`Task` (one replication of one sweep point, on the scenario ``text``) and yields one
``(task, status, payload)`` per task, in completion order:

- ``("ok", raw)``: ``raw`` is the dict returned by ``qcnsim._core.run`` (plain bytes and
  strings, cheap to pickle); the sweep runner turns it into :class:`qcnsim.Results` and writes it.
- ``("error", message)``: the run raised (e.g. a panic caught by the core).
- ``("lost", message)``: the worker process running the task died (killed, out of memory).

Executors never retry a task that was attempted; the sweep runner does (a task that fails twice
is recorded as failed). They do re-queue, without counting an attempt, the tasks that were
waiting behind a lost one. Simulation happens in the workers; results travel back to the
process that called ``map``, which is the only one that writes to the sweep directory, so a
cluster needs no shared filesystem.

Two executors ship:

- :class:`LocalExecutor` (default): ``jobs`` worker processes (default: all cores), each a fresh
  ``python -m qcnsim._worker``; each gets chunks of tasks over its stdin and sends back one
  message per task over its stdout, so a dead worker costs only the task it was running.
- :class:`DaskExecutor`: a ``dask.distributed`` cluster (``pip install 'qcnsim[dask]'``) given by
  its scheduler address (``tcp://HOST:PORT``), an existing ``distributed.Client``, or, with
  neither, a ``LocalCluster`` of ``jobs`` single-threaded worker processes. qcnsim must be
  installed on the workers. At most one chunk per worker thread is in flight, so a chunk never
  waits on a worker behind another one and a dead worker costs only the chunk it was running.

Both send several tasks per message (chunks) so that a sweep of many short points is not
dominated by per-task overhead.

Ctrl-C while local workers run sets a flag (:class:`_CtrlC`); ``map`` then stops and reaps every
worker before it raises :class:`KeyboardInterrupt`, so no worker outlives the sweep process.
"""

from __future__ import annotations

import math
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, Sequence, Tuple

Outcome = Tuple["Task", str, Any]
TaskFn = Callable[[str, Sequence[str], int], Tuple[str, Any]]

POLL_S = 0.1  # how often the local executor looks at a pending Ctrl-C while it waits


@dataclass(frozen=True)
class Task:
    """One run: replication ``rep`` of point ``point`` (its id) with ``overrides`` and ``seed``."""

    point: str
    rep: int
    overrides: Tuple[str, ...]
    seed: int

    @property
    def key(self) -> Tuple[str, int]:
        return (self.point, self.rep)


def run_task(text: str, overrides: Sequence[str], seed: int) -> Tuple[str, Any]:
    """Run one replication in this process: ``("ok", raw core result)`` or ``("error", message)``."""
    from . import _core

    try:
        return "ok", _core.run(text, list(overrides), seed, None)
    except KeyboardInterrupt:
        raise
    except _core.ScenarioError as e:
        return "error", f"ScenarioError: {e.args[0] if e.args else e}"
    except Exception as e:  # noqa: BLE001 - any failure of one run is recorded, the sweep goes on
        return "error", f"{type(e).__name__}: {e}"


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def chunk_size(n_tasks: int, workers: int, cap: int = 32) -> int:
    """Tasks per message: about four chunks per worker, at most ``cap``."""
    return max(1, min(cap, math.ceil(n_tasks / max(1, 4 * workers))))


def task_fn_name(fn: TaskFn) -> str:
    """``module:qualname`` of a module-level function (how a worker process finds it)."""
    mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not mod or "<" in qual or mod == "__main__":
        raise ValueError(f"task_fn must be a function defined at module level in an importable module, got {fn!r}")
    return f"{mod}:{qual}"


def _send(f, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(struct.pack("<Q", len(data)))
    f.write(data)
    f.flush()


def _recv(f) -> Any:
    head = f.read(8)
    if len(head) < 8:
        raise EOFError
    (n,) = struct.unpack("<Q", head)
    data = f.read(n)
    if len(data) < n:
        raise EOFError
    return pickle.loads(data)


class _Worker:
    """A worker process (``python -m qcnsim._worker``) fed over its stdin and answering over its
    stdout; a thread forwards its answers into the executor's queue, then ``("exit", code)``."""

    def __init__(self, setup: Dict[str, Any], inbox: "queue.Queue[Tuple[_Worker, Any]]") -> None:
        env = dict(os.environ)
        env.setdefault("POLARS_MAX_THREADS", "1")
        # Own session / process group: a Ctrl-C at the terminal reaches only this process, which
        # stops the workers itself (a worker interrupted while starting would print a traceback).
        detach: Dict[str, Any] = ({"start_new_session": True} if os.name == "posix"
                                  else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)})
        self.proc = subprocess.Popen([sys.executable, "-m", "qcnsim._worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, **detach)
        self.pid = self.proc.pid
        self.pending: Deque[Task] = deque()
        self.alive = True
        _send(self.proc.stdin, setup)
        self.thread = threading.Thread(target=self._read, args=(inbox,), daemon=True)
        self.thread.start()

    def _read(self, inbox) -> None:
        try:
            while True:
                inbox.put((self, _recv(self.proc.stdout)))
        except (EOFError, OSError, pickle.UnpicklingError):
            pass
        inbox.put((self, ("exit", self.proc.wait())))

    def send(self, batch: Optional[List[Task]]) -> bool:
        try:
            _send(self.proc.stdin, batch)
            return True
        except (OSError, ValueError):  # the worker is gone; its reader thread reports the exit
            return False

    def request_stop(self) -> None:
        """Ask the worker to finish its pending tasks and exit (end of its input)."""
        if self.proc.poll() is None:
            self.send(None)
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def reap(self, deadline: float) -> None:
        """Wait for the exit asked by :meth:`request_stop` until ``deadline`` (monotonic), then
        terminate, then kill; the process is always waited for (never left a zombie)."""
        for escalate in (None, self.proc.terminate, self.proc.kill):
            if escalate is not None:
                escalate()
                deadline = time.monotonic() + 2.0
            try:
                self.proc.wait(max(0.0, deadline - time.monotonic()))
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            self.proc.wait()  # killed: reap it whatever it takes
        self.thread.join(2.0)


def _stop_workers(workers: Sequence[_Worker], grace: float = 2.0) -> None:
    """Stop every worker: all are asked at once, so they wind down in parallel."""
    for w in workers:
        w.request_stop()
    deadline = time.monotonic() + grace
    for w in workers:
        w.reap(deadline)


class _CtrlC:
    """Ctrl-C while worker processes run: while active, SIGINT only sets ``hit``, and the loop
    that owns the workers raises :class:`KeyboardInterrupt` itself at a safe point, after
    stopping and reaping every worker. An exception raised by the default handler at an arbitrary
    bytecode (inside a lock, a queue, the cleanup itself) could leave a worker running or
    unreaped. Installed only on the main thread and only over Python's default handler (a
    handler the application installed, or SIGINT ignored, is left alone)."""

    def __init__(self) -> None:
        self.hit = False
        self._old: Any = None

    def _on_sigint(self, signum, frame) -> None:
        self.hit = True

    def __enter__(self) -> "_CtrlC":
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self._old = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None


class LocalExecutor:
    """Worker processes on this machine (``jobs``, default: every core this process may use).

    Workers are fresh interpreters (``python -m qcnsim._worker``), not forks: safe with threaded
    libraries, and the caller's ``__main__`` is never re-imported (no ``if __name__ ==
    "__main__"`` guard needed). ``task_fn`` (for tests) must be importable by name."""

    name = "local"

    def __init__(self, jobs: Optional[int] = None, chunk: Optional[int] = None,
                 task_fn: TaskFn = run_task) -> None:
        if jobs is not None and (not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1):
            raise ValueError(f"jobs must be a whole number of at least 1, got {jobs!r}")
        self.jobs = jobs or default_jobs()
        self.chunk = chunk
        self.task_fn = task_fn
        self._fn_name = task_fn_name(task_fn)
        self.worker_pids: List[int] = []  # every worker started (for tests and diagnostics)

    def __repr__(self) -> str:
        return f"LocalExecutor(jobs={self.jobs})"

    def map(self, text: str, tasks: Sequence[Task]) -> Iterator[Outcome]:
        todo: Deque[Task] = deque(tasks)
        if not todo:
            return
        n = min(self.jobs, len(todo))
        size = self.chunk or chunk_size(len(todo), n)
        setup = {"sys_path": list(sys.path), "text": text, "task_fn": self._fn_name}
        inbox: "queue.Queue[Tuple[_Worker, Any]]" = queue.Queue()
        workers: List[_Worker] = []

        def start() -> None:
            w = _Worker(setup, inbox)
            self.worker_pids.append(w.pid)
            workers.append(w)

        def feed(w: _Worker) -> None:
            # Keep each worker one chunk ahead so it never waits for this process.
            if w.alive and len(w.pending) < size + 1 and todo:
                batch = [todo.popleft() for _ in range(min(size, len(todo)))]
                w.pending.extend(batch)
                w.send(batch)

        with _CtrlC() as ctrl_c:
            try:
                for _ in range(n):
                    start()
                while any(w.pending for w in workers) or todo:
                    if ctrl_c.hit:
                        raise KeyboardInterrupt
                    for w in workers:
                        feed(w)
                        feed(w)
                    try:
                        w, msg = inbox.get(timeout=POLL_S)
                    except queue.Empty:
                        continue
                    if msg[0] == "exit":
                        w.alive = False
                        workers.remove(w)
                        if w.pending:
                            lost = w.pending.popleft()
                            todo.extendleft(reversed(w.pending))
                            w.pending.clear()
                            yield lost, "lost", f"worker process {w.pid} died (exit code {msg[1]})"
                        if todo and len(workers) < n:
                            start()
                        continue
                    key, status, payload = msg
                    task = w.pending.popleft()
                    assert task.key == key, (task.key, key)
                    yield task, status, payload
            finally:
                _stop_workers(workers)
            if ctrl_c.hit:
                raise KeyboardInterrupt


def worker_main() -> None:
    """The loop of ``python -m qcnsim._worker``: read the setup, then batches of tasks; answer
    one message per task. Stdout is the protocol channel, so fd 1 is pointed at stderr first."""
    import importlib

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops the workers
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    try:
        setup = _recv(inp)
    except (EOFError, OSError):
        return
    sys.path[:] = setup["sys_path"]
    mod, _, qual = setup["task_fn"].partition(":")
    fn: Any = importlib.import_module(mod)
    for part in qual.split("."):
        fn = getattr(fn, part)
    text = setup["text"]
    while True:
        try:
            batch = _recv(inp)
        except (EOFError, OSError):
            return
        if batch is None:
            return
        for task in batch:
            status, payload = fn(text, task.overrides, task.seed)
            try:
                _send(out, (task.key, status, payload))
            except OSError:
                # The sweep process is gone (killed): nobody to answer, and nothing to report.
                os._exit(0)


def _run_chunk(text: str, tasks: Sequence[Task], task_fn: TaskFn) -> List[Tuple[Tuple[str, int], str, Any]]:
    """A Dask task: run ``tasks`` one after the other on one worker."""
    return [(t.key, *task_fn(text, t.overrides, t.seed)) for t in tasks]


class ExecutorLost(RuntimeError):
    """The executor cannot reach, or lost, the cluster that runs the tasks (e.g. the Dask
    scheduler is not running or died). Runs finished before are kept by the sweep."""


class DaskExecutor:
    """A ``dask.distributed`` cluster: ``scheduler`` is an address (``tcp://HOST:PORT``) or a
    ``distributed.Client``; with neither, a ``LocalCluster`` of ``jobs`` single-threaded worker
    processes is started for the sweep and closed after it.

    ``connect_timeout`` (seconds) bounds both the first connection to a scheduler given by its
    address and the time the client may spend reconnecting after losing it; either failure raises
    :class:`ExecutorLost`."""

    name = "dask"

    def __init__(self, scheduler: Any = None, jobs: Optional[int] = None, chunk: Optional[int] = None,
                 task_fn: TaskFn = run_task, connect_timeout: float = 10.0) -> None:
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ImportError("the dask executor needs dask.distributed: pip install 'qcnsim[dask]'") from None
        self.scheduler = scheduler
        self.jobs = jobs
        self.chunk = chunk
        self.task_fn = task_fn
        self.connect_timeout = float(connect_timeout)

    def __repr__(self) -> str:
        return f"DaskExecutor(scheduler={self.scheduler!r})"

    def _client(self):
        from distributed import Client, LocalCluster

        if self.scheduler is None:
            cluster = LocalCluster(n_workers=self.jobs or default_jobs(), threads_per_worker=1,
                                   processes=True, dashboard_address=":0")
            return Client(cluster), cluster, True
        if isinstance(self.scheduler, str):
            try:
                return Client(self.scheduler, timeout=f"{self.connect_timeout}s"), None, True
            except (OSError, TimeoutError, ValueError) as e:
                raise ExecutorLost(f"cannot reach the Dask scheduler at {self.scheduler} within "
                                   f"{self.connect_timeout:g} s ({type(e).__name__}: {e}); start it (`dask "
                                   "scheduler`) or check the address") from None
        return self.scheduler, None, False  # a Client the caller owns

    def _where(self) -> str:
        return f"at {self.scheduler}" if isinstance(self.scheduler, str) else "of the sweep"

    def map(self, text: str, tasks: Sequence[Task]) -> Iterator[Outcome]:
        import asyncio

        from distributed import wait

        tasks = list(tasks)
        if not tasks:
            return
        client, cluster, own = self._client()
        futures: Dict[Any, List[Task]] = {}
        lost_since: Optional[float] = None

        def lost(why: str) -> ExecutorLost:
            return ExecutorLost(f"lost the Dask scheduler {self._where()} ({why.strip()})")

        try:
            try:
                workers, threads = _cluster_size(client)
            except (OSError, TimeoutError) as e:
                raise lost(f"{type(e).__name__}: {e}") from None
            size = self.chunk or chunk_size(len(tasks), workers)
            waiting: Deque[List[Task]] = deque(tasks[i:i + size] for i in range(0, len(tasks), size))
            while futures or waiting:
                # At most one chunk per worker thread in flight, so no chunk waits on a worker behind
                # another one: a worker that dies takes only the chunk it was running with it.
                while waiting and lost_since is None and len(futures) < max(1, threads):
                    batch = waiting.popleft()
                    futures[client.submit(_run_chunk, text, batch, self.task_fn, pure=False)] = batch
                # Poll rather than block: a scheduler that dies leaves futures that never finish.
                try:
                    if not futures:  # nothing submitted while the scheduler is away
                        time.sleep(POLL_S)
                        finished = set()
                    else:
                        finished, _ = wait(list(futures), timeout=POLL_S * 5, return_when="FIRST_COMPLETED")
                except (TimeoutError, asyncio.TimeoutError, OSError):
                    finished = set()
                except Exception as e:  # noqa: BLE001 - FuturesCancelledError: the scheduler connection is lost
                    raise lost(f"{type(e).__name__}: {str(e).splitlines()[-1] if str(e) else e}") from None
                if client.status not in ("running", "newly-created"):
                    lost_since = lost_since if lost_since is not None else time.monotonic()
                    if client.status in ("closed", "closing") or \
                            time.monotonic() - lost_since > self.connect_timeout:
                        raise lost(f"client {client.status}")
                else:
                    lost_since = None
                for fut in finished:
                    batch = futures.pop(fut)
                    try:
                        results = fut.result()
                    except (KeyboardInterrupt, SystemExit, GeneratorExit):
                        raise
                    except BaseException as e:  # noqa: BLE001 - KilledWorker, a cancelled future (asyncio's
                        # CancelledError is a BaseException), or the task could not run
                        if client.status not in ("running", "newly-created") or \
                                "scheduler-connection-lost" in str(e) or type(e).__name__.endswith("CancelledError"):
                            futures[fut] = batch  # not attempted as far as we know
                            raise lost(f"{type(e).__name__}: {e}") from None
                        if len(batch) > 1:
                            # Which task killed it is unknown: retry each on its own, first, no attempt counted.
                            waiting.extendleft([t] for t in reversed(batch))
                            continue
                        yield batch[0], "lost", f"{type(e).__name__}: {e}"
                        continue
                    by_key = {t.key: t for t in batch}
                    for key, status, payload in results:
                        yield by_key[key], status, payload
                if waiting and lost_since is None:
                    try:  # workers come and go (a nanny restarts a dead one, a cluster scales)
                        workers, threads = _cluster_size(client)
                    except (OSError, TimeoutError):
                        pass  # the status check above decides when the scheduler counts as lost
        finally:
            _close_quietly(client, cluster, list(futures), own)


def _cluster_size(client: Any) -> Tuple[int, int]:
    """The cluster's workers and their threads, as the scheduler knows them now."""
    info = client.scheduler_info(n_workers=-1).get("workers", {})
    return max(1, len(info)), sum(int(w.get("nthreads", 1) or 1) for w in info.values())


def _close_quietly(client: Any, cluster: Any, pending: List[Any], own: bool) -> None:
    """Cancel what is pending and close what this executor opened; a client whose scheduler is
    gone may fail to do either, which changes nothing for the sweep."""
    import contextlib
    import logging

    # distributed logs the lost connection at length; the sweep reports it in one line
    quiet = [logging.getLogger(n) for n in ("distributed", "distributed.client", "distributed.batched")]
    levels = [lg.level for lg in quiet]
    for lg in quiet:
        lg.setLevel(logging.CRITICAL)
    try:
        if pending:
            with contextlib.suppress(Exception):
                client.cancel(pending)
        if own:
            with contextlib.suppress(Exception):
                client.close(timeout=2)
            if cluster is not None:
                with contextlib.suppress(Exception):
                    cluster.close()
    finally:
        for lg, lv in zip(quiet, levels):
            lg.setLevel(lv)


EXECUTORS = ("local", "dask")


def make_executor(spec: Any = None, jobs: Optional[int] = None, scheduler: Optional[str] = None):
    """``None``/``"local"`` -> :class:`LocalExecutor`; ``"dask"`` -> :class:`DaskExecutor`; an
    object with a ``map`` method is used as it is."""
    if spec is None or spec == "local":
        return LocalExecutor(jobs=jobs)
    if spec == "dask":
        return DaskExecutor(scheduler=scheduler, jobs=jobs)
    if hasattr(spec, "map") and callable(spec.map):
        return spec
    raise ValueError(f"unknown executor {spec!r}: expected one of {', '.join(EXECUTORS)} or an executor object")
