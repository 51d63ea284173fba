"""OldTimer — written against the first MemoryProvider interface.

Legacy shapes kept on purpose: ``name`` as a plain class attribute,
``sync_turn(user_content, assistant_content)`` with no keyword arguments,
``on_memory_write(action, target, content)`` without metadata,
``on_turn_start(turn_number, message)`` without kwargs, and a tool schema in
the wrapped OpenAI form.
"""

import json
import os

try:
    from agent.memory_provider import MemoryProvider
except ImportError:  # pragma: no cover - outside Hermes
    MemoryProvider = object


class OldTimerProvider(MemoryProvider):
    name = "oldtimer"

    def __init__(self):
        self.home = None
        self.turns = []
        self.writes = []
        self.turn_starts = []
        self.shut = False

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.home = kwargs.get("hermes_home") or os.environ.get("HERMES_HOME")

    def system_prompt_block(self):
        return "# OldTimer memory\nRemembers what you said."

    def on_turn_start(self, turn_number, message):
        self.turn_starts.append(turn_number)

    def prefetch(self, query, *, session_id=""):
        words = {w.strip("?.,!").lower() for w in query.split() if len(w) > 3}
        found = [t for t in self.turns + self.writes if words & {w.strip("?.,!").lower() for w in t.split()}]
        return "\n".join("- " + t for t in found)

    def sync_turn(self, user_content, assistant_content):
        self.turns.append(user_content)

    def on_memory_write(self, action, target, content):
        if action == "add":
            self.writes.append(content)

    def get_tool_schemas(self):
        return [{
            "type": "function",
            "function": {
                "name": "oldtimer_recall",
                "description": "Recall what the user said before.",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
            },
        }]

    def handle_tool_call(self, tool_name, args, **kwargs):
        if tool_name != "oldtimer_recall":
            raise ValueError("Unknown tool: " + tool_name)
        return json.dumps({"results": self.prefetch(args.get("query", "")).splitlines()})

    def on_session_end(self, messages):
        self.turns.append("(session ended after %d messages)" % len(messages))

    def shutdown(self):
        self.shut = True


def register(ctx):
    ctx.register_memory_provider(OldTimerProvider())
