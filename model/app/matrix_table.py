"""The shapes of the matrix's extra columns (:mod:`.matrix_columns` registers them): what a column gets,
what it is, and the table every output draws from it."""

from __future__ import annotations

from typing import Callable, NamedTuple


class Inputs(NamedTuple):
    """What a column's ``compute`` gets: the rows, every run's result, each row's run indices, the matrix so
    far, and where and on how many workers a column that runs something may run it."""

    rows: list
    runs: list
    of_row: dict
    matrix: dict
    executor: str = "serial"
    jobs: int = 1


class Table(NamedTuple):
    """A column as every output shows it: ``fields`` (name -> heading) and ``cells`` (row -> field -> text)."""

    title: str
    intro: str
    fields: dict
    cells: dict
    notes: tuple = ()


class Column(NamedTuple):
    name: str
    meaning: str
    compute: Callable[[Inputs], dict]
    view: Callable[[dict], Table | None]
