"""The Windows job object (dllint/probe/winjob.py), simulated on Linux: a fake kernel32 records each
call and answers with handles or failures; the structs are the real ctypes ones, checked byte by byte
against Windows x64's layout."""

from __future__ import annotations

import ctypes
import sys
import types

import pytest
from probe_helpers import checks_settings, write_script

from dllint.probe import processes, winjob
from dllint.probe.winjob import JOBOBJECT_BASIC_LIMIT_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION

WINDOWS = processes.Platform(subreaper=False, pdeathsig=False, proc_fs=False, fork=False, process_groups=False,
                             job_object=True)
JOB = 0x7FFF_0000_0A10  # above 32 bits: a handle cut to a C int would not be this one
SCRIPT_HANDLE = 0x3C4
ACCESS_DENIED = 5
SIXTY_FOUR_BIT = ctypes.sizeof(ctypes.c_void_p) == 8
# cleanup on a platform without fork: a new interpreter (no template)
pytestmark = pytest.mark.popen_harness


class FakeFunction:
    """One kernel32 function: records its arguments, returns ``result``; takes argtypes/restype as ctypes' do."""

    def __init__(self, name: str, calls: list, result: int) -> None:
        self.name, self.calls, self.result = name, calls, result
        self.argtypes = self.restype = None

    def __call__(self, *args):
        self.calls.append((self.name, args))
        return self.result


class FakeKernel32:
    """kernel32 as the job object uses it; each function named in ``failing`` returns 0 (FALSE or NULL)."""

    def __init__(self, failing: tuple[str, ...] = ()) -> None:
        self.calls: list[tuple[str, tuple]] = []
        for name in winjob.PROTOTYPES:
            result = 0 if name in failing else JOB if name == "CreateJobObjectW" else 1
            setattr(self, name, FakeFunction(name, self.calls, result))

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


@pytest.fixture
def kernel32(monkeypatch):
    """A fake kernel32 where winjob loads the real one, on a platform simulated as Windows."""
    def install(failing: tuple[str, ...] = ()) -> FakeKernel32:
        fake = FakeKernel32(failing)
        monkeypatch.setattr(winjob.Kernel32, "load",
                            staticmethod(lambda: winjob.Kernel32.declared(fake, lambda: ACCESS_DENIED)))
        return fake

    monkeypatch.setattr(processes, "PLATFORM", WINDOWS)
    return install


def script_process() -> types.SimpleNamespace:
    return types.SimpleNamespace(_handle=SCRIPT_HANDLE, pid=0)  # subprocess.Popen on Windows has its handle there


@pytest.mark.skipif(not SIXTY_FOUR_BIT, reason="the layout checked is 64-bit Windows'")
def test_the_structs_have_the_layout_of_windows_x64():
    assert ctypes.sizeof(JOBOBJECT_BASIC_LIMIT_INFORMATION) == 64
    assert ctypes.sizeof(winjob.IO_COUNTERS) == 48
    assert ctypes.sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION) == 144
    basic = JOBOBJECT_BASIC_LIMIT_INFORMATION
    assert {name: getattr(basic, name).offset for name, _ in basic._fields_} == {
        "PerProcessUserTimeLimit": 0, "PerJobUserTimeLimit": 8, "LimitFlags": 16, "MinimumWorkingSetSize": 24,
        "MaximumWorkingSetSize": 32, "ActiveProcessLimit": 40, "Affinity": 48, "PriorityClass": 56, "SchedulingClass": 60}
    assert JOBOBJECT_EXTENDED_LIMIT_INFORMATION.ProcessMemoryLimit.offset == 112


@pytest.mark.skipif(not SIXTY_FOUR_BIT, reason="the layout checked is 64-bit Windows'")
def test_the_script_goes_into_a_kill_on_close_job_which_cleanup_terminates_and_closes(kernel32):
    fake = kernel32()
    tree = processes.ProcessTree()
    tree.contain(script_process())
    assert fake.names() == ["CreateJobObjectW", "SetInformationJobObject", "AssignProcessToJobObject"]
    create, limits, assign = (args for _, args in fake.calls)
    assert create == (None, None)  # no security attributes: the handle is not inherited, dllint's death closes it
    job, information_class, pointer, size = limits
    assert (job, information_class, size) == (JOB, 9, 144)  # JobObjectExtendedLimitInformation
    raw = bytes(pointer.contents)
    assert len(raw) == 144
    assert int.from_bytes(raw[16:20], "little") == 0x2000  # LimitFlags: JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE alone
    assert raw[:16] + raw[20:] == bytes(140)  # nothing else limited
    assert assign == (JOB, SCRIPT_HANDLE)
    assert fake.CreateJobObjectW.restype is ctypes.c_void_p  # a HANDLE, not a C int that cuts 64-bit handles
    assert tree.notes == []

    tree.kill_all(pgid=0, patience=1)
    assert fake.names()[3:] == ["TerminateJobObject", "CloseHandle"]
    assert fake.calls[3:] == [("TerminateJobObject", (JOB, 1)), ("CloseHandle", (JOB,))]
    tree.kill_all(pgid=0, patience=1)
    assert len(fake.calls) == 5  # closed once


@pytest.mark.parametrize("failing, calls", [
    ("AssignProcessToJobObject", ["CreateJobObjectW", "SetInformationJobObject", "AssignProcessToJobObject",
                                  "TerminateJobObject", "CloseHandle"]),  # a nested job on old Windows, access denied
    ("CreateJobObjectW", ["CreateJobObjectW"]),
])
def test_a_job_that_cannot_be_made_is_one_note_and_cleanup_goes_on_without_it(kernel32, failing, calls):
    fake = kernel32((failing,))
    tree = processes.ProcessTree()
    tree.contain(script_process())
    assert tree.job is None
    assert fake.names() == calls  # a job made but not used is closed at once
    assert tree.notes == [f"no job object for the script's processes ({failing} failed (Windows error 5)): they are "
                          "found and killed one by one at the end, and a killed dllint would leave them running"]
    tree.kill_all(pgid=0, patience=1)
    assert fake.names() == calls


def test_without_kernel32_or_a_handle_the_note_says_why(monkeypatch):
    monkeypatch.setattr(processes, "PLATFORM", WINDOWS)
    tree = processes.ProcessTree()
    tree.contain(script_process())  # the real Kernel32.load, on Linux: no WinDLL
    tree.contain(types.SimpleNamespace(pid=0))  # a Popen without _handle
    assert [note.split(":")[0] for note in tree.notes] == [
        "no job object for the script's processes (kernel32 cannot be loaded",
        "no job object for the script's processes (the script's process has no Windows handle)"]


@pytest.mark.parametrize("platform, job_object", [("win32", True), ("linux", False), ("darwin", False), ("cygwin", False)])
def test_only_windows_gets_the_job_object(monkeypatch, platform, job_object):
    monkeypatch.setattr(sys, "platform", platform)
    assert processes.detect_platform().job_object is job_object


def test_off_windows_no_job_is_made(kernel32, monkeypatch):
    fake = kernel32()
    monkeypatch.setattr(processes, "PLATFORM", processes.detect_platform())  # this Linux
    tree = processes.ProcessTree()
    tree.contain(script_process())
    assert (fake.calls, tree.job, tree.notes) == ([], None, [])


def test_a_probe_whose_job_cannot_be_made_runs_and_reports_the_note(tmp_path, kernel32, monkeypatch, assert_no_leftovers):
    """The whole probe, with the job object's platform simulated on Linux (process groups kept, so that
    this machine's cleanup still runs) and an assignment that fails."""
    from dllint.probe import internals, run_probe

    fake = kernel32(("AssignProcessToJobObject",))
    monkeypatch.setattr(processes, "PLATFORM", processes.Platform(False, False, True, True, True, job_object=True))
    monkeypatch.setattr(internals, "windows_process_handle", lambda process: process.pid)
    script = write_script(tmp_path, """
        for batch in DataLoader(TensorDataset(torch.arange(8.0)), batch_size=4, num_workers=1):
            pass
    """)
    report = run_probe(str(script), [], [], timeout=30, progress=False, settings=checks_settings())
    assert report.script_outcome.startswith("the script ran to its end"), report.render_text()
    assert fake.names()[:3] == ["CreateJobObjectW", "SetInformationJobObject", "AssignProcessToJobObject"]
    assert fake.calls[2][1][1] == report.process_group  # the script's own process was the one assigned
    [note] = [note for note in report.notes if "job object" in note]
    assert note.startswith("no job object for the script's processes (AssignProcessToJobObject failed (Windows error 5))")
    assert f"  note: {note}" in report.render_text()
    assert_no_leftovers(report)
