"""The torch and CPython internals the probe relies on, checked against the pinned torch.

When torch changes a message or drops a private attribute, these fail here,
instead of a verdict quietly turning into "not confirmed".
"""

from __future__ import annotations

import inspect
import multiprocessing.process
import multiprocessing.spawn
import threading
import types

import pytest

from dllint.probe import internals
from dllint.probe.checks.spawn import pickling_error
from probe_helpers import require_torch

require_torch()  # found, imported by the tests that run: every xdist worker collects this module


@pytest.fixture(scope="module")
def torch():
    return torch_module()


def torch_module():
    import torch

    return torch


def data():
    from torch.utils.data import TensorDataset

    return TensorDataset(torch_module().arange(4.0))


def stream():
    from torch.utils.data import IterableDataset

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(4))

    return Stream()


class Holder:
    def __init__(self):
        self.lock = threading.Lock()


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"dataset": stream, "shuffle": True}, "DL006"),
        ({"dataset": data, "persistent_workers": True}, "DL001"),
        ({"dataset": data, "prefetch_factor": 2}, "DL002"),
        ({"dataset": data, "multiprocessing_context": "spawn"}, "DL002"),
        ({"dataset": data, "shuffle": True, "sampler": range(4)}, "DL003"),
        ({"dataset": data, "batch_sampler": [[0, 1]], "batch_size": 2}, "DL004"),
        ({"dataset": data, "batch_size": None, "drop_last": True}, "DL004"),
        ({"dataset": data, "num_workers": -1}, "DL005"),
        ({"dataset": data, "num_workers": 1, "multiprocessing_context": "no-such-method"}, "DL005"),
    ],
)
def test_each_construction_message_is_torchs_own(arguments, code):
    from torch.utils.data import DataLoader

    with pytest.raises(ValueError) as raised:
        DataLoader(**{**arguments, "dataset": arguments["dataset"]()})
    assert internals.construction_code(raised.value) == code


def test_pickling_messages_name_the_culprit():
    def local():
        return None

    assert internals.pickling_code("collate_fn", pickling_error(lambda batch: batch)) == "DL102"
    assert internals.pickling_code("collate_fn", pickling_error(local)) == "DL103"
    assert internals.pickling_code("dataset", pickling_error(Holder())) == "DL104"
    # A later epoch's crash reads the same messages from the one line the report keeps.
    from dllint.probe.measure import describe_error

    shown = [describe_error(pickling_error(value)) for value in (lambda batch: batch, local, Holder())]
    assert [internals.crash_code(text) for text in shown] == ["DL102", "DL103", "DL104"]


def test_a_workers_error_names_its_frames_and_a_daemonic_worker_cannot_start_a_pool(torch):
    from torch.utils.data import DataLoader, TensorDataset

    class Failing(TensorDataset):
        def __getitem__(self, index):
            raise ValueError("corrupt")

    iterator = iter(DataLoader(Failing(torch.arange(4.0)), num_workers=1))
    try:
        with pytest.raises(ValueError) as raised:
            next(iterator)
    finally:  # the traceback keeps the iterator, and so its worker, alive past the test: end it here
        iterator._shutdown_workers()  # type: ignore[attr-defined]
    frames = internals.worker_frames(raised.value)
    assert frames[-1] == (__file__, Failing.__getitem__.__code__.co_firstlineno + 1)
    assert internals.crash_code(str(raised.value)) is None
    assert internals.worker_frames(ValueError("raised in the main process")) == []
    assert internals.DAEMONIC_CHILDREN in inspect.getsource(multiprocessing.process)


def test_messages_read_from_torch_and_multiprocessing_are_still_there(torch):
    import torch._utils
    import torch.cuda

    assert internals.SPAWN_BOOTSTRAP in inspect.getsource(multiprocessing.spawn)
    assert internals.CUDA_REINIT in inspect.getsource(torch.cuda)
    assert internals.WORKER_TRACEBACK in inspect.getsource(torch._utils.ExceptionWrapper)


def test_the_private_attributes_the_probe_tunes_exist_in_the_pinned_torch():
    from torch.utils.data import DataLoader
    from torch.utils.data import dataloader as dataloader_module

    multi = dataloader_module._MultiProcessingDataLoaderIter
    assert multi._try_get_data.__defaults__ == (dataloader_module._utils.MP_STATUS_CHECK_INTERVAL,)
    assert hasattr(multi, "_shutdown_workers")
    loader = DataLoader(data(), num_workers=1, persistent_workers=True)
    assert hasattr(loader, "_iterator")


def test_tuning_is_guarded_where_an_attribute_is_missing():
    class Iterator:
        def _try_get_data(self, timeout=5.0):
            return timeout

    present = types.SimpleNamespace(_MultiProcessingDataLoaderIter=Iterator,
                                    _utils=types.SimpleNamespace(MP_STATUS_CHECK_INTERVAL=5.0))
    assert internals.tune_worker_polling(present) == []
    assert Iterator._try_get_data.__defaults__ == (internals.WORKER_CHECK_SECONDS,)
    assert present._utils.MP_STATUS_CHECK_INTERVAL == internals.SHUTDOWN_JOIN_SECONDS
    missing = types.SimpleNamespace()
    assert internals.tune_worker_polling(missing) == ["_MultiProcessingDataLoaderIter._try_get_data",
                                                      "_utils.MP_STATUS_CHECK_INTERVAL"]


def test_generator_classes_are_real_classes(torch):
    import random

    import numpy

    classes = internals.generator_classes()
    for generator in (random.Random(0), numpy.random.default_rng(0), numpy.random.RandomState(0), torch.Generator()):
        assert isinstance(generator, classes)


def test_the_process_init_signature_the_probe_wraps_is_cpythons(monkeypatch):
    from multiprocessing.process import BaseProcess

    parameters = inspect.signature(BaseProcess.__init__).parameters
    assert list(parameters) == ["self", "group", "target", "name", "args", "kwargs", "daemon"]
    assert parameters["daemon"].kind is inspect.Parameter.KEYWORD_ONLY
    monkeypatch.setattr(BaseProcess, "__init__", BaseProcess.__init__)
    internals.replace_process_targets(lambda target, args: (print, ("replaced", *args)) if target is len else None)
    process = multiprocessing.Process(target=len, args=("x",), daemon=True)
    assert process._target is print and process._args == ("replaced", "x") and process.daemon
    assert multiprocessing.Process(target=abs)._target is abs


def test_torch_writers_and_jit_load_go_through_the_guard(monkeypatch, tmp_path, torch):
    from torch.jit._script import RecursiveScriptModule

    for owner, name in [(torch, "save"), (torch.serialization, "save"), (RecursiveScriptModule, "save"),
                        (torch.jit, "load"), (torch.UntypedStorage, "from_file"), (torch, "from_file")]:
        monkeypatch.setattr(owner, name, getattr(owner, name))  # restored after the test
    asked = []

    def redirect(action, path, keep_content=False):
        asked.append((action, keep_content))
        return str(tmp_path / f"redirected-{len(asked)}")

    internals.redirect_torch_writers(redirect, lambda path: str(tmp_path / "redirected-2"))
    (tmp_path / "data.bin").write_bytes(bytes(8))
    torch.save({}, "model.pth")
    torch.jit.save(torch.jit.script(torch.nn.Linear(1, 1)), "model.pt")
    assert torch.jit.load("model.pt") is not None  # read back from the redirected copy
    torch.UntypedStorage.from_file(str(tmp_path / "data.bin"), shared=False, nbytes=8)  # private: not redirected
    (tmp_path / "redirected-3").write_bytes(bytes(8))
    torch.UntypedStorage.from_file(str(tmp_path / "data.bin"), shared=True, nbytes=8)
    assert asked == [("torch.save", False), ("torch.jit.save", False), ("torch.UntypedStorage.from_file", True)]
