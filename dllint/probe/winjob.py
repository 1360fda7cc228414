"""Windows: every process the probe starts in one job object that dies with dllint.

Windows has no process groups, no child subreaper and no ``PR_SET_PDEATHSIG``. A job object
created with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` does their work: the script's process is
assigned to it right after it is created, every process it starts afterwards (DataLoader workers
under spawn, a launcher's ranks) is in the job too (breaking away is not allowed), and when the
job's last handle closes, which happens when dllint exits or is killed, Windows terminates them
all. Cleanup terminates the job explicitly first.

Plain ``ctypes`` on kernel32 (no pywin32). The process is assigned after ``CreateProcess``
returns, not started suspended (``subprocess.Popen`` closes the thread handle needed to resume
it): a process the script starts before that, in the first instant of its interpreter's start-up,
would escape the job. Every failure (a nested job on Windows before 8, access denied) is a
:class:`JobUnavailable` whose message the report shows as a note; cleanup then does what it does
without a job (processes found by watching the tree and by the probe's environment marker).
"""

from __future__ import annotations

import ctypes
from ctypes import wintypes
from dataclasses import dataclass
from typing import Any

JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9  # JobObjectExtendedLimitInformation
KILLED_EXIT_CODE = 1  # what TerminateJobObject gives each process as its exit status


# The Windows SDK's structs, in fixed-width types (wintypes.DWORD is a C long: 8 bytes on Linux, 4 on
# Windows), so that the layout is Windows' own wherever it is built, and tests check it on Linux.
class IO_COUNTERS(ctypes.Structure):  # noqa: N801 - the SDK's names
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
        "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]


class JOBOBJECT_BASIC_LIMIT_INFORMATION(ctypes.Structure):  # noqa: N801
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),  # LARGE_INTEGER
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),  # DWORD
        ("MinimumWorkingSetSize", ctypes.c_size_t),  # SIZE_T
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),  # ULONG_PTR
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class JOBOBJECT_EXTENDED_LIMIT_INFORMATION(ctypes.Structure):  # noqa: N801
    _fields_ = [
        ("BasicLimitInformation", JOBOBJECT_BASIC_LIMIT_INFORMATION),
        ("IoInfo", IO_COUNTERS),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


# kernel32's prototypes: a HANDLE is pointer-sized, and ctypes' default int result would cut it to 32 bits.
PROTOTYPES: dict[str, tuple[tuple[Any, ...], Any]] = {
    "CreateJobObjectW": ((wintypes.LPVOID, wintypes.LPCWSTR), wintypes.HANDLE),
    "SetInformationJobObject": ((wintypes.HANDLE, ctypes.c_int, wintypes.LPVOID, wintypes.DWORD), wintypes.BOOL),
    "AssignProcessToJobObject": ((wintypes.HANDLE, wintypes.HANDLE), wintypes.BOOL),
    "TerminateJobObject": ((wintypes.HANDLE, wintypes.UINT), wintypes.BOOL),
    "CloseHandle": ((wintypes.HANDLE,), wintypes.BOOL),
}


class JobUnavailable(Exception):
    """The job object could not be made or the process not put in it; the message is the report's note."""


@dataclass(frozen=True)
class Kernel32:
    """kernel32's functions with their prototypes, and how to read the error a failed call left."""

    functions: Any
    last_error: Any  # () -> int

    @classmethod
    def load(cls) -> Kernel32:
        """The real kernel32 (Windows only; raises JobUnavailable elsewhere)."""
        try:
            functions = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
            return cls.declared(functions, ctypes.get_last_error)  # type: ignore[attr-defined]
        except (AttributeError, OSError) as error:
            raise JobUnavailable(f"kernel32 cannot be loaded: {error}") from None

    @classmethod
    def declared(cls, functions: Any, last_error: Any) -> Kernel32:
        for name, (argtypes, restype) in PROTOTYPES.items():
            function = getattr(functions, name)
            function.argtypes, function.restype = argtypes, restype
        return cls(functions, last_error)

    def call(self, name: str, *args: Any) -> Any:
        """Call ``name``; a zero result (FALSE, a NULL handle) raises JobUnavailable with the Windows error code."""
        try:
            result = getattr(self.functions, name)(*args)
        except (ctypes.ArgumentError, OSError) as error:  # a bad argument, or a Windows exception in the call
            raise JobUnavailable(f"{name} failed ({error})") from None
        if not result:
            raise JobUnavailable(f"{name} failed (Windows error {self.last_error()})")
        return result


def kill_on_close_limits() -> JOBOBJECT_EXTENDED_LIMIT_INFORMATION:
    info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    return info


class JobObject:
    """One job object holding the probe's script and all it starts; :meth:`close` kills them all."""

    def __init__(self, kernel32: Kernel32, handle: int) -> None:
        self.kernel32 = kernel32
        self.handle: int | None = handle

    @classmethod
    def containing(cls, process_handle: int | None) -> JobObject:
        """A new kill-on-close job with the process (its Windows handle) in it; raises JobUnavailable.

        The job's handle is not inheritable (no security attributes), so only dllint holds it and
        its death closes the job.
        """
        if process_handle is None:
            raise JobUnavailable("the script's process has no Windows handle")
        kernel32 = Kernel32.load()
        job = cls(kernel32, kernel32.call("CreateJobObjectW", None, None))
        try:
            info = kill_on_close_limits()
            kernel32.call("SetInformationJobObject", job.handle, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
                          ctypes.pointer(info), ctypes.sizeof(info))
            kernel32.call("AssignProcessToJobObject", job.handle, process_handle)
        except JobUnavailable:
            job.close()
            raise
        return job

    def close(self) -> None:
        """Terminate every process in the job, then close it (closing alone would kill them as well)."""
        if self.handle is None:
            return
        handle, self.handle = self.handle, None
        for name, args in (("TerminateJobObject", (handle, KILLED_EXIT_CODE)), ("CloseHandle", (handle,))):
            try:
                self.kernel32.call(name, *args)
            except JobUnavailable:  # an empty job, or one already gone: nothing left to kill
                pass
