"""A tokenizer trained here and a random-initialized causal LM: a trainer's inputs with no hub.

``build_tokenizer(texts)`` trains a byte-level BPE on ``texts`` and wraps it for transformers
with what TRL's tool-calling loop needs from a tokenizer:

- special tokens for the chat turns (``<|im_start|>``, ``<|im_end|>`` = EOS, ``<|endoftext|>`` =
  pad) and for tool calls and results (``<tool_call>``, ``</tool_call>``, ``<tool_response>``,
  ``</tool_response>``), so a delimiter is always one token and never merges with its neighbours;
- a chat template that renders tools, assistant tool calls and tool results (TRL's
  ``supports_tool_calling``) and is prefix-preserving: each message renders on its own, with no
  separator after ``<|im_end|>``, so rendering ``messages[:k]`` is a token prefix of rendering
  ``messages`` (TRL's ``is_chat_template_prefix_preserving``; a template that fails it is swapped for
  a known training template, and an unknown one is refused);
- a ``response_template`` (transformers >= 5.13's response parser) with which ``parse_response``
  turns generated ids back into ``{"role": "assistant", "content", "tool_calls"}``. TRL only knows
  the templates of published model families (``add_response_schema``); ours is set here.

``build_model(tokenizer)`` builds a small Llama from a config (two layers unless asked for more),
weights seeded.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

PAD = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
TOOL_CALL, TOOL_CALL_END = "<tool_call>", "</tool_call>"
TOOL_RESPONSE, TOOL_RESPONSE_END = "<tool_response>", "</tool_response>"
SPECIAL_TOKENS = [PAD, IM_START, IM_END, TOOL_CALL, TOOL_CALL_END, TOOL_RESPONSE, TOOL_RESPONSE_END]

# Every message renders the same whatever follows it (no trailing separator, no look-ahead), which
# is what makes the template prefix-preserving. transformers renders with trim_blocks (a newline
# right after a tag is dropped), so no text newline follows a tag here.
CHAT_TEMPLATE = (
    "{% if tools %}"
    "<|im_start|>system\n"
    "Answer the question. To call a tool, write "
    '<tool_call>{"name": <tool name>, "arguments": <arguments as JSON>}</tool_call>. Tools:'
    "{% for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{% endfor %}"
    "<|im_end|>"
    "{% endif %}"
    "{% for message in messages %}"
    "{% if message.role == 'assistant' %}"
    "<|im_start|>assistant\n"
    "{% if message.content %}{{ message.content }}{% endif %}"
    "{% for call in message.tool_calls or [] %}"
    "{% set fn = call.function if call.function is defined else call %}"
    '<tool_call>{"name": {{ fn.name | tojson }}, "arguments": '
    "{% if fn.arguments is string %}{{ fn.arguments }}{% else %}{{ fn.arguments | tojson }}{% endif %}"
    "}</tool_call>"
    "{% endfor %}"
    "<|im_end|>"
    "{% elif message.role == 'tool' %}"
    "<|im_start|>tool\n<tool_response>{{ message.content }}</tool_response><|im_end|>"
    "{% else %}"
    "<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# transformers' response parser (new style, >= 5.13): after the last "<|im_start|>assistant\n" of
# the prompt, each <tool_call>...</tool_call> holds one JSON call; the rest, up to <|im_end|>, is
# the content.
RESPONSE_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": IM_START + "assistant\n",
    "fields": {
        "tool_calls": {
            "open": TOOL_CALL,
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"<\|im_end\|>\s*", "content": "text"},
    },
}


def build_tokenizer(texts: Iterable[str], vocab_size: int = 1024) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE on ``texts`` and return it with chat template and response parser.

    Args:
        texts: the training text (any; the smoke uses a seeded world's documents).
        vocab_size: the BPE's vocabulary size, special tokens included.

    Returns:
        A transformers tokenizer: ``eos_token`` is ``<|im_end|>`` (the end of an assistant turn,
        where generation stops), ``pad_token`` is ``<|endoftext|>``.
    """
    bpe = Tokenizer(models.BPE(unk_token=None))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token=IM_END,
        pad_token=PAD,
        additional_special_tokens=SPECIAL_TOKENS[1:],
        clean_up_tokenization_spaces=False,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.response_template = RESPONSE_TEMPLATE
    return tokenizer


def build_model(
    tokenizer: PreTrainedTokenizerFast,
    seed: int = 0,
    *,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 4,
    max_positions: int = 8192,
) -> LlamaForCausalLM:
    """A small Llama (by default two layers, a 64-wide residual stream), random weights drawn
    from ``seed``.

    Args:
        tokenizer: sets the vocabulary size and the pad, EOS token ids.
        seed: the torch seed for the initial weights.
        hidden: the residual stream's width (the MLP is twice as wide).
        layers: the number of decoder layers.
        heads: attention heads (half as many key-value heads).
        max_positions: the longest sequence the model takes.
    """
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=max(1, heads // 2),
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model
