"""The text of an MCP tool answer, as the tests read it (memkeeper's tools answer in one text block)."""

from __future__ import annotations

from mcp.types import CallToolResult, TextContent


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text
