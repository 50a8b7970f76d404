"""The one progress display: the same lines for every long command, plain lines every N seconds when
stderr is not a terminal (a log shows a long run is alive), nothing under -q, stdout unchanged."""

from __future__ import annotations

import io

import pytest

from acplab.model.app.progress import Progress, clock, count_line, progress_line
from acplab.model.engine import Stats
from cli_harness import run_cli


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


@pytest.mark.smoke
def test_lines_show_rate_elapsed_and_an_estimate_only_where_one_exists():
    assert clock(3725) == "1:02:05"
    assert count_line("runs", 40, 100, 20.0) == "40/100 runs  2.0/s  elapsed 0:20  about 0:30 left"
    assert count_line("runs", 0, 100, 1.0) == "0/100 runs  elapsed 0:01"  # nothing done: no rate, no guess
    assert "left" not in count_line("points", 3, None, 5.0)  # no total: no estimate
    line = progress_line(Stats(states=1000, transitions=0, depth=3, queue=40, seconds=2.0))
    assert line == "states 1,000  500/s  frontier 40  depth 3  elapsed 0:02" and "left" not in line


@pytest.mark.smoke
def test_without_a_terminal_a_plain_line_every_n_seconds():
    out, now = io.StringIO(), Clock()
    with Progress("simulate", "runs", 10, stream=out, terminal=False, every=10.0, now=now) as shown:
        for k in range(1, 11):
            now.t = 4.0 * k
            shown.count(k)
    lines = out.getvalue().splitlines()
    assert lines == ["simulate: 3/10 runs  4 s each  elapsed 0:12  about 0:28 left",
                     "simulate: 6/10 runs  4 s each  elapsed 0:24  about 0:16 left",
                     "simulate: 9/10 runs  4 s each  elapsed 0:36  about 0:04 left"]


def test_quiet_shows_nothing_and_parts_count_up():
    out, now = io.StringIO(), Clock()
    with Progress("figures", "parts", 3, stream=out, terminal=False, every=1.0, now=now, quiet=True) as shown:
        now.t = 5.0
        shown.stats(Stats(1, 0, 0, 0, 5.0))
    assert out.getvalue() == ""
    with Progress("figures", "parts", 3, stream=out, terminal=False, every=1.0, now=now) as shown:
        for name in ("a", "b", "c"):
            now.t += 2.0
            shown.part(name)
    assert out.getvalue().splitlines()[-1] == "figures: 2/3 parts  3 s each  elapsed 0:06  about 0:03 left  (c)"


def test_on_a_terminal_it_is_a_rich_bar():
    out = io.StringIO()
    with Progress("matrix", "runs", 4, stream=out, terminal=True) as shown:
        assert shown._bar is not None
        shown.count(2)
        assert shown._bar.tasks[0].completed == 2 and shown._bar.tasks[0].fields["line"].startswith("2/4 runs")
    assert shown._bar is None


def test_a_long_command_in_a_log_shows_progress_lines_on_stderr_and_stdout_does_not_change(monkeypatch):
    monkeypatch.setenv("ACPLAB_PROGRESS_SECONDS", "0.000001")
    code, out, err = run_cli("simulate", "--sessions", "3")
    assert code == 0 and "simulate: " in err and "runs" in err
    code_q, out_q, err_q = run_cli("simulate", "--sessions", "3", "-q")
    assert code_q == 0 and "simulate: " not in err_q
    assert out_q == out
    code, _, err = run_cli("check", "--max-states", "100")  # the explorer reports when it stops at a limit
    assert code == 3 and "check: states " in err and "frontier" in err
