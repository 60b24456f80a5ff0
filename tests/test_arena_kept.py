"""An arena's deals kept in a file as they are played (``run_arena(keep_deals=...)``,
``rummyzoo arena --keep-deals FILE``): a stopped arena goes on where it was, a longer one plays
only the new deals, and a file of another arena is refused with nothing changed."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

import rummyzoo.agents.arena as arena_module
from rummyzoo.agents.arena import _parts, run_arena
from rummyzoo.cli import main as cli

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels


AGENTS = ["random", "knock.greedy"]


def _same(a, b) -> None:
    for key in ("deal", "seating", "seat_agents", "points", "hands", "decisions", "truncated"):
        assert np.array_equal(getattr(a, key), getattr(b, key)), key


def _stop_at(monkeypatch, method: str, calls: int) -> list[int]:
    """Make ``_Table.<method>`` raise KeyboardInterrupt at its ``calls``-th call (counted from
    1); the calls made are counted in the list returned."""
    original = getattr(arena_module._Table, method)
    made: list[int] = []

    def stopping(self, *args, **kwargs):
        made.append(1)
        if len(made) == calls:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(arena_module._Table, method, stopping)
    return made


def test_a_stopped_arena_goes_on_where_it_was(tmp_path, monkeypatch) -> None:
    """Ctrl-C after 5 of 12 deals: the 5 are kept (the stop's note says where), and the same
    arena with the file plays only the other 7 and reports what one run of 12 reports."""
    kept = tmp_path / "deals.npz"
    whole = run_arena("knock_rummy", 2, AGENTS, deals=12, seed=4)
    _stop_at(monkeypatch, "play_deals", 6)
    with pytest.raises(KeyboardInterrupt) as stop:
        run_arena("knock_rummy", 2, AGENTS, deals=12, seed=4, keep_deals=kept)
    assert f"5 of the 12 deals are kept in {kept}" in " ".join(stop.value.__notes__)
    monkeypatch.undo()
    played = _stop_at(monkeypatch, "play_deals", 0)  # (counts only)
    again = run_arena("knock_rummy", 2, AGENTS, deals=12, seed=4, keep_deals=kept)
    assert len(played) == 7
    _same(again, whole)
    assert again.notes == [
        f"5 of the 12 deals were read from {kept} (played by an earlier run of this arena), the "
        "rest played now"
    ]
    played.clear()
    third = run_arena("knock_rummy", 2, AGENTS, deals=12, seed=4, keep_deals=kept)
    assert not played  # all kept: nothing to play
    _same(third, whole)
    fewer = run_arena("knock_rummy", 2, AGENTS, deals=7, seed=4, keep_deals=kept)
    _same(fewer, run_arena("knock_rummy", 2, AGENTS, deals=7, seed=4))


def test_more_deals_play_only_the_new_ones_on_workers_and_in_batches(tmp_path) -> None:
    """Kept deals of a run on two processes, then more deals in batches on two processes: the
    games of one run of them all (the heuristics play alike one by one and in batches)."""
    kept = tmp_path / "deals.npz"
    whole = run_arena("knock_rummy", 2, AGENTS, deals=20, seed=5)
    first = run_arena("knock_rummy", 2, AGENTS, deals=9, seed=5, workers=2, keep_deals=kept)
    _same(first, run_arena("knock_rummy", 2, AGENTS, deals=9, seed=5))
    more = run_arena(
        "knock_rummy", 2, AGENTS, deals=20, seed=5, workers=2, batch=4, keep_deals=kept
    )
    _same(more, whole)
    # parts of 2 deals on two workers: deal 8's part lacks deal 9, and is played again whole
    assert more.notes and more.notes[0].startswith("8 of the 20 deals were read")


def test_a_batched_arena_stopped_between_its_parts_goes_on(tmp_path, monkeypatch) -> None:
    """In one process with batches, the deals are played and kept part after part: a stop
    in the third part keeps the first two, and the run that goes on gives the whole run's
    games."""
    kept = tmp_path / "deals.npz"
    whole = run_arena("knock_rummy", 2, AGENTS, deals=400, seed=6, batch=8)
    parts = _parts(400, 2, 1, 8)
    assert len(parts) > 2
    _stop_at(monkeypatch, "play_batched", 3)
    with pytest.raises(KeyboardInterrupt):
        run_arena("knock_rummy", 2, AGENTS, deals=400, seed=6, batch=8, keep_deals=kept)
    with np.load(kept) as data:
        assert data["deals"].tolist() == list(range(parts[1][1]))
    monkeypatch.undo()
    _same(run_arena("knock_rummy", 2, AGENTS, deals=400, seed=6, batch=8, keep_deals=kept), whole)


def test_a_longer_batched_arena_plays_the_parts_of_one_run(tmp_path, monkeypatch) -> None:
    """10 deals kept, then 400 with the same batches: the part the first run cut short is
    played again whole, so that every batch of games is the one a run of 400 deals plays (a
    network's close scores can round otherwise in another batch)."""
    kept = tmp_path / "deals.npz"
    run_arena("knock_rummy", 2, AGENTS, deals=10, seed=6, batch=8, keep_deals=kept)
    calls: list[list[int]] = []
    original = arena_module._Table.play_batched

    def recorded(self, deals, batch, bar=None):
        calls.append(list(deals))
        return original(self, deals, batch, bar)

    monkeypatch.setattr(arena_module._Table, "play_batched", recorded)
    longer = run_arena("knock_rummy", 2, AGENTS, deals=400, seed=6, batch=8, keep_deals=kept)
    assert calls == [list(range(a, b)) for a, b in _parts(400, 2, 1, 8)]
    assert not longer.notes  # the ten were played again, inside their part
    calls.clear()
    run_arena("knock_rummy", 2, AGENTS, deals=400, seed=6, batch=8, keep_deals=kept)
    assert not calls


@pytest.mark.parametrize("per_deal, batch", [(2, 8), (12, 16), (6, 4), (5, 7), (24, 1)])
def test_parts_of_batches_hold_whole_batches(per_deal, batch) -> None:
    """In one process, each part but the last starts and ends on a batch's edge, counted in
    games from the run's first, so its batches are those of one call over every deal; with
    workers, about 8 parts a worker; the parts cover the deals in order."""
    for deals in (1, 7, 300):
        parts = _parts(deals, per_deal, 1, batch)
        assert [d for a, b in parts for d in range(a, b)] == list(range(deals))
        if batch > 1:
            for a, b in parts[:-1]:
                assert a * per_deal % batch == 0 and b * per_deal % batch == 0
        else:
            assert all(b - a == 1 for a, b in parts)
    assert len(_parts(300, per_deal, 2, batch)) == 16


def test_a_file_of_another_arena_is_refused_and_left_as_it_was(tmp_path) -> None:
    kept = tmp_path / "deals.npz"
    run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=kept)
    before = kept.read_bytes()
    # a default spelled out is the same arena as one left out
    same = run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=kept, options={
        "target_score": None, "knock_max_deadwood": None})  # fmt: skip
    assert same.notes[0].startswith("all 3 deals were read")
    others = [
        (dict(seed=8), "seed"),
        (dict(options={"target_score": 100}), "options"),
        (dict(agents=["random", "knock.smart"]), "agents"),
        (dict(agents=["knock.greedy", "random"]), "agents"),
    ]
    for change, named in others:
        args = {"agents": AGENTS, "seed": 7, **change}
        with pytest.raises(ValueError, match=f"another arena: not this run's {named}"):
            run_arena("knock_rummy", 2, deals=5, keep_deals=kept, **args)
        assert kept.read_bytes() == before
    with pytest.raises(
        ValueError,
        match=r"not this run's options \(hand_size: 10 in the file, 7 here; num_players: 2 in the file, 3 here\), players \(2 in the file, 3 here\), seatings \(give",
    ):
        run_arena("knock_rummy", 3, AGENTS, deals=5, seed=7, keep_deals=kept)
    text = tmp_path / "notes.txt"
    text.write_text("not deals")
    with pytest.raises(ValueError, match=r"kept deals \(not an \.npz archive\)"):
        run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=text)
    assert text.read_text() == "not deals"
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    with pytest.raises(ValueError, match=r"kept deals \(KeyError"):
        run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=other)


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda a: {**a, "points": a["points"][:-1]}, "its points are not 6 rows of 2 numbers"),
        (lambda a: {**a, "points": a["points"][:, :1]}, "its points are not 6 rows of 2 numbers"),
        (lambda a: {**a, "points": a["points"].astype(str)}, "its points are not 6 rows"),
        (lambda a: {**a, "points": a["points"] * np.nan}, "a point total is not a finite number"),
        (lambda a: {**a, "hands": a["hands"][:, None]}, "its hands are not 6 counts"),
        (lambda a: {**a, "deals": np.array([0, 0, 1])}, "a deal is kept twice"),
        (lambda a: {**a, "replays": np.asarray("[[0, 5]]")}, "its replays are not lists"),
        (lambda a: {k: v for k, v in a.items() if k != "truncated"}, "its arrays are"),
    ],
)
def test_a_damaged_file_is_refused(tmp_path, damage, why) -> None:
    """A file whose key is this arena's but whose arrays a run would not write (cut, of
    another shape or kind, not finite): refused as damaged, not a traceback or a report of
    NaN."""
    kept = tmp_path / "deals.npz"
    run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=kept)
    with np.load(kept) as data:
        arrays = dict(data)
    np.savez(kept, **damage(arrays))
    with pytest.raises(ValueError, match=rf"is damaged \({re.escape(why)}"):
        run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=kept)


def test_a_file_that_would_unpack_or_read_to_far_more_than_it_holds_is_refused(tmp_path):
    """Crafted files: an array that a small file unpacks to far more than its deals' games
    make (a deflate bomb: 2 MB to 2 GiB was read whole before anything was checked); an array whose header declares 2**40 numbers (numpy's
    MemoryError); a key nested 100,000 deep (RecursionError): each was a traceback, or
    gigabytes of memory first. Refused as no kept deals, in one line."""
    import io
    import zipfile

    kept = tmp_path / "deals.npz"
    run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=kept)
    with np.load(kept) as data:
        arrays = dict(data)

    def with_member(name: str, payload: bytes, packing: int = zipfile.ZIP_STORED) -> None:
        buf = io.BytesIO()
        np.savez(buf, **{k: v for k, v in arrays.items() if k != name})
        with zipfile.ZipFile(buf, "a", packing) as z:
            z.writestr(f"{name}.npy", payload)
        kept.write_bytes(buf.getvalue())

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (1 << 20, 2)}
    )
    zeros = header.getvalue() + bytes(16 << 20)
    with_member("points", zeros, zipfile.ZIP_DEFLATED)  # 16 MiB of zeros: 16 KiB packed
    assert kept.stat().st_size < 1 << 20
    with pytest.raises(ValueError, match=r"its points.npy unpacks to 16,777,\d+ bytes from \d"):
        run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=kept)
    with_member("points", zeros)  # stored as it is: more than 3 deals' games make
    with pytest.raises(ValueError, match=r"its points.npy unpacks to 16,777,\d+ bytes, more than"):
        run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=kept)
    # the count of deals the file sets cannot raise the budget: a bomb beside 500,000 deals
    many = io.BytesIO()
    np.savez(many, **{**arrays, "deals": np.arange(500_000)})
    with zipfile.ZipFile(many, "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bomb.npy", bytes(32 << 20))
    kept.write_bytes(many.getvalue())
    with pytest.raises(ValueError, match=r"its bomb.npy unpacks to 33,554,432 bytes from \d"):
        run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=kept)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (1 << 40,)}
    )
    with_member("points", header.getvalue())
    with pytest.raises(ValueError, match=r"not a file of an arena's kept deals \(\w*Error"):
        run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=kept)
    nested = "[" * 100_000 + "]" * 100_000
    buf = io.BytesIO()
    np.savez(buf, **{**arrays, "key": np.asarray(nested)})
    kept.write_bytes(buf.getvalue())
    with pytest.raises(ValueError, match=r"kept deals \(RecursionError: maximum recursion"):
        run_arena("knock_rummy", 2, AGENTS, deals=3, seed=7, keep_deals=kept)


def test_a_checkpoint_is_known_by_its_bytes(tmp_path) -> None:
    """The same checkpoint moved goes on from the file; another checkpoint under the first
    one's name is another agent."""
    from run_helpers import untrained_checkpoint

    net = untrained_checkpoint(tmp_path / "a" / "net.rz", ("seed=1",))
    kept = tmp_path / "deals.npz"
    run_arena("knock_rummy", 2, [str(net), "random"], deals=2, seed=1, keep_deals=kept)
    moved = tmp_path / "b" / "net.rz"
    moved.parent.mkdir()
    net.rename(moved)
    again = run_arena("knock_rummy", 2, [str(moved), "random"], deals=2, seed=1, keep_deals=kept)
    assert again.notes[0].startswith("all 2 deals were read")
    untrained_checkpoint(moved, ("seed=2",))
    with pytest.raises(ValueError, match="not this run's agents"):
        run_arena("knock_rummy", 2, [str(moved), "random"], deals=2, seed=1, keep_deals=kept)


def test_the_command_keeps_its_deals_and_says_how_to_go_on(tmp_path, monkeypatch, capsys):
    kept = tmp_path / "deals.npz"
    base = ["arena", "knock_rummy", "--agents", *AGENTS, "--seed", "3", "--workers", "1"]
    assert cli.main([*base, "--deals", "4", "--keep-deals", str(kept)]) == 0
    assert kept.exists()
    capsys.readouterr()
    assert cli.main([*base, "--deals", "6", "--keep-deals", str(kept)]) == 0
    assert f"4 of the 6 deals were read from {kept}" in capsys.readouterr().out
    assert cli.main([*base, "--deals", "6", "--keep-deals", str(tmp_path)]) == 2
    assert f"--keep-deals {tmp_path} is a folder" in capsys.readouterr().err
    _stop_at(monkeypatch, "play_deals", 2)
    assert cli.main([*base, "--deals", "6"]) == 130
    err = capsys.readouterr().err
    assert "interrupted (--keep-deals FILE keeps the deals as they are played" in err, err
    monkeypatch.undo()
    _stop_at(monkeypatch, "play_deals", 2)
    other = tmp_path / "other.npz"
    assert cli.main([*base, "--deals", "6", "--keep-deals", str(other)]) == 130
    err = capsys.readouterr().err
    assert f"interrupted (1 of the 6 deals are kept in {other}: the same command again" in err
    monkeypatch.undo()
    _stop_at(monkeypatch, "play_deals", 1)  # (before any part ended: said so, not "no deal")
    none = tmp_path / "none.npz"
    assert cli.main([*base, "--deals", "6", "--keep-deals", str(none)]) == 130
    err = capsys.readouterr().err
    assert (
        "interrupted (no part of the run had finished (its deals are kept as each part of 1 "
        f"deal ends): nothing is kept in {none})"
    ) in err, err


def test_a_workers_part_holds_few_enough_deals_that_a_stop_keeps_most_of_a_run() -> None:
    """A worker's part was an eighth of its share: 1,250 deals of 20,000 on two workers, none
    kept when a run was stopped after playing 900 of them."""
    assert max(b - a for a, b in _parts(20_000, 3, 2, 1)) == 200
    assert len(_parts(300, 2, 2, 1)) == 16  # (short runs: about 8 parts a worker, as before)


def test_evaluate_keeps_each_opponents_deals(tmp_path, monkeypatch, capsys) -> None:
    """``rummyzoo evaluate --keep-deals DIR``: a file per opponent; run again with more deals,
    the results are those of one evaluation of them all, and a stop says how to keep them."""
    import json

    from run_helpers import untrained_checkpoint

    net = untrained_checkpoint(tmp_path / "net.rz")
    kept = tmp_path / "kept"
    base = ["evaluate", str(net), "--opponents", "random", "knock.smart(samples=4)"]
    base += ["--workers", "1", "--batch", "4", "--seed", "9"]
    assert cli.main([*base, "--deals", "3", "--keep-deals", str(kept)]) == 0
    assert f"  random: every deal played now, kept in {kept / 'random.npz'}" in (
        capsys.readouterr().out
    )
    files = sorted(p.name for p in kept.iterdir())
    assert len(files) == 2 and "random.npz" in files, files
    capsys.readouterr()
    out = tmp_path / "more.json"
    assert cli.main([*base, "--deals", "5", "--keep-deals", str(kept), "--json", str(out)]) == 0
    # (in batches of 4 games one part holds 128 deals: the 3 kept are played again with 2 more)
    assert f"  random: every deal played now, kept in {kept / 'random.npz'}" in (
        capsys.readouterr().out
    )
    assert cli.main([*base, "--deals", "5", "--keep-deals", str(kept)]) == 0
    assert f"  random: all 5 deals were read from {kept / 'random.npz'}" in capsys.readouterr().out
    fresh = tmp_path / "fresh.json"
    assert cli.main([*base, "--deals", "5", "--json", str(fresh)]) == 0
    assert json.loads(out.read_text())["results"] == json.loads(fresh.read_text())["results"]
    capsys.readouterr()
    _stop_at(monkeypatch, "play_batched", 1)
    assert cli.main([*base, "--deals", "5"]) == 130
    assert "interrupted (--keep-deals DIR keeps the deals" in capsys.readouterr().err


def test_kept_deals_file_names() -> None:
    from rummyzoo.agents.arena.evaluate import kept_deals_file

    assert kept_deals_file("d", "knock.smart").name == "knock.smart.npz"
    odd = kept_deals_file("d", "knock.smart(samples=4)").name
    assert odd.startswith("knock.smart_samples_4-") and odd.endswith(".npz")
    assert odd != kept_deals_file("d", "knock.smart(samples=4 )").name
    assert "/" not in kept_deals_file("d", "../runs/a/best.rz").name


def test_evaluate_names_a_folder_of_another_evaluation(tmp_path, capsys) -> None:
    from run_helpers import untrained_checkpoint

    a = untrained_checkpoint(tmp_path / "a.rz", ("seed=1",))
    b = untrained_checkpoint(tmp_path / "b.rz", ("seed=2",))
    kept = tmp_path / "kept"
    base = ["--opponents", "random", "--workers", "1", "--deals", "2", "--keep-deals", str(kept)]
    assert cli.main(["evaluate", str(a), *base]) == 0
    before = (kept / "random.npz").read_bytes()
    capsys.readouterr()
    assert cli.main(["evaluate", str(b), *base]) == 2
    err = capsys.readouterr().err
    assert (
        f"--keep-deals {kept} holds the deals of another evaluation against random "
        "(random.npz: not this one's checkpoint): give another folder, or remove that file"
    ) in err, err
    assert (kept / "random.npz").read_bytes() == before
    # the opponent changed, the checkpoint not: the opponent is named
    opponent = untrained_checkpoint(tmp_path / "opp.rz", ("seed=3",))
    against = ["--opponents", str(opponent), "--workers", "1", "--deals", "2"]
    assert cli.main(["evaluate", str(a), *against, "--keep-deals", str(kept)]) == 0
    untrained_checkpoint(opponent, ("seed=4",))  # trained again
    capsys.readouterr()
    assert cli.main(["evaluate", str(a), *against, "--keep-deals", str(kept)]) == 2
    err = capsys.readouterr().err
    assert f"not this one's opponent {opponent})" in err, err


def test_two_runs_with_one_file_the_second_is_refused(tmp_path) -> None:
    """While an arena plays into a file, another run with that file is refused (the last to
    write would drop the other's deals), and a refused run leaves no folder it made."""
    from rummyzoo.envs.files import held_lock

    kept = tmp_path / "deals.npz"
    busy = r"is being played into by another arena run \(pid"
    with held_lock(tmp_path / "deals.npz.lock", "held"), pytest.raises(ValueError, match=busy):
        run_arena("knock_rummy", 2, AGENTS, deals=2, seed=1, keep_deals=kept)
    assert not kept.exists()
    run_arena("knock_rummy", 2, AGENTS, deals=2, seed=1, keep_deals=kept)  # free again
    assert kept.exists() and not (tmp_path / "deals.npz.lock").exists()
    # a run into a new folder, stopped before a deal was kept: no folder is left
    deep = tmp_path / "a" / "b" / "deals.npz"
    original = arena_module._Table.play_deals

    def stopped(self, *args, **kwargs):
        raise KeyboardInterrupt

    arena_module._Table.play_deals = stopped
    try:
        with pytest.raises(KeyboardInterrupt):
            run_arena("knock_rummy", 2, AGENTS, deals=2, seed=1, keep_deals=deep)
    finally:
        arena_module._Table.play_deals = original
    assert not (tmp_path / "a").exists()


def test_a_loaded_network_is_known_by_its_weights(tmp_path) -> None:
    """Policy objects of two networks loaded from files of one name are two agents (they were
    one: the file's deals of the first were read for the second)."""
    from run_helpers import untrained_checkpoint

    from rummyzoo.agents.checkpoints import load_policy

    a = load_policy(untrained_checkpoint(tmp_path / "a" / "net.rz", ("seed=1",)), "knock_rummy", 2)
    b = load_policy(untrained_checkpoint(tmp_path / "b" / "net.rz", ("seed=2",)), "knock_rummy", 2)
    kept = tmp_path / "deals.npz"
    run_arena("knock_rummy", 2, [a, "random"], deals=2, seed=1, keep_deals=kept)
    with pytest.raises(ValueError, match="not this run's agents"):
        run_arena("knock_rummy", 2, [b, "random"], deals=4, seed=1, keep_deals=kept)
    again = run_arena("knock_rummy", 2, [a, "random"], deals=2, seed=1, keep_deals=kept)
    assert again.notes[0].startswith("all 2 deals were read")


def test_a_link_to_the_file_is_held_as_the_file(tmp_path) -> None:
    from rummyzoo.envs.files import held_lock

    kept = tmp_path / "deals.npz"
    run_arena("knock_rummy", 2, AGENTS, deals=2, seed=1, keep_deals=kept)
    link = tmp_path / "link.npz"
    link.symlink_to(kept)
    busy = r"is being played into by another arena run \(pid"
    with held_lock(tmp_path / "deals.npz.lock", "held"), pytest.raises(ValueError, match=busy):
        run_arena("knock_rummy", 2, AGENTS, deals=4, seed=1, keep_deals=link)


def test_games_played_again_are_counted_once_and_gone_files_not_at_all(tmp_path) -> None:
    """A part played again replaces its deals' replays (they were listed twice); the replays
    of kept deals whose files are gone are not listed."""
    kept, saved = tmp_path / "deals.npz", tmp_path / "games"
    args = dict(seed=2, save_games=saved, save_limit=None, workers=2, keep_deals=kept)
    run_arena("knock_rummy", 2, AGENTS, deals=9, **args)
    more = run_arena("knock_rummy", 2, AGENTS, deals=20, **args)  # deal 8's part played again
    assert len(more.replays) == len(set(more.replays)) == 40 == len(list(saved.iterdir()))
    for path in saved.iterdir():
        path.unlink()
    assert run_arena("knock_rummy", 2, AGENTS, deals=20, **args).replays == []


def test_a_file_that_cannot_be_replaced_is_refused_before_any_play(tmp_path, monkeypatch):
    import os

    kept = tmp_path / "deals.npz"
    run_arena("knock_rummy", 2, AGENTS, deals=2, seed=1, keep_deals=kept)
    played = _stop_at(monkeypatch, "play_deals", 0)  # (counts only)

    def refused(src, dst):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(OSError, match=f"cannot replace {kept}: Operation not permitted"):
        run_arena("knock_rummy", 2, AGENTS, deals=6, seed=1, keep_deals=kept)
    assert not played


def test_bad_sizes_and_names_are_refused() -> None:
    with pytest.raises(ValueError, match="games, more than an arena run plays"):
        run_arena("knock_rummy", 2, AGENTS, deals=10**12)
    for bad in (5, ""):
        with pytest.raises(ValueError, match="keep_deals must be a file name"):
            run_arena("knock_rummy", 2, AGENTS, deals=2, keep_deals=bad)
    with pytest.raises(ValueError, match="save_games must be a folder name"):
        run_arena("knock_rummy", 2, AGENTS, deals=2, save_games="")


def test_a_complete_file_in_a_folder_one_may_not_write_in_is_read(tmp_path, monkeypatch):
    """Its lock cannot be made: a run whose deals are all in it reads them; one with deals
    to play is refused before any play."""
    from rummyzoo.envs import files

    kept = tmp_path / "deals.npz"
    whole = run_arena("knock_rummy", 2, AGENTS, deals=4, seed=1, keep_deals=kept)

    def refused(path, busy):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(files, "held_lock", refused)
    _same(run_arena("knock_rummy", 2, AGENTS, deals=4, seed=1, keep_deals=kept), whole)
    played = _stop_at(monkeypatch, "play_deals", 0)  # (counts only)
    with pytest.raises(OSError, match=f"cannot keep deals in {kept}: Permission denied"):
        run_arena("knock_rummy", 2, AGENTS, deals=6, seed=1, keep_deals=kept)
    assert not played


def test_a_lock_whose_holder_has_not_written_its_pid_yet_names_none() -> None:
    """A lock taken an instant before its holder wrote its pid was refused with "(pid ?)"."""
    import fcntl
    import tempfile
    from pathlib import Path

    from rummyzoo.envs.files import held_lock

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.lock"
        with path.open("a+") as holder:
            fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held, nothing written yet
            with pytest.raises(ValueError) as refused, held_lock(path, "busy"):
                pass
        assert str(refused.value) == "busy: let it finish or stop it first"


def test_evaluate_plays_a_checkpoint_rewritten_meanwhile_as_it_was(tmp_path, monkeypatch) -> None:
    """A live run's checkpoint rewritten while ``rummyzoo evaluate`` played it: each opponent
    loaded the file anew (every worker too), so one report mixed networks, and its header named
    the steps of the one read first. The file is read once now, and every opponent plays it."""
    import json

    from run_helpers import untrained_checkpoint

    from rummyzoo.agents.arena import evaluate as evaluate_module

    net = untrained_checkpoint(tmp_path / "net.rz")
    other = untrained_checkpoint(tmp_path / "other.rz", ("seed=5",))
    original = net.read_bytes()
    played = evaluate_module.evaluation_report

    def rewritten_after_the_first(*args, **kwargs):
        report = played(*args, **kwargs)
        net.write_bytes(other.read_bytes())  # the run saves another network there
        return report

    base = ["evaluate", str(net), "--opponents", "random", "knock.greedy"]
    base += ["--deals", "4", "--workers", "2", "--batch", "1", "--seed", "9"]
    monkeypatch.setattr(evaluate_module, "evaluation_report", rewritten_after_the_first)
    mixed = tmp_path / "mixed.json"
    assert cli.main([*base, "--json", str(mixed), "--keep-deals", str(tmp_path / "k")]) == 0
    monkeypatch.undo()
    assert net.read_bytes() != original
    net.write_bytes(original)
    alone = tmp_path / "alone.json"
    assert cli.main([*base, "--json", str(alone)]) == 0
    assert json.loads(mixed.read_text())["results"] == json.loads(alone.read_text())["results"]
    # the kept files' record of the agent: the bytes of the file as it was for both
    keys = []
    for path in sorted((tmp_path / "k").iterdir()):
        with np.load(path, allow_pickle=False) as data:
            keys.append(json.loads(str(data["key"]))["agents"][0])
    assert keys[0] == keys[1] == {"checkpoint_sha256": hashlib.sha256(original).hexdigest()}


def test_the_arena_names_a_checkpoint_as_given_and_plays_a_name_as_its_agent(
    tmp_path, monkeypatch
) -> None:
    """Played from a private copy, a checkpoint's warnings named the copy (gone once the run
    ended), and a heuristic's name that is also a file in the working folder was played as a
    checkpoint (the file), where the heuristic wins."""
    from pathlib import Path

    from run_helpers import untrained_checkpoint

    net = untrained_checkpoint(
        tmp_path / "my run" / "teams.rz",
        ("variant=ditch_rummy", "num_players=4", "env_options.teams=true"),
    )
    options = {"teams": False, "target_score": None}
    with pytest.warns(UserWarning, match="trained under other rules") as said:
        run_arena("ditch_rummy", 4, [str(net), "random"], deals=1, options=options)
    text = " ".join(str(w.message) for w in said)
    assert str(net) in text and "rummyzoo-pinned" not in text
    monkeypatch.chdir(tmp_path)
    Path("random").write_text("not a checkpoint\n")
    result = run_arena("knock_rummy", 2, ["random", "knock.greedy"], deals=1)
    assert result.labels == ["random", "knock.greedy"]
