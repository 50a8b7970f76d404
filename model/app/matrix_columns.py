"""The matrix's extra columns: one registry for every column beyond the goals, rules, faults and strategies.

A column is a :class:`.matrix_table.Column` in :data:`COLUMNS`: the built-in
ones below, or one added with :func:`register` (from Python) or
``matrix --column FILE.py:FACTORY`` (:func:`named`: from the user's own file):

* ``compute(inputs)`` runs once the matrix is assembled (``inputs``: an
  :class:`.matrix_table.Inputs`) and returns the keys it adds to the matrix
  dictionary (JSON values: what ``matrix.json`` carries);
* ``view(matrix)`` turns those keys into a :class:`.matrix_table.Table`: per
  row (or spec) one text per field, with a sentence before the table and
  notes after it; None when the matrix has none of the column's keys.

Every output renders the columns the same way, from ``view`` alone, as one
table (:func:`joined`): the terminal table, ``matrix.md``, the HTML report
and the heat map's third panel.  ``matrix --column NAME`` (repeatable) asks
for a column; ``--costs`` is ``--column costs --column surface``.  Built in:
``costs`` (:mod:`.matrix_costs`: one simulation per ACP row's spec) and
``surface`` (:mod:`.matrix_surface`: data, no run).  The one-field shape most
extensions need is :func:`simple_column`; a worked example is
``examples/extensions/states_column.py``.
"""

from __future__ import annotations

from typing import Callable

from acplab.model.errors import InputError

from . import matrix_costs, matrix_surface
from .matrix_table import Column, Inputs, Table


#: the registered columns by name, in registration order (the order the outputs show them in)
COLUMNS: dict[str, Column] = {c.name: c for c in (matrix_costs.COLUMN, matrix_surface.COLUMN)}


def register(column: Column) -> Column:
    """Add a column (a name already taken is an error: one column per name)."""
    if column.name in COLUMNS and COLUMNS[column.name] != column:
        raise InputError(f"matrix column {column.name!r} is registered twice")
    COLUMNS[column.name] = column
    return column


def named(arg: str) -> str:
    """A ``--column`` value as a column name: a registered name, or ``FILE.py:FACTORY`` whose ``FACTORY()``
    returns a :class:`Column`, which is registered (loading the file runs its code, as an extension does)."""
    if ":" not in arg:
        return arg
    from pathlib import Path

    from acplab.model.acp.extension import load_object

    file, factory = arg.rsplit(":", 1)
    column = load_object(f"{Path(file).resolve()}:{factory}")
    if not isinstance(column, Column):
        raise InputError(f"--column {arg}: {factory}() returned {type(column).__name__}, not a matrix_columns.Column")
    return register(column).name


def check_names(names) -> None:
    """Refuse an unknown column name in one line, naming the known ones."""
    unknown = [n for n in names if n not in COLUMNS]
    if unknown:
        raise InputError(f"unknown matrix column {', '.join(unknown)}; known: {', '.join(COLUMNS)}")


def add_columns(matrix: dict, names, rows, runs, of_row, executor: str, jobs: int) -> None:
    """Compute the asked columns into ``matrix``, in registry order."""
    check_names(names)
    for column in [c for n, c in COLUMNS.items() if n in names]:
        matrix.update(column.compute(Inputs(rows, runs, of_row, matrix, executor, jobs)))


def tables(matrix: dict) -> list[Table]:
    """The tables of the columns the matrix carries (each whose :attr:`Column.view` finds its keys), in
    registry order."""
    out = [c.view(matrix) for c in COLUMNS.values()]
    return [t for t in out if t is not None]


def joined(matrix: dict) -> Table | None:
    """Every column's table as one: rows in first-seen order, the fields side by side ("-" where a row has
    none); the title, intro and notes of each in turn."""
    parts = tables(matrix)
    if not parts:
        return None
    fields = {f"{t.title}:{k}": v for t in parts for k, v in t.fields.items()}
    rows = list(dict.fromkeys(r for t in parts for r in t.cells))
    cells = {r: {f"{t.title}:{k}": t.cells.get(r, {}).get(k, "-") for t in parts for k in t.fields} for r in rows}
    return Table(" and ".join(t.title for t in parts), " ".join(t.intro for t in parts if t.intro), fields, cells,
                 tuple(n for t in parts for n in t.notes))


def simple_column(name: str, meaning: str, cells: Callable[[Inputs], dict]) -> Column:
    """A one-field column whose ``cells(inputs)`` gives each row's value: the shape most extensions need.
    Its values go to ``matrix["extra_columns"][name]``."""
    def compute(inputs: Inputs) -> dict:
        found = dict(inputs.matrix.get("extra_columns", {}))
        found[name] = {"meaning": meaning, "cells": {str(k): v for k, v in cells(inputs).items()}}
        return {"extra_columns": found}

    def view(matrix: dict) -> Table | None:
        column = matrix.get("extra_columns", {}).get(name)
        if column is None:
            return None
        return Table(name, meaning, {name: name}, {r: {name: str(v)} for r, v in column["cells"].items()})

    return Column(name, meaning, compute, view)
