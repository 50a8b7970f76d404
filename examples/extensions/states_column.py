"""An extra matrix column, as an extension author writes one (model/app/matrix_columns.py).

    acplab matrix --spec v1 --column examples/extensions/states_column.py:states_column

Loading this file RUNS its Python code in acplab's process (trust it as you would `python FILE`).
The column shows in the terminal table, matrix.md, the HTML report (--html) and matrix.json
(``extra_columns``); a column with several fields, or its own keys in matrix.json, builds a
``Column(name, meaning, compute, view)`` itself, as model/app/matrix_costs.py does.
"""

from acplab.model.app.matrix_columns import simple_column


def states_column():
    """States explored over each row's runs (a run shared by several rows counts for each)."""
    return simple_column("states", "states explored over the row's runs",
                         lambda inputs: {row.name: sum(inputs.runs[i]["states"] for i in inputs.of_row[row.name])
                                         for row in inputs.rows})
