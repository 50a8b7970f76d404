"""Where independent tasks run: local worker processes, one process, or a Dask cluster.

One abstraction for every driver that fans out independent runs (the variant
matrix, simulation sweeps): :func:`open_executor` names the place with a
string, ``local`` (processes, the default), ``serial`` (this process: no
pickling, easy to debug) or ``dask://HOST:PORT`` (the ``distributed``
package's executor on an existing scheduler), and yields a
``concurrent.futures.Executor``.  :func:`run_all` maps a function over tasks
on it and keeps the results in task order, whatever order they finish in.

Workers live no longer than the run that started them:

* an exception leaving :func:`open_executor` (Ctrl-C, SIGTERM turned into an
  exception by the caller, a bad result) cancels what has not started and
  terminates the local worker processes at once, instead of waiting for the
  points in flight; Dask futures are cancelled on the scheduler;
* a run killed outright (SIGKILL) cannot clean up, so each local worker
  watches its parent and exits within :data:`ORPHAN_POLL_SECONDS` of being
  orphaned.

Files a task makes come home as data (:func:`made_in_scratch`): the task
writes them into a private temporary folder on whatever machine runs it,
and returns their bytes with its result, under the paths they will have in
the client's folder; the client writes them there.  A Dask worker need not
share the client's file system (nor its working directory), and every
executor takes this one path, so where a task ran never shows in its files.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

from acplab.model.errors import InputError


class SerialExecutor(Executor):
    """Runs tasks in this process: the executor for one worker.

    ``submit`` runs a task at once; :func:`as_they_finish` instead runs each
    task only when the caller asks for the next result, so work done so far
    is handed over (and can be saved) before the next task starts.
    """

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as err:  # noqa: BLE001 - delivered through the future, like a pool would
            future.set_exception(err)
        return future


#: how often a local worker checks that the process that started it is still there
ORPHAN_POLL_SECONDS = 0.5


def _exit_when_orphaned(parent: int) -> None:
    """Worker initializer: a daemon thread that ends this worker once ``parent`` is gone."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="acplab-orphan-watch", daemon=True).start()


def _terminate_workers(pool) -> None:
    """Stop a process pool now: cancel what is queued, end the processes running tasks."""
    running = getattr(pool, "_processes", None)  # ProcessPoolExecutor's pid -> Process (no public API for this)
    processes = list(running.values()) if isinstance(running, dict) else []
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join(5)


@contextlib.contextmanager
def open_executor(where: str = "local", workers: int | None = None) -> Iterator[Executor]:
    """An executor for ``where`` (``local``, ``serial`` or ``dask://HOST:PORT``), shut down on exit.

    ``local`` with ``workers=1`` runs serially.  A bad ``where`` or an
    unreachable scheduler is an :class:`InputError` (one line, exit 2).  On an
    exception (including KeyboardInterrupt) the workers are stopped at once.
    """
    if where == "serial" or (where == "local" and workers == 1):
        yield SerialExecutor()
        return
    if where == "local":
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=workers, initializer=_exit_when_orphaned, initargs=(os.getpid(),))
        try:
            yield pool
        except BaseException:
            _terminate_workers(pool)
            raise
        pool.shutdown(wait=True, cancel_futures=True)
        return
    if where.startswith("dask://"):
        client = _dask_client(where[len("dask://"):])
        try:
            pool = client.get_executor()
            try:
                yield pool
            except BaseException:
                pool.shutdown(wait=False)  # cancels this run's futures on the scheduler
                raise
            pool.shutdown(wait=True)
        finally:
            client.close()
        return
    raise InputError(f"unknown executor {where!r}; use local, serial or dask://HOST:PORT")


def _dask_client(address: str):
    if not address:
        raise InputError("--executor dask://HOST:PORT needs an address")
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--executor dask:// needs the 'distributed' package (pip install 'acplab[dask]')") from None
    try:
        return Client(address, timeout=10)
    except (OSError, TimeoutError, ValueError, TypeError) as err:
        raise InputError(f"cannot reach the Dask scheduler at {address}: {' '.join(str(err).split())}") from None


def as_they_finish(pool: Executor, fn: Callable, tasks: Sequence) -> Iterator[tuple[int, object]]:
    """``(index, fn(tasks[index]))`` pairs as results become available (lazily, one by one, when serial)."""
    from concurrent.futures import as_completed

    if isinstance(pool, SerialExecutor):
        for i, task in enumerate(tasks):
            yield i, fn(task)
        return
    futures = {pool.submit(fn, t): i for i, t in enumerate(tasks)}
    for future in as_completed(futures):
        yield futures[future], future.result()


def run_all(fn: Callable, tasks: Sequence, where: str = "local", workers: int | None = None,
            progress: Callable[[int, int], None] | None = None,
            arrived: Callable[[Any], Any] | None = None) -> list:
    """``[fn(t) for t in tasks]`` on the executor ``where``; ``progress(done, total)`` as results arrive.

    ``arrived(result)``, when given, runs on each result as it arrives (in the caller's process) and
    its return value is kept instead: where a task's files are written home while others still run.
    """
    results: list = [None] * len(tasks)
    with open_executor(where, workers) as pool:
        for done, (i, result) in enumerate(as_they_finish(pool, fn, tasks), 1):
            results[i] = result if arrived is None else arrived(result)
            if progress is not None:
                progress(done, len(tasks))
    return results


def made_in_scratch(make: Callable[[Path], dict[str, list[str]]],
                    home: str) -> tuple[dict[str, list[str]], dict[str, bytes]]:
    """Run ``make(scratch)`` in a private temporary folder; return its files as they will be at ``home``.

    ``make`` writes under ``scratch`` and returns ``{name: [paths written]}``;
    the result is the same mapping with each path moved to ``home`` (the
    client's folder), and ``{path relative to home: bytes}`` of every file
    made (also those no name lists, such as a sidecar), for the client to
    write (see the module docstring).  The scratch folder is removed.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="acplab-task-") as folder:
        scratch = Path(folder)
        listed = make(scratch)
        made = {p.relative_to(scratch).as_posix(): p.read_bytes() for p in sorted(scratch.rglob("*")) if p.is_file()}
        moved = {name: [str(Path(home) / Path(p).relative_to(scratch)) for p in paths]
                 for name, paths in listed.items()}
    return moved, made
