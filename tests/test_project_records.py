"""The project index's records (dllint/project/records.py): what a run with a cache read from
every project file, kept for the next run, which reads again only the files whose stat moved,
and answers as an index that read every file."""

from __future__ import annotations

import os

from dllint.cache import Cache
from dllint.config import Settings
from dllint.project import records, search
from dllint.project.index import ProjectIndex

SETTINGS = Settings()
FILES = {
    "loaders.py": "from torch.utils.data import DataLoader\nclass FastLoader(DataLoader):\n    pass\n",
    "data.py": "from torch.utils.data import Dataset\nclass DS(Dataset):\n    def __len__(self): return 1\n",
    "train.py": "import sys\nsys.path.insert(0, 'lib')\nfrom data import DS\nfrom loaders import FastLoader as FL\nloader = FL(DS(), num_workers=2)\n",
    "other.py": "import os\nclass Plain:\n    pass\n",
}


def _project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text)
    return root


def _index(root, cache=None):
    index = ProjectIndex(root, SETTINGS)
    if cache is not None:
        index.use_records(cache)
    return index


def _answers(index, root):
    data = str(root / "data.py")
    return (
        index.text.loader_class_names(),
        index.text.class_names(),
        index.imports.importers(data, "DS"),
        index.imports.added_folders(str(root / "train.py")),
        [index.summaries.digest(str(root / name)) for name in sorted(FILES)],
    )


def _scans(monkeypatch):
    scanned: list[int] = []
    real = search.scan_classes

    def counting(data, start=0, end=None):
        scanned.append(1)
        return real(data, start, end)

    monkeypatch.setattr(search, "scan_classes", counting)
    return scanned


def _save(index, cache):
    index.remember_files(cache, [])


def _saved_side_file(tmp_path, root):
    """Index ``root`` with a cache under ``tmp_path / "c"``, answer the questions, save: the side file."""
    cache = Cache(tmp_path / "c", SETTINGS, ("DL201",))
    first = _index(root, cache)
    _answers(first, root)
    _save(first, cache)
    [side] = [p for p in (tmp_path / "c").rglob("project-*.records")]
    return side


def test_a_second_run_reads_only_the_file_that_changed_and_answers_as_a_fresh_index(tmp_path, monkeypatch):
    root = _project(tmp_path)
    first = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    assert _answers(first, root) == _answers(_index(root), root)
    _save(first, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    changed = root / "other.py"
    changed.write_text("from loaders import FastLoader\nclass Faster(FastLoader):\n    pass\n")
    os.utime(changed, ns=(1, 1))  # (a stat that moved, whatever the clock's resolution)
    scanned = _scans(monkeypatch)
    second = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    found = _answers(second, root)
    assert len(scanned) == 1  # other.py alone
    monkeypatch.undo()
    assert found == _answers(_index(root), root)
    assert b"Faster" in found[0][0]  # a new loader subclass in the changed file is one


def test_once_the_records_are_read_an_unchanged_files_digest_needs_no_read(tmp_path, monkeypatch):
    root = _project(tmp_path)
    first = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    expected = _answers(first, root)[4]
    _save(first, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    second = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    second.text.loader_class_names()  # a question of every file reads the records (a warm run asks none)
    read: list[str] = []
    monkeypatch.setattr(second.text, "read", lambda path: read.append(path))
    monkeypatch.setattr(second.files, "read", lambda path: read.append(path))
    assert [second.summaries.digest(str(root / name)) for name in sorted(FILES)] == expected
    assert read == []


def test_a_side_file_that_is_not_one_is_read_as_none(tmp_path):
    root = _project(tmp_path)
    side = _saved_side_file(tmp_path, root)
    head = '{"format": 6, "paths": "x", "stats": %s, "adds": "0", "ends": %s, "sections": {}}\n'
    packed_one, packed_three = '"0000000000000000"', '"010000000000000002000000000000000300000000000000"'  # (0,) and (1, 2, 3) as packed
    for garbage in (
        "not json",
        '{"format": 3, "files": {"x": [1, 2, 3, "d", "bad", "\\n", true]}}',
        "[]",
        '{"format": 5, "paths": ["x"]}\n',
        head % ('"not hexadecimal!"', packed_one),
        head % (packed_one, packed_one),  # one number for a stat of three
        head % (packed_three, '"0102"'),  # not whole 64-bit numbers
        head % (packed_three, "[1]"),  # a row past the end of the file
        head % ("[1, 2, true]", "[0]"),
    ):
        side.write_text(garbage)
        assert _answers(_index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",))), root) == _answers(_index(root), root)


def test_malformed_rows_are_read_again_from_the_file(tmp_path):
    root = _project(tmp_path)
    side = _saved_side_file(tmp_path, root)
    import json

    from dllint.project.side_file import packed_ints, unpacked_ints

    data = side.read_bytes()
    line = data.index(b"\n")
    head = json.loads(data[:line])
    ends = unpacked_ints(head["ends"])
    rows = [json.loads(data[line + 1 + start : line + 1 + end]) for start, end in zip([0, *ends], ends)]
    body = [json.dumps([digest, "not a class text", "no tab here"]).encode() + b"\n" for digest, _, _ in rows]
    sections = {name: data[line + 1 + start : line + 1 + end] for name, (start, end) in head["sections"].items()}
    ends = [sum(len(b) for b in body[: i + 1]) for i in range(len(body))]
    head["ends"] = packed_ints(ends)
    at = ends[-1]
    for name, section in sections.items():  # (kept as they were: what every file's rows said)
        head["sections"][name] = [at, at + len(section)]
        body.append(section)
        at += len(section)
    side.write_bytes(json.dumps(head).encode() + b"\n" + b"".join(body))
    assert _answers(_index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",))), root) == _answers(_index(root), root)


def test_parts_of_the_side_file_are_read_from_the_file_opened_and_only_when_asked_for(tmp_path, monkeypatch):
    """The records are read by parts: the first line, the sections a question needs, a row when
    its file is asked about. Every part comes from the file the run opened, though another run
    replaced it since (each write is a new file moved into place), and a part the file no longer
    holds (truncated in place by another program) is read as none: the answers are a fresh index's."""
    import json

    from dllint.cache import SideReader
    from dllint.project import side_file

    root = _project(tmp_path)
    side = _saved_side_file(tmp_path, root)
    data = side.read_bytes()
    size, line = len(data), data.index(b"\n")
    sections = {name: (line + 1 + start, line + 1 + end) for name, (start, end) in json.loads(data[:line])["sections"].items()}
    reads: list[tuple[int, int]] = []
    real = SideReader.read
    monkeypatch.setattr(SideReader, "read", lambda self, start, end: reads.append((start, end)) or real(self, start, end))
    monkeypatch.setattr(side_file, "HEAD_READ", 16)  # (read on from there to the first line's end)
    second = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    second.text.loader_class_names()
    head = [end for start, end in reads if start == 0]
    assert head[:2] == [16, 64] and head[-2] <= line < head[-1]  # on to the first line's end, and no further
    assert sorted(r for r in reads if r[0]) == sorted(sections[name] for name in ("keys", "loaders", "names"))  # not the union
    reads.clear()
    replacement = side.with_name("replacement")
    replacement.write_bytes(b"{}\n" + b"x" * size)
    os.replace(replacement, side)
    assert _answers(second, root) == _answers(_index(root), root)
    assert reads  # rows read, from the file opened
    side.unlink()
    _saved_side_file(tmp_path, root)
    third = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    third.text.loader_class_names()  # (the first line and the sections read)
    with open(side, "r+b") as opened:
        opened.truncate(len(side.read_bytes().split(b"\n", 1)[0]) + 5)
    (root / "other.py").write_text(FILES["other.py"] + "class Other2(Plain):\n    pass\n")  # a class text that changed: the union read
    os.utime(root / "other.py", ns=(5, 5))
    third.forget(str(root / "other.py"))
    monkeypatch.setattr(SideReader, "read", lambda self, start, end: reads.append(real(self, start, end)) or reads[-1])
    reads.clear()
    assert _answers(third, root) == _answers(_index(root), root)
    assert None in reads  # parts no longer there: read as none


def test_a_side_file_is_neither_read_nor_written_through_a_planted_symlink(tmp_path):
    cache = Cache(tmp_path / "c", SETTINGS, ("DL201",))
    cache.put_side("project-x.json", {"a": 1})
    assert Cache(tmp_path / "c", SETTINGS, ("DL201",)).side("project-x.json") == {"a": 1}
    [side] = list((tmp_path / "c").rglob("project-x.json"))
    outside = tmp_path / "outside.json"
    outside.write_text('{"planted": true}')
    side.unlink()
    side.symlink_to(outside)
    assert Cache(tmp_path / "c", SETTINGS, ("DL201",)).side("project-x.json") is None
    Cache(tmp_path / "c", SETTINGS, ("DL201",)).put_side("project-x.json", {"b": 2})
    assert outside.read_text() == '{"planted": true}'
    assert not side.is_symlink() and Cache(tmp_path / "c", SETTINGS, ("DL201",)).side("project-x.json") == {"b": 2}


def test_the_kept_union_and_import_keys_follow_files_changed_added_and_removed(tmp_path):
    """What every file's records say (the class text's union, which files bind each import key) is
    kept with the records and followed file by file: after a class and an import are lost, a file
    is added and one removed, the next run answers as an index that read every file."""
    root = _project(tmp_path)
    _saved_side_file(tmp_path, root)
    (root / "loaders.py").write_text("from torch.utils.data import DataLoader\nFastLoader = DataLoader\n")  # loses a class
    (root / "train.py").write_text("from loaders import FastLoader as FL\nloader = FL(range(3), num_workers=2)\n")  # loses `from data import DS`
    (root / "eval.py").write_text("from data import DS\nx = DS()\n")  # a new importer
    (root / "other.py").unlink()
    for name in ("loaders.py", "train.py", "eval.py"):
        os.utime(root / name, ns=(2, 2))
    second = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    found = _answers(second, root)[:4]
    assert found == _answers(_index(root), root)[:4]
    assert b"FastLoader" not in found[1] and [i.file for i in found[2]] == [str(root / "eval.py")]


def test_a_few_changed_records_are_not_written_back_and_are_read_again(tmp_path, monkeypatch):
    """One changed file does not rewrite the side file (every file's records: megabytes on a large
    project); the next run reads that file again and answers the same."""
    root = _project(tmp_path)
    side = _saved_side_file(tmp_path, root)
    written = side.stat().st_mtime_ns
    changed = root / "other.py"
    changed.write_text(FILES["other.py"] + "import json\nclass Plainer(Plain):\n    pass\n")  # (names only gained)
    os.utime(changed, ns=(1, 1))
    for _ in range(2):
        scanned = _scans(monkeypatch)
        index = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
        found = _answers(index, root)
        _save(index, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
        assert len(scanned) == 1 and side.stat().st_mtime_ns == written
        monkeypatch.undo()
        assert found == _answers(_index(root), root)


def test_a_file_touched_keeps_the_kept_class_names_and_loader_names_without_decoding_the_union(tmp_path, monkeypatch):
    """A changed file whose class text is the same (a comment added) leaves the names that may be
    classes and loader classes as they were saved: the next run answers them without decoding
    the union of every file's class text; a class added is seen (the union is followed)."""
    from dllint.project import class_text

    root = _project(tmp_path)
    _saved_side_file(tmp_path, root)
    touched = root / "train.py"
    touched.write_text(FILES["train.py"] + "# touched\n")
    os.utime(touched, ns=(3, 3))
    decoded: list[int] = []
    real = class_text.ClassText.from_text.__func__

    monkeypatch.setattr(class_text.ClassText, "from_text", classmethod(lambda cls, text: decoded.append(1) or real(cls, text)))
    json_read = records._json_str
    monkeypatch.setattr(records, "_json_str", lambda data: decoded.append(2) or json_read(data))  # (nor its JSON)
    second = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    names = second.text.loader_class_names()
    kept = [second.text.is_class_name(name) for name in (b"FastLoader", b"DS", b"Plain", b"FL", b"Nothing")]
    assert decoded == []
    monkeypatch.undo()
    fresh = _index(root)
    assert names == fresh.text.loader_class_names()
    assert kept == [name in fresh.text.class_names() for name in (b"FastLoader", b"DS", b"Plain", b"FL", b"Nothing")] == [True, True, True, True, False]
    touched.write_text(FILES["train.py"] + "class Faster(FL):\n    pass\n")
    os.utime(touched, ns=(4, 4))
    third = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    assert b"Faster" in third.text.loader_class_names()[0] and third.text.is_class_name(b"Faster")
    assert third.text.loader_class_names() == _index(root).text.loader_class_names()


def test_stored_import_keys_that_are_not_numbers_read_as_no_file(tmp_path):
    """Each import key's files are read from its own line of the side file when first asked for;
    a line whose numbers are not numbers lists no file (the key's importers are then those the
    index finds otherwise: none kept, none read)."""
    root = _project(tmp_path)
    side = _saved_side_file(tmp_path, root)
    data = side.read_bytes()
    at = data.index(b"\nDS\t") + 4
    side.write_bytes(data[:at] + b"x" + data[at + 1 :])  # (its length kept: where each section lies holds)
    index = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    assert index.files.records.key_files("DS") == []
    assert index.files.records.key_files("FastLoader") == [str(root / "train.py")]


def _age(root, seconds=60):
    """Every folder under ``root`` last changed ``seconds`` ago (past RACY_NS: its listing is kept)."""
    import time

    then = time.time_ns() - seconds * 1_000_000_000
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        os.utime(folder, ns=(then, then))


def _listings(monkeypatch):
    from dllint.project import files

    listed: list[str] = []
    real = files._list
    monkeypatch.setattr(files, "_list", lambda directory: listed.append(directory) or real(directory))
    return listed


def test_a_folder_whose_mtime_stayed_is_not_listed_again_and_one_that_changed_is(tmp_path, monkeypatch):
    """The walk of the project's files keeps each folder's listing with the records: the next run
    lists again only the folders whose mtime (or inode) moved, and finds the same files as a walk
    of every folder; a file added to a folder is found (its mtime moved), and so is a new folder."""
    root = _project(tmp_path)
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "pkg" / "sub" / "deep.py").write_text("y = 2\n")
    _age(root)
    _saved_side_file(tmp_path, root)
    expected = _index(root).files.paths()
    listed = _listings(monkeypatch)
    assert _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",))).files.paths() == expected and listed == []
    (root / "pkg" / "added.py").write_text("z = 3\n")
    (root / "pkg" / "new").mkdir()
    (root / "pkg" / "new" / "inner.py").write_text("w = 4\n")
    found = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",))).files.paths()
    assert listed == [str(root / "pkg"), str(root / "pkg" / "new")]
    monkeypatch.undo()
    assert found == _index(root).files.paths() and str(root / "pkg" / "new" / "inner.py") in found


def test_a_folder_changed_just_before_its_listing_is_listed_again_next_run(tmp_path, monkeypatch):
    """A folder whose mtime is within RACY_NS of its listing may change again within the same tick
    of the file system's clock, its mtime unmoved: its listing is not trusted next run."""
    root = _project(tmp_path)
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    _age(root)
    (root / "pkg" / "late.py").write_text("y = 2\n")  # pkg changed now
    _saved_side_file(tmp_path, root)
    expected = _index(root).files.paths()
    listed = _listings(monkeypatch)
    assert _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",))).files.paths() == expected and listed == [str(root / "pkg")]


def test_kept_folders_that_are_not_listings_are_listed_again(tmp_path, monkeypatch):
    """The kept folders are a side file of their own, read by the walk without the records (a
    run that asks no record never reads their megabytes); one that is not a listing is none."""
    import json

    from dllint.project.records import _folders

    for garbage in ([], {"a": [1, 2, "x", []]}, {"a": [1, 2, [3], []]}, {"a": [1, 2, [], []], "b": 5}, "nope", None):
        assert _folders(garbage) == {}
    assert _folders({"a": [1, 2, ["m.py"], ["pkg"]]}) == {"a": [1, 2, ["m.py"], ["pkg"]]}
    root = _project(tmp_path)
    _age(root)
    _saved_side_file(tmp_path, root)
    [kept] = list((tmp_path / "c").rglob("project-*.folders"))
    index = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    listed = _listings(monkeypatch)
    index.files.paths()
    assert listed == [] and not index.files.records.loaded
    kept.write_text(json.dumps({str(root): [1, 2, "x", []]}))
    index = _index(root, Cache(tmp_path / "c", SETTINGS, ("DL201",)))
    index.files.paths()
    assert listed == [str(root)]
