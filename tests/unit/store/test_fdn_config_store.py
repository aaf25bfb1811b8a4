"""Config precedence, validation and warnings; project resolution; store paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memkeeper.core.config.model import ConfigError, load_config, load_config_or_default
from memkeeper.core.config.reader import hook_settings
from memkeeper.core.store import layout
from memkeeper.core.store.paths import StorePaths, ensure_store, is_safe_basename, paths_for, resolve_project


def _global_config(home: Path, data: object) -> Path:
    path = home / ".claude" / "memory-keeper" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


# --- config ------------------------------------------------------------------------------------


def test_defaults_without_files(store: StorePaths) -> None:
    cfg = load_config(store).config
    assert cfg.saveInterval == 25
    assert cfg.threshold_tokens == 23_750 and cfg.carryover_tokens == 2_375
    assert cfg.memory.enabled and cfg.memory.flushEvery == 10 and cfg.memory.retentionDays == 30
    assert hook_settings(store).threshold_tokens == 23_750


def test_project_over_global_over_defaults(store: StorePaths, home: Path) -> None:
    _global_config(home, {"saveInterval": 40, "memory": {"flushEvery": 7, "retentionDays": 90}})
    store.config.write_text(json.dumps({"memory": {"flushEvery": 3}}))
    loaded = load_config(store)
    assert loaded.config.saveInterval == 40  # global
    assert loaded.config.memory.flushEvery == 3  # project wins
    assert loaded.config.memory.retentionDays == 90  # global, merged section by key
    settings = hook_settings(store)
    assert settings.flush_every == 3 and settings.save_interval == 40


def test_threshold_is_floor_of_095(store: StorePaths) -> None:
    store.config.write_text(
        json.dumps({"memoryRotation": {"thresholdTokens": 10001, "carryoverTokens": 1001}})
    )
    cfg = load_config(store).config
    assert cfg.threshold_tokens == 9500  # floor(9500.95)
    assert cfg.carryover_tokens == 950  # floor(950.95)
    settings = hook_settings(store)
    assert (settings.threshold_tokens, settings.carryover_tokens) == (9500, 950)


def test_bad_value_is_one_line_naming_file_and_key(store: StorePaths) -> None:
    store.config.write_text(json.dumps({"memoryRotation": {"thresholdTokens": -5}}))
    with pytest.raises(ConfigError) as err:
        load_config(store)
    message = str(err.value)
    assert "\n" not in message
    assert str(store.config) in message and "memoryRotation.thresholdTokens" in message
    # The hook path never fails on it: it uses the default.
    assert hook_settings(store).threshold_tokens == 23_750
    cfg, warnings = load_config_or_default(store)
    assert cfg.threshold_tokens == 23_750 and warnings == [message]


def test_bad_global_value_names_the_global_file(store: StorePaths, home: Path) -> None:
    path = _global_config(home, {"saveInterval": "often"})
    with pytest.raises(ConfigError, match="saveInterval") as err:
        load_config(store)
    assert str(path) in str(err.value)


def test_invalid_json_is_an_error_naming_the_file(store: StorePaths) -> None:
    store.config.write_text("{ this is not json")
    with pytest.raises(ConfigError, match="not valid JSON") as err:
        load_config(store)
    assert str(store.config) in str(err.value)
    assert hook_settings(store).save_interval == 25


def test_unknown_key_is_a_warning(store: StorePaths) -> None:
    store.config.write_text(json.dumps({"keepRaw": False, "memory": {"flushEvry": 5}}))
    loaded = load_config(store)
    assert not any("'keepRaw'" in w for w in loaded.warnings)  # the JS plugin's own key
    assert any("'memory.flushEvry'" in w for w in loaded.warnings)
    assert loaded.config.memory.flushEvery == 10


# --- project resolution ------------------------------------------------------------------------


def test_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """explicit > a hook's cwd > CLAUDE_PROJECT_DIR > the current directory."""
    explicit, env_dir, hook_dir, cwd = (tmp_path / n for n in ("explicit", "env", "hook", "cwd"))
    for d in (explicit, env_dir, hook_dir, cwd):
        d.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(env_dir))
    assert resolve_project(str(explicit), str(hook_dir)) == explicit
    # the hook's cwd follows cd and worktrees; CLAUDE_PROJECT_DIR stays where the session started
    assert resolve_project(None, str(hook_dir)) == hook_dir
    assert resolve_project() == env_dir
    assert resolve_project(None, "relative/path") == env_dir  # a cwd that is not absolute is no answer
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    assert resolve_project(None, str(hook_dir)) == hook_dir
    assert resolve_project() == cwd
    assert paths_for().root == cwd / ".claude" / "memory"


def test_a_cd_inside_the_project_keeps_its_store(tmp_path: Path) -> None:
    started = tmp_path / "repo"
    (started / "src").mkdir(parents=True)
    env = {"CLAUDE_PROJECT_DIR": str(started)}
    assert layout.project_dir(None, str(started), env) == str(started)
    # `cd src` inside the session keeps the project's store ...
    assert layout.project_dir(None, str(started / "src"), env) == str(started)
    # ... unless that folder has a store of its own; a worktree elsewhere gets its own.
    (started / "src" / ".claude" / "memory").mkdir(parents=True)
    assert layout.project_dir(None, str(started / "src"), env) == str(started / "src")
    assert layout.project_dir(None, str(tmp_path / "worktree"), env) == str(tmp_path / "worktree")
    assert layout.project_dir(None, None, env) == str(started)
    assert layout.project_dir(None, "relative/path", {}) == str(Path.cwd())


def test_never_walks_up_to_a_parent_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".claude" / "memory").mkdir(parents=True)
    sub = home / "code" / "app"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert paths_for().project == sub
    assert paths_for().root != home / ".claude" / "memory"


def test_archive_names_outside_the_folder_are_refused(store: StorePaths) -> None:
    for bad in ("../evil.md", "a/b.md", "", ".", "..", "/etc/passwd", "x\\y.md", "nul\x00.md"):
        assert not is_safe_basename(bad)
        with pytest.raises(ValueError, match="outside the memory folder"):
            store.archive(bad)
    assert store.archive("memory_20260101_000000.md").parent == store.root
    with pytest.raises(ValueError, match="allowed"):
        store.named("secrets")


def test_ensure_store_is_private(project: Path) -> None:
    paths = StorePaths(project)
    ensure_store(paths)
    for folder in (paths.root, paths.sessions, paths.logs, paths.state):
        assert folder.is_dir()
        assert oct(os.stat(folder).st_mode & 0o777) == "0o700"


# --- the hook path's JSON codec ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2.5, -3e4, true, false, null, "x\\u00e9\\ud83d\\ude00"], "b": {"c": "한국어"}}',
        " 1 ",
        '"s"',
        "[]",
        "{}",
        "-Infinity",
        '{"toolUses": 3, "sessions": {"s": {"toolUses": 1}}}',
    ],
)
def test_fastjson_matches_json(text: str) -> None:
    from memkeeper.core.basics import fastjson

    assert repr(fastjson.loads(text)) == repr(json.loads(text))
    assert fastjson.loads(text.encode()) == fastjson.loads(text) or text.strip() == "NaN"
    value = json.loads(text)
    assert fastjson.dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("text", ["", "{", '{"a":1} x', "[1,]", "{'a':1}", "\x00", "nul"])
def test_fastjson_rejects_what_json_rejects(text: str) -> None:
    from memkeeper.core.basics import fastjson

    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        fastjson.loads(text)


def test_fastjson_refuses_unserializable() -> None:
    from memkeeper.core.basics import fastjson

    with pytest.raises(TypeError):
        fastjson.dumps({"a": object()})


def test_layout_and_store_paths_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memkeeper.core.store import layout

    monkeypatch.chdir(tmp_path)
    for explicit in (None, "rel/dir", str(tmp_path / "abs"), "~/x"):
        paths = paths_for(explicit)
        root = layout.store_root(layout.project_dir(explicit))
        assert Path(root) == paths.root
        assert Path(root, layout.STATE_DIR, layout.COUNTERS_FILE) == paths.counters
        assert Path(root, layout.CONFIG_FILE) == paths.config


def test_counters_survive_garbage(store: StorePaths) -> None:
    from memkeeper.core.log import counters

    store.counters.write_text('{"toolUses": "lots", "sessions": {"s": {"toolUses": null}}}')
    assert counters.bump(store, "s", tool_uses=1).session_tool_uses == 1
    store.counters.write_bytes(b"\xff\xfe not json")
    assert counters.bump(store, "s", tool_uses=1).tool_uses == 1
