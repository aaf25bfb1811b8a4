"""The known gaps of the simulated foreign run, named (``scripts/foreign-tests.sh`` loads this
pytest plugin with ``-p foreign_gaps``): each test listed is marked as an expected failure there,
with its reason, and counted apart. Delete an entry once its gap is closed."""

from __future__ import annotations

import pytest

#: The resident lookup (core/recall/lookup.py, core/recall/ask.py) listens on an AF_UNIX socket, which
#: the simulation takes away; these tests need a running resident lookup (or make such a socket).
RESIDENT_LOOKUP = frozenset(
    {
        "test_a_count_the_server_makes_due_starts_the_flush",
        "test_a_hung_server_leaves_the_hook_counting_and_silent",
        "test_a_long_pasted_prompt_is_answered_by_the_resident_server",
        "test_a_prompt_whose_reply_is_lost_is_counted_exactly_once",
        "test_a_question_asked_too_long_ago_is_not_counted_by_the_server",
        "test_a_resident_server_answers_the_hook",
        "test_a_server_counts_but_injects_nothing_while_the_config_turns_recall_off",
        "test_a_server_that_does_not_answer_never_blocks_the_prompt",
        "test_a_stale_socket_is_removed_and_the_hook_looks_up_itself",
        "test_a_terminated_server_removes_its_recall_socket",
        "test_the_hook_puts_the_question_before_it_finishes_interrupted_work_or_counts",
        "test_the_prompt_hook_asks_the_resident_lookup_before_it_counts",
        "test_the_real_hook_starts_a_detached_recall_job_that_answers",
        "test_the_recall_job_serves_prompts_and_stops_when_idle",
        "test_the_resident_server_counts_the_prompt_and_the_hook_does_not",
        "test_the_resident_server_follows_a_rebuilt_index",
        "test_the_warm_up_loads_what_the_first_answer_needs",
        "test_while_it_runs_the_server_answers_the_hooks_recall",
    }
)
RESIDENT_REASON = (
    "the resident lookup listens on AF_UNIX until the recall channel moves to "
    "multiprocessing.connection (a named pipe on Windows)"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = getattr(item, "originalname", item.name)
        if name in RESIDENT_LOOKUP:
            item.add_marker(pytest.mark.xfail(reason=RESIDENT_REASON, strict=False))
