"""The typed probe protocol: every kind round-trips, and a line that is not an event is dropped."""

from __future__ import annotations

import json

import pytest

from dllint.probe import events
from dllint.probe.runner import EventLog, ProgressDisplay, build_report

SAMPLES = [
    {"event": "start", "pid": 12, "t": 1.0},
    {"event": "ready", "t": 1.5},
    {"event": "loader", "id": 1, "call_site": "train.py:5", "path": "/p/train.py", "line": 5, "end_line": 5, "t": 2.0},
    {"event": "loader_error", "loader": 1, "error": "TypeError: x"},
    {"event": "first_batch", "loader": 1, "seconds": 0.25, "error": None},
    {"event": "iterated_again", "loader": 1},
    {"event": "step", "loader": 1, "steps": 4, "wait_share": 0.5},
    {"event": "epoch", "loader": 1, "epoch": 1, "batches": 2, "seconds": 0.1, "cut": False},
    {"event": "epoch_failed", "loader": 1, "error": "boom", "epoch": 2, "batch": 1, "worker_died": False,
     "worker_said": None, "worker_frame": ["/p/train.py", 9], "in_worker": True},
    {"event": "emptied", "loader": 1, "epoch": 4, "cap": 3},
    {"event": "table", "loader": 1, "title": "sweep", "columns": ["a"], "rows": [[1]], "chart": []},
    {"event": "progress", "step": "first batch", "loader": None},
    {"event": "note", "text": "hello", "loader": 1},
    {"event": "result", "code": "DL101", "verdict": "confirmed", "evidence": "e", "measurements": {}, "anchors": [],
     "loader": 1},
    {"event": "child_loader", "pid": 40, "call_site": None},
    {"event": "write", "action": "open", "path": "'x'", "handled": "redirected", "phase": "", "location": None,
     "pid": 3, "text": "open('x')"},
    {"event": "script_end", "how": "finished", "detail": "the script ran to its end", "where": None},
    {"event": "done"},
    {"event": "trace_epoch", "loader": 1, "epoch": 1, "started": 2.0, "ended": 2.5, "marks": [[2.1, 2.2, 2.2]],
     "replay": False, "failed": False, "cut": True, "t": 2.5},
    {"event": "trace_batch", "loader": 1, "worker": 0, "pid": 41, "start": 2.05, "end": 2.15, "samples": 4},
    {"event": "rank_info", "rank": 0, "world": 2},
]


def test_every_kind_has_a_sample_and_round_trips():
    assert sorted(sample["event"] for sample in SAMPLES) == sorted(events.KINDS)
    for sample in SAMPLES:
        event = events.decode(sample)
        assert type(event) is events.KINDS[sample["event"]]
        assert event.to_json() == sample


@pytest.mark.parametrize("line", [
    "[1, 2]", '"text"', "12", "{}", '{"event": 3}', "not json", "[" * 100000,
    '{"event": "loader", "id": "1", "call_site": "x"}',  # a string id
    '{"event": "loader", "id": true, "call_site": "x"}',  # a bool is not an int
    '{"event": "note", "loader": null}',  # no text
    '{"event": "epoch_failed", "loader": 1, "error": null}',
    '{"event": "trace_batch", "loader": 1, "worker": "0", "pid": 4, "start": 1, "end": 2}',  # a string worker
])
def test_a_line_that_is_not_an_event_is_dropped(line):
    assert events.parse_event(line) is None


def test_control_characters_are_shown_not_sent():
    line = json.dumps({"event": "note", "loader": None, "text": "\x1b]0;title\x07\x1b[2Jok\n\tnext\x9b"})
    assert events.parse_event(line)["text"] == "\\x1b]0;title\\x07\\x1b[2Jok\n\tnext\\x9b"


def test_the_runner_reads_a_file_of_forged_lines_without_failing(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = ["[1, 2]", '"text"', '{"event": "loader", "id": "x"}', *map(json.dumps, SAMPLES[:3]),
             json.dumps({"event": "note", "loader": None, "text": "\x1b[31mred"}), json.dumps(SAMPLES[-5]),
             json.dumps(SAMPLES[-4])]
    path.write_text("\n".join(lines) + "\n")
    log = EventLog(str(path), ProgressDisplay(False))
    log.poll()
    assert [event["event"] for event in log.events] == ["start", "ready", "loader", "note", "script_end", "done"]
    report = build_report("train.py", log, [], "completed", 1.0, 10, [])
    assert report.status == "completed" and [loader.id for loader in report.loaders] == [1]
    assert report.notes == ["\\x1b[31mred"]
