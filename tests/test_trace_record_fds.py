"""``trace record --conn-fds IN,OUT``: one agent process, a second connection on two more descriptors."""

import json
import os
import sys

import pytest

from acplab.model.errors import InputError
from acplab.model.trace.record import parse_conn_fds, record
from acplab.model.wire.capture import read_capture

#: an agent that answers one line on stdio and one on the extra connection (descriptors given as arguments)
AGENT = """
import os, sys
fin, fout = int(sys.argv[1]), int(sys.argv[2])
def line(fd):
    data = b""
    while not data.endswith(b"\\n"):
        piece = os.read(fd, 1)
        if not piece:
            break
        data += piece
    return data
a = line(0); b = line(fin)
os.write(1, b'{"jsonrpc":"2.0","id":1,"result":{"on":"stdio"}}\\n')
os.write(fout, b'{"jsonrpc":"2.0","id":1,"result":{"on":"fds"}}\\n')
"""


def test_a_second_connection_on_other_descriptors_is_recorded_as_c2(tmp_path):
    std_in_r, std_in_w = os.pipe()
    std_out_r, std_out_w = os.pipe()
    fds_in_r, fds_in_w = os.pipe()
    fds_out_r, fds_out_w = os.pipe()
    os.write(std_in_w, b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n')
    os.write(fds_in_w, b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"second":true}}\n')
    os.close(std_in_w)
    os.close(fds_in_w)
    cap = tmp_path / "cap.jsonl"
    code = record([sys.executable, "-c", AGENT, str(fds_in_r), str(fds_out_w)], str(cap), stdin_fd=std_in_r,
                  stdout_fd=std_out_w, fd_conns=((fds_in_r, fds_out_w),))
    os.close(std_out_w)
    os.close(fds_out_w)
    assert code == 0
    assert json.loads(os.read(std_out_r, 4096))["result"] == {"on": "stdio"}  # relayed, each on its own pair
    assert json.loads(os.read(fds_out_r, 4096))["result"] == {"on": "fds"}
    recs = list(read_capture(cap))
    msgs = [(r.conn, r.dir, r.msg.get("method") or r.msg["result"]["on"]) for r in recs if r.close is None]
    assert sorted(msgs) == [("c1", "agent->client", "stdio"), ("c1", "client->agent", "initialize"),
                            ("c2", "agent->client", "fds"), ("c2", "client->agent", "initialize")]
    assert [r.seq for r in recs] == list(range(1, len(recs) + 1))  # one capture, one order for both connections
    assert {r.conn: r.close for r in recs if r.close is not None}.keys() == {"c1", "c2"}


def _two_closed_fds() -> str:
    """Two descriptors in 3..63 this process has not open (a test run's workers hold some: never assume)."""
    import os

    closed = []
    for fd in range(63, 2, -1):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
        if len(closed) == 2:
            return f"{closed[1]},{closed[0]}"
    pytest.skip("every descriptor from 3 to 63 is open in this process")


@pytest.mark.parametrize("text,why", [("3", "expected IN,OUT"), ("4,4", "must differ"), ("1,2", "3..63"),
                                      (None, "not open")])
def test_bad_conn_fds_is_one_clear_line(text, why):
    with pytest.raises(InputError, match=why):
        parse_conn_fds(_two_closed_fds() if text is None else text)
