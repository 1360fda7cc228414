"""The worker-code facts: which functions a multi-worker loader's workers run."""

from __future__ import annotations

import ast
import textwrap

from dllint.config import Settings
from dllint.facts import FileFacts


def facts_for(source: str) -> FileFacts:
    source = textwrap.dedent(source)
    return FileFacts("<test>", source, ast.parse(source), Settings())


def worker_function_names(facts: FileFacts) -> set[str]:
    return {info.name for info in facts.worker_code.functions.values()}


def test_dataset_methods_and_what_they_call():
    facts = facts_for(
        """
        from torch.utils.data import DataLoader, Dataset

        def decode(x):
            return helper(x)

        def helper(x):
            return x

        def unrelated():
            pass

        class Base(Dataset):
            def __len__(self):
                return 3

            def load(self, i):
                return decode(i)

        class Images(Base):
            def __init__(self):
                self.items = []

            def __getitem__(self, i):
                return self.load(i)

            def main_process_only(self):
                pass

        ds = Images()
        loader = DataLoader(ds, num_workers=2)
        """
    )
    assert worker_function_names(facts) == {"__getitem__", "__len__", "load", "decode", "helper"}
    info = next(i for i in facts.worker_code.functions.values() if i.name == "load")
    assert info.entry == "__getitem__ of 'Images'"
    assert [loader.node for loader in info.loaders] == [facts.loader_calls[0].node]


def test_callables_through_names_partial_self_and_instances():
    facts = facts_for(
        """
        import functools
        from torch.utils.data import DataLoader

        def pad(batch, value):
            return batch

        def seed(worker_id):
            pass

        class Collator:
            def __call__(self, batch):
                return batch

        class Module:
            def collate(self, batch):
                return batch

            def loader(self):
                return DataLoader(self.ds, num_workers=2, collate_fn=self.collate)

        init = seed
        DataLoader(ds, num_workers=2, collate_fn=functools.partial(pad, value=0), worker_init_fn=init)
        DataLoader(ds, num_workers=2, collate_fn=Collator())
        DataLoader(ds, num_workers=2, collate_fn=lambda b: b)
        """
    )
    assert worker_function_names(facts) == {"pad", "seed", "__call__", "collate", "<lambda>"}


def test_single_worker_loaders_run_nothing_in_workers():
    facts = facts_for(
        """
        from torch.utils.data import DataLoader, Dataset

        class Ds(Dataset):
            def __getitem__(self, i):
                return i

        def collate(b):
            return b

        DataLoader(Ds(), collate_fn=collate)
        DataLoader(Ds(), num_workers=0, collate_fn=collate)
        """
    )
    assert facts.worker_code.functions == {}
    cls = facts.classes["Ds"]
    assert len(facts.worker_code.loaders_using(cls)) == 2  # every loader, whatever its workers


def test_worker_function_of_finds_enclosing_worker_code():
    facts = facts_for(
        """
        from torch.utils.data import DataLoader, Dataset

        class Ds(Dataset):
            def __getitem__(self, i):
                return list(map(lambda x: x.cuda(), i))

            def elsewhere(self):
                return 1

        DataLoader(Ds(), num_workers=4)
        """
    )
    calls = {ast.unparse(c): c for c in facts.calls}
    inside = facts.worker_code.worker_function_of(calls["x.cuda()"])
    assert inside is not None and inside.name == "__getitem__"
    method = facts.classes["Ds"].method("elsewhere")
    assert facts.worker_code.worker_function_of(method.body[0].value) is None


def test_dynamic_and_foreign_values_resolve_to_nothing():
    facts = facts_for(
        """
        from torch.utils.data import DataLoader
        from mylib import collate, Dataset

        def build(ds, fn):
            return DataLoader(ds, num_workers=2, collate_fn=fn, worker_init_fn=collate)
        """
    )
    assert facts.worker_code.functions == {}


def test_computed_once_and_lazily():
    facts = facts_for("from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=2)\n")
    assert "worker_code" not in facts.__dict__
    assert facts.worker_code is facts.worker_code
