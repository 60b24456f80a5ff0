"""Helpers for tests that read a training run's folder."""

from __future__ import annotations

from pathlib import Path


def tb_steps(run: Path) -> dict[str, list[int]]:
    """Every scalar's logged steps, per run folder and tag (``run_1/eval/score``: [...])."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps: dict[str, list[int]] = {}
    for folder in sorted(p for p in (run / "tb").iterdir() if p.is_dir()):
        acc = EventAccumulator(str(folder), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            steps[f"{folder.name}/{tag}"] = [e.step for e in acc.Scalars(tag)]
    return steps
