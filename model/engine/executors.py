"""Where independent tasks run: local worker processes, one process, or a Dask cluster.

One abstraction for every driver that fans out independent runs (the variant
matrix, simulation sweeps): :func:`open_executor` names the place with a
string, ``local`` (processes, the default), ``serial`` (this process: no
pickling, easy to debug) or ``dask://HOST:PORT`` (the ``distributed``
package's executor on an existing scheduler), and yields a
``concurrent.futures.Executor``.  :func:`run_all` maps a function over tasks
on it and keeps the results in task order, whatever order they finish in.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future

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


@contextlib.contextmanager
def open_executor(where: str = "local", workers: int | None = None) -> Iterator[Executor]:
    """An executor for ``where`` (``local``, ``serial`` or ``dask://HOST:PORT``), shut down on exit.

    ``local`` with ``workers=1`` runs serially.  A bad ``where`` or an
    unreachable scheduler is an :class:`InputError` (one line, exit 2).
    """
    if where == "serial" or (where == "local" and workers == 1):
        yield SerialExecutor()
        return
    if where == "local":
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=workers)
        try:
            yield pool
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return
    if where.startswith("dask://"):
        client = _dask_client(where[len("dask://"):])
        pool = client.get_executor()
        try:
            yield pool
        finally:
            pool.shutdown(wait=True)
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
    except (OSError, TimeoutError) as err:
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
            progress: Callable[[int, int], None] | None = None) -> list:
    """``[fn(t) for t in tasks]`` on the executor ``where``; ``progress(done, total)`` as results arrive."""
    results: list = [None] * len(tasks)
    with open_executor(where, workers) as pool:
        for done, (i, result) in enumerate(as_they_finish(pool, fn, tasks), 1):
            results[i] = result
            if progress is not None:
                progress(done, len(tasks))
    return results
