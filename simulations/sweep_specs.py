"""What a sweep takes from the variant matrix: spec files as points' specs, and by-design declarations.

* ``spec_files = ["mine.toml", ...]`` (top level of a sweep config, paths
  relative to the config file) loads each spec file as ``acplab matrix
  --spec-file`` does and adds its name to ``specs``; the workers load the
  same files again (a worker process knows only the presets).  A spec file's
  definition (its effective switches) is part of the sweep's hash, so an
  edited spec file is a changed configuration.
* **By design**: a violation of a rule a spec declares it breaks by definition
  (``by_design``) is never a finding, as in the matrix: the point's verdict
  counts only the other monitors, and the declared ones are listed under
  ``by_design`` with their count and reason (v1's response ends the turn, so
  ``ResponseNotHeldForWorkEnd`` fires at drop 0: by design, not violated).
"""

from __future__ import annotations

from pathlib import Path

from acplab.model.errors import InputError


def load_spec_files(cfg: dict, where: str) -> dict[str, str]:
    """The config's ``spec_files``: absolute path -> spec name, each loaded and registered."""
    from acplab.model.acp.specfile import load_and_register

    files = cfg.get("spec_files", [])
    if isinstance(files, str):
        files = [files]
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise InputError(f"{where}: spec_files must be a list of paths to spec files")
    folder = Path(where).parent if Path(where).suffix else Path.cwd()
    paths = [str((folder / f).resolve()) for f in files]
    for path in paths:
        if not Path(path).is_file():
            raise InputError(f"{where}: spec file {path} not found")
    return {path: load_and_register(path) for path in paths}


def register_in_worker(paths) -> None:
    """Load the sweep's spec files in a worker process (idempotent: a loaded name is loaded again)."""
    from acplab.model.acp.specfile import load_and_register

    for path in paths:
        load_and_register(path)


def spec_definitions(names) -> dict:
    """The effective switches of every spec file among ``names`` (presets are known by name)."""
    from acplab.model.acp.spec import USER_SPECS

    return {n: [list(map(str, kv)) for kv in USER_SPECS[n]._asdict().items()] for n in sorted(set(names))
            if n in USER_SPECS}


def apply_by_design(summary: dict, runs, spec) -> dict:
    """``summary`` (a simulation's ``to_json``) with the spec's by-design rules out of the verdict.

    ``runs``: the simulation's runs (their violations name the monitor), to recount the violating runs.
    """
    declared = dict(spec.by_design)
    v = summary["violations"]
    mine = {m: n for m, n in v["per_monitor"].items() if m in declared}
    if not mine:
        return {**summary, "by_design": {}}
    rest = {m: n for m, n in v["per_monitor"].items() if m not in declared}
    violations = {
        "count": sum(rest.values()),
        "runs": sum(1 for r in runs if any(x.monitor not in declared for x in r.violations)),
        "per_monitor": rest,
        "first": {m: f for m, f in v["first"].items() if m not in declared},
        "files": {m: f for m, f in v["files"].items() if m not in declared},
    }
    by_design = {m: {"count": n, "reason": declared[m], "first": v["first"].get(m)} for m, n in sorted(mine.items())}
    return {**summary, "verdict": "violated" if rest else "holds", "violations": violations, "by_design": by_design}
