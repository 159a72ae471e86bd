"""Bilingual free text of a scenario: an ``assumptions:`` entry is a string (English) or ``{en: ..., zh: ...}``.

:class:`Note` is a ``str`` (the English text, what every layer and every JSON value reads) that carries
its Chinese translation in ``zh``; :meth:`Note.in_lang` gives the reader's language, falling back to
English where no translation is given (text is never dropped).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import PlainSerializer, PlainValidator, WithJsonSchema

__all__ = ["BilingualText", "Note", "in_lang"]

_MAX_LEN = 2000


class Note(str):
    """English text (the string itself) with an optional Chinese translation ``zh``."""

    zh: str

    def __new__(cls, en: str, zh: str = "") -> Note:
        obj = super().__new__(cls, en)
        obj.zh = zh
        return obj

    def in_lang(self, lang: str) -> str:
        """The text in ``lang`` (``zh`` or ``en``); English where no Chinese is given."""
        return self.zh if lang == "zh" and self.zh else str(self)


def in_lang(text: str, lang: str) -> str:
    """``text`` in ``lang`` when it is a :class:`Note`, else ``text`` itself (English)."""
    return text.in_lang(lang) if isinstance(text, Note) else text


def _check_text(v: object, what: str) -> str:
    if not isinstance(v, str):
        raise ValueError(f"{what} must be a string")
    if not v.strip():
        raise ValueError(f"{what} must not be empty")
    if len(v) > _MAX_LEN:
        raise ValueError(f"{what} must be at most {_MAX_LEN} characters")
    return v


def _validate(v: object) -> Note:
    if isinstance(v, Note):
        return v
    if isinstance(v, str):
        return Note(_check_text(v, "an assumption"))
    if isinstance(v, dict):
        unknown = sorted(str(k) for k in v if k not in ("en", "zh"))
        if unknown or "en" not in v:
            raise ValueError(
                "must be a string or a mapping {en: English text, zh: Chinese text} "
                f"(en required{'; unknown keys: ' + ', '.join(unknown) if unknown else ''})"
            )
        en = _check_text(v["en"], "en")
        zh = _check_text(v["zh"], "zh") if "zh" in v else ""
        return Note(en, zh)
    raise ValueError("must be a string or a mapping {en: English text, zh: Chinese text}")


def _serialize(v: str) -> Any:
    return {"en": str(v), "zh": v.zh} if isinstance(v, Note) and v.zh else str(v)


_SCHEMA = {
    "anyOf": [
        {"type": "string", "maxLength": _MAX_LEN},
        {
            "type": "object",
            "properties": {
                "en": {"type": "string", "maxLength": _MAX_LEN, "description": "English text"},
                "zh": {"type": "string", "maxLength": _MAX_LEN, "description": "中文"},
            },
            "required": ["en"],
            "additionalProperties": False,
        },
    ],
    "description": "English text, or {en: ..., zh: ...} for both languages (the reader's language is shown)",
}

BilingualText = Annotated[str, PlainValidator(_validate), PlainSerializer(_serialize), WithJsonSchema(_SCHEMA)]
