"""The ``command`` backend: any user program that reads the prompt on stdin and prints the answer.

Configured as an argv list in ``summarizer.command`` (a local model runner, a script).
It runs without a shell, in its own process group, killed at the timeout. Exit code
non-zero or empty output is a :class:`BackendError` naming the command.
"""

from __future__ import annotations

import os

from ._process import last_line, run_with_timeout
from .backend import DEFAULT_MAX_OUTPUT_TOKENS, BackendError, BackendUnavailable, Completion


class CommandBackend:
    name = "command"  # for logs, health and ``generator`` (the Backend protocol)

    def __init__(self, argv: list[str]) -> None:
        if not argv or not all(isinstance(part, str) for part in argv):
            raise BackendUnavailable("summarizer.command must be a non-empty list of strings")
        self.argv = argv

    @property
    def label(self) -> str:
        return os.path.basename(self.argv[0])

    def complete(
        self, prompt: str, timeout: float, max_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    ) -> Completion:
        del max_tokens  # the user's command bounds its own answer
        proc = run_with_timeout(self.argv, prompt, timeout)
        if proc.returncode != 0:
            detail = last_line(proc.stderr) or last_line(proc.stdout) or "no output"
            raise BackendError(f"{self.label} exited with status {proc.returncode}: {detail}")
        if not proc.stdout.strip():
            raise BackendError(f"{self.label} printed nothing")
        return Completion(proc.stdout, self.label)
