"""A loopback mock of the Anthropic Messages API for driving the real Claude Code CLI offline.

Stdlib only. ``POST /v1/messages`` answers with SSE when ``stream`` is true (message_start,
one content block with its deltas, message_delta, message_stop) or with one JSON message.
The script:

- a request whose text contains ``conversation memory extractor`` (memkeeper's flush prompt,
  sent by ``claude -p`` as the summarizer) gets ``FLUSH_BULLETS``;
- a long turn: a conversation whose last typed prompt contains a trigger of ``state.long_turns``
  (``{trigger: n}``) gets a Bash tool_use (``echo step k``) until ``n`` tool results follow
  that prompt, then the final text ``FINAL_TEXT``;
- a conversation whose last user turn carries a tool_result gets the final text ``FINAL_TEXT``;
- a conversation whose last user text asks ``USE_TOOL`` gets a Bash tool_use (``echo``);
- a conversation whose last user text contains a trigger of ``state.bash_for`` (a list of
  ``(trigger, command)`` a test sets) gets a Bash tool_use running that command;
- anything else (compaction included) gets ``HELLO_TEXT``.

Every request body is kept in ``requests`` for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FLUSH_BULLETS = (
    "- [mock-session]: The user ran an echo command through Bash (MOCKFLUSH).\n"
    "- [mock-memory]: The flush bullets came from the mock model."
)
FINAL_TEXT = "Tool ran fine. The secret word is PAPAYA."
HELLO_TEXT = "Hello from the mock API."
TOOL_COMMAND = "echo hello-from-mock"


def _texts(value: Any) -> list[str]:
    """Every string under ``value`` (message content, system prompt blocks...)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for item in value for t in _texts(item)]
    if isinstance(value, dict):
        return [
            t
            for key, item in value.items()
            if key in ("text", "content", "system", "messages")
            for t in _texts(item)
        ]
    return []


def request_text(body: dict[str, Any]) -> str:
    return "\n".join(_texts({"system": body.get("system"), "messages": body.get("messages")}))


class MockState:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.counter = 0
        self.bash_for: list[tuple[str, str]] = []
        self.long_turns: dict[str, int] = {}
        self.flush_delay = 0.0  # seconds the flush answer takes (a real model takes some)

    def next_id(self) -> int:
        with self.lock:
            self.counter += 1
            return self.counter


def _is_tool_result(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _long_turn_step(messages: list[Any], state: MockState) -> dict[str, Any] | None:
    """The next Bash call of a scripted long turn, or None (no long turn, or its calls are done)."""
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    prompts = [i for i, m in enumerate(users) if not _is_tool_result(m)]
    if not prompts or not state.long_turns:
        return None
    prompt_text = "\n".join(_texts(users[prompts[-1]].get("content")))
    done = sum(1 for m in users[prompts[-1] + 1 :] if _is_tool_result(m))
    for trigger, calls in state.long_turns.items():
        if trigger in prompt_text and done < calls:
            return {
                "type": "tool_use",
                "id": f"toolu_mock_{state.next_id()}",
                "name": "Bash",
                "input": {"command": f"echo step {done + 1}", "description": f"Step {done + 1}"},
            }
    return None


def plan_reply(body: dict[str, Any], state: MockState) -> dict[str, Any]:
    """The content block to answer with: {"type": "text", ...} or {"type": "tool_use", ...}."""
    text = request_text(body)
    if "conversation memory extractor" in text:
        return {"type": "text", "text": FLUSH_BULLETS}
    messages = body.get("messages") or []
    step = _long_turn_step(messages, state)
    if step is not None:
        return step
    # The last user turn (newer CLIs append the environment as a trailing "system" message).
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    last = users[-1] if users else {}
    content = last.get("content") if isinstance(last, dict) else None
    if isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    ):
        return {"type": "text", "text": FINAL_TEXT}
    last_text = "\n".join(_texts(content))
    tools = body.get("tools") or []
    for trigger, command in list(state.bash_for):
        if trigger in last_text:
            return {
                "type": "tool_use",
                "id": f"toolu_mock_{state.next_id()}",
                "name": "Bash",
                "input": {"command": command, "description": "Run memkeeper"},
            }
    if "USE_TOOL" in last_text and any(isinstance(t, dict) and t.get("name") == "Bash" for t in tools):
        return {
            "type": "tool_use",
            "id": f"toolu_mock_{state.next_id()}",
            "name": "Bash",
            "input": {"command": TOOL_COMMAND, "description": "Say hello"},
        }
    return {"type": "text", "text": HELLO_TEXT}


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def make_handler(state: MockState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _json(self, obj: dict[str, Any], status: int = 200) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._json({"data": [], "has_more": False})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.end_headers()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            if "/count_tokens" in self.path:
                self._json({"input_tokens": max(1, len(raw) // 4)})
                return
            if not self.path.startswith("/v1/messages"):
                self._json({"ok": True})
                return
            with state.lock:
                state.requests.append(body)
            block = plan_reply(body, state)
            if state.flush_delay and "conversation memory extractor" in request_text(body):
                time.sleep(state.flush_delay)
            model = str(body.get("model") or "claude-haiku-4-5-20251001")
            message_id = f"msg_mock_{state.next_id()}"
            stop_reason = "tool_use" if block["type"] == "tool_use" else "end_turn"
            usage = {
                "input_tokens": 50,
                "output_tokens": 20,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            }
            if not body.get("stream"):
                self._json(
                    {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [block],
                        "stop_reason": stop_reason,
                        "stop_sequence": None,
                        "usage": usage,
                    }
                )
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            start: dict[str, Any] = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": dict(usage, output_tokens=1),
            }
            out = [_sse("message_start", {"type": "message_start", "message": start})]
            if block["type"] == "text":
                out.append(
                    _sse(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": 0,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                )
                out.append(
                    _sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": 0,
                            "delta": {"type": "text_delta", "text": block["text"]},
                        },
                    )
                )
            else:
                shell = dict(block, input={})
                out.append(
                    _sse(
                        "content_block_start",
                        {"type": "content_block_start", "index": 0, "content_block": shell},
                    )
                )
                out.append(
                    _sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": 0,
                            "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                        },
                    )
                )
            out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
            out.append(
                _sse(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                        "usage": {"output_tokens": 20},
                    },
                )
            )
            out.append(_sse("message_stop", {"type": "message_stop"}))
            self.wfile.write(b"".join(out))
            self.wfile.flush()

    return Handler


class MockAnthropic:
    """``with MockAnthropic() as mock: ... mock.url ...``; the server thread stops on exit."""

    def __init__(self) -> None:
        self.state = MockState()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self.state))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self.state.lock:
            return list(self.state.requests)

    def __enter__(self) -> MockAnthropic:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
