"""The fixed store and the UI states that tests, snapshots and ``screenshots/`` share.

``build_store`` makes a deterministic store (the demo generator with a fixed seed and
fixed dates, plus a few lines holding Rich markup and escape codes that must be shown
literally). Each scene drives a running app with a Pilot into one screen or state.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from textual.pilot import Pilot
from textual.screen import Screen

from memkeeper.core.demo import create_demo_store
from memkeeper.core.store.atomic import append_text, atomic_write_json
from memkeeper.core.store.paths import StorePaths
from memkeeper.tui.app import MemkeeperApp
from memkeeper.tui.model import StoreSnapshot

PROJECT_NAME = "ledgerline"
HOSTILE_LINES = (
    "\n## 2026-11-21_1200 (local 11-21_2100)\n"
    "- [literal]: [bold red]not markup[/bold red] and \x1b[31mnot red\x1b[0m stay as written\n"
)


def build_store(base: Path) -> StorePaths:
    """A deterministic store in ``base/ledgerline`` (nothing depends on the clock)."""
    project = base / PROJECT_NAME
    project.mkdir(parents=True, exist_ok=True)
    paths = create_demo_store(project, seed=0)
    append_text(paths.memory, HOSTILE_LINES)
    # The status line names the summarizer: the same one on every machine (with or without claude).
    atomic_write_json(paths.config, {"summarizer": {"backend": "extractive"}})
    return paths


async def settle(pilot: Pilot[None]) -> None:
    """Wait until workers are done and the screen has caught up (at least three rounds, more
    while workers keep starting, as a screen's reading in parts does, or while the screen says
    it is not yet idle: search results shown in two frames)."""
    for round_ in range(200):
        await pilot.pause()
        # The file watcher runs for the app's lifetime: wait for every other worker.
        others = [w for w in pilot.app.workers if w.group != "fs-watch"]
        if others:  # (an empty list would mean "all workers")
            await pilot.app.workers.wait_for_complete(others)
        elif round_ >= 2 and getattr(pilot.app.screen, "idle", True):
            break
    await pilot.pause()


@asynccontextmanager
async def running(
    store: StorePaths, size: tuple[int, int] = (80, 24)
) -> AsyncIterator[tuple[MemkeeperApp, Pilot[None]]]:
    """The app on ``store`` (no file watcher) under a Pilot, settled after its start."""
    app = MemkeeperApp(store, watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        yield app, pilot


def snapshot_of(app: MemkeeperApp) -> StoreSnapshot:
    """The snapshot the app has loaded (it has, once settled)."""
    assert app.snapshot is not None
    return app.snapshot


async def press_settled(pilot: Pilot[None], *keys: str) -> None:
    """One user step: settle, press ``keys``, settle."""
    await settle(pilot)
    await pilot.press(*keys)
    await settle(pilot)


S = TypeVar("S", bound=Screen[Any])


async def open_screen(pilot: Pilot[None], key: str, kind: type[S]) -> S:
    """Press ``key`` (settled) and return the screen it opens, checked to be a ``kind``."""
    await press_settled(pilot, key)
    screen = pilot.app.screen
    assert isinstance(screen, kind), screen
    return screen


Scene = Callable[[Pilot[None]], Awaitable[None]]


def _then(first: Scene, *keys: str) -> Scene:
    """The scene one step after ``first``: ``keys`` pressed, then settled."""

    async def scene(pilot: Pilot[None]) -> None:
        await first(pilot)
        await pilot.press(*keys)
        await settle(pilot)

    return scene


def _keys(*keys: str) -> Scene:
    """The scene one step away: ``keys`` pressed (settled) in the browse screen."""
    return _then(settle, *keys)


async def _browse(pilot: Pilot[None]) -> None:
    await settle(pilot)


async def _summary(pilot: Pilot[None]) -> None:
    from memkeeper.tui.model import Target
    from memkeeper.tui.screens.browse import BrowseScreen

    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, BrowseScreen)
    snapshot = pilot.app.snapshot  # type: ignore[attr-defined]
    screen.query_one("TierTree").select_target(Target("summary", snapshot.archives[0].name))  # type: ignore[attr-defined]
    await settle(pilot)


async def _failed_summary(pilot: Pilot[None]) -> None:
    from memkeeper.tui.model import Target

    await settle(pilot)
    snapshot = pilot.app.snapshot  # type: ignore[attr-defined]
    failed = next(a for a in snapshot.archives if a.summary_state == "failed")
    pilot.app.screen.query_one("TierTree").select_target(Target("summary", failed.name))  # type: ignore[attr-defined]
    await settle(pilot)


async def _session(pilot: Pilot[None]) -> None:
    from memkeeper.tui.model import Target

    await settle(pilot)
    snapshot = pilot.app.snapshot  # type: ignore[attr-defined]
    with_agent = snapshot.sessions[-1].name
    for info in snapshot.sessions:
        text = (pilot.app.paths.sessions / info.name).read_text("utf-8")  # type: ignore[attr-defined]
        if '"sidechain"' in text:
            with_agent = info.name
            break
    pilot.app.screen.query_one("TierTree").select_target(Target("l1", with_agent))  # type: ignore[attr-defined]
    await settle(pilot)
    doc = pilot.app.screen.query_one("DocView")
    doc.focus()
    await pilot.press("down", "down", "enter")
    await settle(pilot)


async def _answer(pilot: Pilot[None]) -> None:
    """The session with a subagent, its Markdown answer (nested under the Task call) at the top."""
    await _session(pilot)
    doc = pilot.app.screen.query_one("DocView")
    answer = next(i for i, item in enumerate(doc.items) if item.kind == "assistant" and "**" in item.text)  # type: ignore[attr-defined]
    doc.move_to(answer - 3, top=True)  # type: ignore[attr-defined]
    doc.move_to(answer)  # type: ignore[attr-defined]
    await settle(pilot)


async def _search(pilot: Pilot[None]) -> None:
    await press_settled(pilot, "slash")
    pilot.app.screen.query_one("Input").value = "webhook"  # type: ignore[attr-defined]
    await settle(pilot)


async def _forget(pilot: Pilot[None]) -> None:
    from memkeeper.tui.model import Target

    await settle(pilot)
    snapshot = pilot.app.snapshot  # type: ignore[attr-defined]
    pilot.app.screen.query_one("TierTree").select_target(Target("archive", snapshot.archives[0].name))  # type: ignore[attr-defined]
    await press_settled(pilot, "d")


async def _trash(pilot: Pilot[None]) -> None:
    await _forget(pilot)
    await pilot.press("y")
    await press_settled(pilot, "t")


async def _palette(pilot: Pilot[None]) -> None:
    await press_settled(pilot, "ctrl+p")
    await pilot.press(*"regen")
    await settle(pilot)


async def _light(pilot: Pilot[None]) -> None:
    pilot.app.theme = "textual-light"
    await _session(pilot)


async def _literal(pilot: Pilot[None]) -> None:
    await settle(pilot)
    doc = pilot.app.screen.query_one("DocView")
    doc.focus()
    await pilot.press("end")
    await settle(pilot)


async def _activity(pilot: Pilot[None]) -> None:
    await press_settled(pilot, "A")
    await pilot.wait_for_scheduled_animations()
    await settle(pilot)  # the plots draw once more after their data arrives


async def _search_progress(pilot: Pilot[None]) -> None:
    """The index-update progress bar of a first deep search, held at a fixed point."""
    from memkeeper.tui.screens.search import SearchScreen

    screen = await open_screen(pilot, "slash", SearchScreen)
    screen.post_message(
        SearchScreen.IndexProgress(412_000_000, 1_030_000_000, "sessions/2026-11-20_0403_x.l1.jsonl", 1)
    )
    await settle(pilot)


#: name → (what it shows, how to get there). Every screen and main state.
SCENES: dict[str, tuple[str, Scene]] = {
    "browse": ("Browse: tier tree, memory.md with its token gauge, status line", _browse),
    "summary": ("An L3 summary: overall, themes, decisions, issues", _summary),
    "summary_failed": ("A failed summary with its error", _failed_summary),
    "session": ("An L1 session: roles, folded tool calls, subagent work", _session),
    "markdown": ("Answers rendered as Markdown; subagent work under its Task call", _answer),
    "markdown_raw": ("The same answer raw, as written (M)", _then(_answer, "M")),
    "literal": ("Markup and escape codes in memory shown literally", _literal),
    "search": ("Search as you type, grouped by tier", _search),
    "search_opened": (
        "A hit opened over the results, on its entry, the matched terms highlighted",
        _then(_search, "enter"),
    ),
    "search_progress": ("The first deep search updates the index with a progress bar", _search_progress),
    "sessions": ("Sessions: title, local start, length, tools; filter as you type", _keys("S")),
    "activity": ("Activity per day, memory growth, every decision and open issue", _activity),
    # down: the failed one, whose whole error shows under the table
    "pending": ("Pending and failed summaries", _then(_keys("p"), "down")),
    "settings": ("Settings: each value, its source, what it costs; changed in place (,)", _keys("comma")),
    "migrate": ("Migrate: preview (here: nothing to do)", _keys("m")),
    "rotate": ("Rotate now: confirmation", _keys("r")),
    "forget": ("Forget an archive: confirmation", _forget),
    "trash": ("Trash with the forgotten archive", _trash),
    "sections": ("Jump to a section", _keys("s")),
    "projects": ("Projects with a store", _keys("o")),
    "help": ("F1: every key", _keys("f1")),
    "light_theme": ("Themes apply (textual-light here)", _light),
    "palette": ("Command palette", _palette),
}


#: The new screens, snapshotted at both sizes in both themes.
NEW_SCREENS = ("search_opened", "sessions", "activity", "markdown", "markdown_raw")
