"""Qwen3's chat format with tools, as a Jinja chat template, and the token glue between turns.

The template is written for this project (not copied from Qwen's) and renders the same wire
format: ``<|im_start|>role\\n...<|im_end|>`` blocks, the tool schemas in a ``<tools>`` block of
the system message, assistant calls as ``<tool_call>`` JSON, consecutive tool results grouped in
one user turn as ``<tool_response>`` blocks, and an optional ``<think>`` block. Assistant bodies
sit in ``{% generation %}`` markers so ``return_assistant_tokens_mask`` yields the SFT loss mask.
"""

from __future__ import annotations

from typing import Any

from transformers import PreTrainedTokenizerBase

TOOLS_PREAMBLE = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_POSTAMBLE = (
    "</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)

COMPACT_TOOLS_PREAMBLE = (
    "# Tools\n\nCall a tool with <tool_call>{\"name\": <tool-name>, \"arguments\": <args-json-object>}</tool_call>. "
    "Tools (a ? marks an optional argument):"
)

# One line per tool: name(arg: type, opt?: type, mode: "heat"|"cool") - description.
_COMPACT_TOOL = (
    "{% set f = t.function if t.function is defined else t %}"
    "{% set req = f.parameters.required or [] %}"
    "{{ NL }}{{ f.name }}("
    "{% for k, v in (f.parameters.properties or {}).items() %}{% if not loop.first %}, {% endif %}"
    "{{ k }}{% if k not in req %}?{% endif %}: "
    "{% if v.enum is defined %}{{ v.enum | map('tojson') | join('|') }}{% else %}{{ v.type | default('any') }}{% endif %}"
    "{% endfor %}){% if f.description %} - {{ f.description }}{% endif %}"
)


def _tool_template(tools_block: str) -> str:
    """The Qwen3-format chat template with ``tools_block`` rendering the system message's tool list."""
    return (
        # transformers renders with trim_blocks: a newline right after a block tag is dropped, so
        # newlines that follow a tag are written as {{ NL }}.
        "{% set NL = '\\n' %}"
        "{% set msgs = messages %}"
        "{% set sys = msgs[0].content if msgs and msgs[0].role == 'system' else '' %}"
        "{% if msgs and msgs[0].role == 'system' %}{% set msgs = msgs[1:] %}{% endif %}"
        "{% if tools %}"
        "<|im_start|>system\n{% if sys %}{{ sys }}\n\n{% endif %}" + tools_block + "<|im_end|>{{ NL }}"
        "{% elif sys %}<|im_start|>system\n{{ sys }}<|im_end|>{{ NL }}"
        "{% endif %}"
        "{% for m in msgs %}"
        "{% if m.role == 'tool' %}"
        "{% if loop.first or msgs[loop.index0 - 1].role != 'tool' %}<|im_start|>user{% endif %}"
        "{{ NL }}<tool_response>\n{{ m.content }}\n</tool_response>"
        "{% if loop.last or msgs[loop.index0 + 1].role != 'tool' %}<|im_end|>{{ NL }}{% endif %}"
        "{% elif m.role == 'assistant' %}"
        "<|im_start|>assistant\n{% generation %}"
        "{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}"
        "{{ m.content or '' }}"
        "{% for c in m.tool_calls or [] %}"
        "{% set f = c.function if c.function is defined else c %}"
        "{% if not loop.first or m.content %}{{ NL }}{% endif %}"
        '<tool_call>\n{"name": {{ f.name | tojson }}, "arguments": '
        "{% if f.arguments is string %}{{ f.arguments }}{% else %}{{ f.arguments | tojson }}{% endif %}}\n</tool_call>"
        "{% endfor %}"
        "<|im_end|>{% endgeneration %}{{ NL }}"
        "{% else %}"
        "<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{{ NL }}"
        "{% endif %}"
        "{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n"
        "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{% endif %}"
        "{% endif %}"
    )


QWEN3_TOOL_TEMPLATE = _tool_template(TOOLS_PREAMBLE + "{% for t in tools %}{{ NL }}{{ t | tojson }}{% endfor %}{{ NL }}" + TOOLS_POSTAMBLE)
"""Jinja source of the chat template (set as ``tokenizer.chat_template`` of the micro model)."""

COMPACT_TOOL_TEMPLATE = _tool_template(COMPACT_TOOLS_PREAMBLE + "{% for t in tools %}" + _COMPACT_TOOL + "{% endfor %}")
"""The same wire format with a short tool list (one signature line per tool instead of the JSON
schemas): about a third of the prompt tokens on ToolWorld, for small models on a CPU
(``docs/training.md`` measures it). Calls, results and turns render exactly as in
:data:`QWEN3_TOOL_TEMPLATE`, so only the system message differs."""


def continuation_ids(tokenizer: PreTrainedTokenizerBase, messages: list[dict[str, Any]], **template_kwargs: Any) -> list[int]:
    """Tokens that follow an assistant's ``<|im_end|>`` for ``messages``, up to the next generation prompt.

    ``messages`` are the tool results and/or user message the environment answered with. They are
    rendered after a placeholder exchange and cut right after the placeholder assistant's
    ``<|im_end|>``, so the glue is exactly what the model's chat template puts there (Qwen3's own
    template included, whatever it does with ``<think>`` blocks of earlier turns).
    """
    placeholder = [{"role": "user", "content": "."}, {"role": "assistant", "content": "."}]
    text = tokenizer.apply_chat_template(placeholder + messages, tokenize=False, add_generation_prompt=True, **template_kwargs)
    start = text.find("<|im_start|>assistant")
    end = text.find("<|im_end|>", start)
    if start < 0 or end < 0:
        raise ValueError("the chat template does not use Qwen3's <|im_start|>assistant ... <|im_end|> blocks")
    return tokenizer(text[end + len("<|im_end|>") :], add_special_tokens=False)["input_ids"]
