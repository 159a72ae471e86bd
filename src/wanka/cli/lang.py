"""The language of the command line's text: ``--lang zh|en`` (before the command) or ``WANKA_LANG``.

Commands read :func:`current`; JSON keys stay English. Error lines keep their field names, values and
file names and translate the fixed wording around them (:func:`translate_error`).
"""

from __future__ import annotations

import os

__all__ = ["LANGS", "current", "set_lang", "tr", "translate_error"]

LANGS = ("en", "zh")
_state = {"lang": ""}

# fixed phrases of error messages, longest first when applied
_ZH = {
    "required field is missing": "缺少必填字段",
    "unknown field": "未知字段",
    "did you mean": "是否想写",
    "Allowed here": "此处允许",
    "not in the catalog; known": "不在硬件目录中；已知",
    "must be an integer": "必须是整数",
    "must be a number": "必须是数字",
    "must be a finite number": "必须是有限数",
    "must be true or false": "必须是 true 或 false",
    "must be a string": "必须是字符串",
    "must be a mapping of fields": "必须是字段映射",
    "must be one of": "必须是以下之一",
    "must be between": "必须介于",
    "must be": "必须",
    "allowed": "允许范围",
    "no such file": "文件不存在",
    "not UTF-8 text": "不是 UTF-8 文本",
    "malformed YAML": "YAML 格式错误",
    "malformed JSON": "JSON 格式错误",
    "nested more than": "嵌套层数超过",
    "levels deep": "层",
    "is a folder": "是文件夹",
    "not a regular file": "不是普通文件",
    "is a SQLite database (a run store?); refusing to overwrite it": "是 SQLite 数据库（运行库？），拒绝覆盖",
    "does not exist": "不存在",
    "unknown scenario": "未知场景",
    "unknown model": "未知模型",
    "line": "行",
}


def set_lang(lang: str) -> None:
    _state["lang"] = lang


def current() -> str:
    """``en`` or ``zh``: what ``--lang`` set, else ``WANKA_LANG``, else English."""
    lang = _state["lang"] or os.environ.get("WANKA_LANG", "en")
    return lang if lang in LANGS else "en"


def translate_error(line: str) -> str:
    """An error line in the current language (field names, values and paths unchanged)."""
    if current() != "zh":
        return line
    for en in sorted(_ZH, key=len, reverse=True):
        line = line.replace(en, _ZH[en])
    return line


def tr(en: str, zh: str) -> str:
    """``zh`` when the current language is Chinese, else ``en`` (labels of text output; JSON stays English)."""
    return zh if current() == "zh" else en
