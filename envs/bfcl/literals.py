"""Java and JavaScript literal strings -> Python values, with BFCL's conversion rules.

BFCL's Java / JavaScript categories show every parameter as a string holding a literal
(``"50L"``, ``"new ArrayList<>(Arrays.asList(1, 2))"``, ``"[1, 2]"``); its checker converts
that string by the declared type and compares the result with the ground truth. A string that
does not look like the declared type stays a string (so it then fails the comparison). These
rules, quirks included (``char`` is never unquoted; ``String`` elements of a Java ``Array``
keep their quotes), are reproduced so verdicts agree with BFCL's.

BFCL reads collection literals with regexes whose nested lazy groups cost up to the cube of the
literal's length (a 2,000-character ``HashMap`` made of ``new HashMap<>(){{put("`` takes 0.2 s).
A collection literal longer than :data:`MAX_COLLECTION_CHARS` is therefore left as text, which
fails the type check as any unreadable literal does; BFCL's longest answer literal has 113
characters.
"""

from __future__ import annotations

import re
from typing import Any

JAVA_TYPES: dict[str, type] = {
    "byte": int, "short": int, "integer": int, "float": float, "double": float, "long": int, "boolean": bool,
    "char": str, "Array": list, "ArrayList": list, "Set": set, "HashMap": dict, "Hashtable": dict,
    "Queue": list, "Stack": list, "String": str, "any": str,
}  # fmt: skip
JS_TYPES: dict[str, type] = {
    "String": str, "integer": int, "float": float, "Bigint": int, "Boolean": bool, "dict": dict, "array": list, "any": str,
}  # fmt: skip
UNSUPPORTED_JAVA = ("Set", "Hashtable", "Queue", "Stack")

MAX_COLLECTION_CHARS = 1000
"""Longest Java ``ArrayList``/``Array``/``HashMap`` or JavaScript ``array``/``dict`` literal converted."""
_COLLECTIONS = frozenset({"ArrayList", "Array", "HashMap", "array", "dict"})

_INT = r"^-?\d+$"
_JAVA_FLOAT = r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$"
_JAVA_DOUBLE = r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$"
_JAVA_LONG = r"^-?\d+[lL]$"


class UnsupportedType(ValueError):
    """A declared type BFCL cannot convert (its checker raises on it)."""


def _int(digits: str, literal: str) -> int | str:
    """``int(digits)``, or the whole ``literal`` when it has more digits than Python converts
    (4300): no Java or JavaScript integer is that long, so it then fails the type check, as text."""
    try:
        return int(digits)
    except ValueError:
        return literal


def java_value(text: str, declared: str, nested: str | None = None) -> Any:
    """Convert a Java literal string as BFCL does for a parameter of type ``declared``."""
    if declared not in JAVA_TYPES or declared in UNSUPPORTED_JAVA:
        raise UnsupportedType(f"Java type {declared!r} cannot be converted")
    if declared in _COLLECTIONS and len(text) > MAX_COLLECTION_CHARS:
        return text
    if declared in ("byte", "short", "integer"):
        return _int(text, text) if re.match(_INT, text) else text
    if declared == "float":
        return float(re.sub(r"[fF]$", "", text)) if re.match(_JAVA_FLOAT, text) else text
    if declared == "double":
        return float(text) if re.match(_JAVA_DOUBLE, text) else text
    if declared == "long":
        return _int(text[:-1], text) if re.match(_JAVA_LONG, text) else text
    if declared == "boolean":
        return text == "true" if text in ("true", "false") else text
    if declared == "ArrayList":
        return _java_arraylist(text, nested)
    if declared == "Array":
        return _java_array(text, nested)
    if declared == "HashMap":
        return _java_hashmap(text)
    return str(text)  # String, char, any


def _java_element(text: str, nested: str | None, unquote: bool) -> Any:
    if unquote and nested in ("char", "String"):
        return text[1:-1]
    return java_value(text, nested) if nested else java_plain(text)


def _java_arraylist(text: str, nested: str | None) -> Any:
    if found := re.search(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)", text):
        return [_java_element(part.strip(), nested, unquote=True) for part in found.group(1).split(",")]
    if found := re.search(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", text, re.DOTALL):
        return [_java_element(part.strip(), nested, unquote=True) for part in re.findall(r"add\((.+?)\)", found.group(1))]
    if re.search(r"new\s+ArrayList<\w*>\(\)", text):
        return []
    return text


def _java_array(text: str, nested: str | None) -> Any:
    found = re.search(r"new\s+\w+\[\]\s*\{(.*?)\}", text)
    if not found:
        return text
    parts = [p.strip() for p in found.group(1).split(",") if p.strip()]
    return [_java_element(p, nested, unquote=False) for p in parts]


def _java_hashmap(text: str) -> Any:
    found = re.search(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", text, re.DOTALL)
    if found:
        puts = re.findall(r"put\(\"(.*?)\",\s*(.*?)\)", found.group(1)) if found.group(1).strip() else []
        return {key: java_plain(value.strip()) for key, value in puts}
    return {} if re.search(r"new\s+HashMap<.*?>\s*\(\)", text) else text


def java_plain(text: str) -> Any:
    """A Java literal whose type is not declared (collection elements, map values)."""
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if re.match(_JAVA_LONG, text):
        return _int(text[:-1], text)
    if re.match(_JAVA_FLOAT, text):
        return float(re.sub(r"[fF]$", "", text))
    return _number_or_text(text)


def _number_or_text(text: str) -> Any:
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            continue
    return text


def js_value(text: str, declared: str, nested: str | None = None) -> Any:
    """Convert a JavaScript literal string as BFCL does for a parameter of type ``declared``."""
    if declared not in JS_TYPES:
        raise UnsupportedType(f"JavaScript type {declared!r} cannot be converted")
    if declared in _COLLECTIONS and len(text) > MAX_COLLECTION_CHARS:
        return text
    if declared == "String":
        return text[1:-1] if text[:1] in ("'", '"') and text.endswith(text[0]) else text
    if declared == "integer":
        return _int(text, text) if re.match(_INT, text) else text
    if declared == "float":
        return float(text) if re.match(r"^-?\d+(\.\d+)?$", text) else text
    if declared == "Bigint":
        return _int(text[:-1], text) if re.match(r"^-?\d+n$", text) else text
    if declared == "Boolean":
        return text == "true" if text in ("true", "false") else text
    if declared == "dict":
        return _js_object(text.strip())
    if declared == "array":
        return _js_array(text.strip(), nested)
    return str(text)


def _js_array(code: str, nested: str | None) -> Any:
    try:
        grid = re.match(r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)", code)
        if grid:
            rows = []
            for index, row in enumerate(re.findall(r"\[(.*?)\]", grid.group(0))):
                row = row.strip()
                row = row[1:] if index == 0 and row.startswith("[") else row
                rows.append([js_plain(e.strip()) for e in row.split(",")])
            return rows
        flat = re.match(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)", code)
        if not flat:
            return code
        body = (flat.group(1) if flat.group(1) is not None else flat.group(2) or "").strip()
        parts = body.split(",") if body else []
        if not nested:
            return [js_plain(p.strip()) for p in parts]
        return [js_value(p.strip(), nested) for p in parts]
    except Exception:  # BFCL falls back to the raw text on any conversion failure
        return code


def _js_object(code: str) -> Any:
    if code == "{}":
        return {}
    found = re.match(r"\{(.*?)\}", code)
    if not found:
        return code
    out: dict[str, Any] = {}
    for key, value in re.findall(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)", found.group(1)):
        key, value = key.strip().strip("'\""), value.strip()
        if value.startswith("[") and value.endswith("]"):
            out[key] = _js_array(value, None)
        elif value.startswith("{") and value.endswith("}"):
            out[key] = _js_object(value)
        else:
            out[key] = js_plain(value.strip("'\""))
    return out


def js_plain(text: str) -> Any:
    """A JavaScript literal whose type is not declared (array elements, object values)."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text[:1] in ("'", '"') and text.endswith(text[0]):
        return text[1:-1]
    return _number_or_text(text)
