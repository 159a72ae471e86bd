"""The language of the command line's text: ``--lang zh|en`` (before the command) or ``WANKA_LANG``.

Commands read :func:`current`; JSON keys stay English. The labels of every command's text output go
through one table, :data:`LABELS` (English label -> Chinese), read by :func:`tx` and :func:`lbl`.
Error lines keep their field names, values and file names and translate the fixed wording around them
(:func:`translate_error`).
"""

from __future__ import annotations

import os

__all__ = ["LABELS", "LANGS", "current", "lbl", "set_lang", "tr", "translate_error", "tx"]

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


# The labels of the commands' text output: English -> Chinese (the words an AI-infrastructure engineer in
# China uses; MFU, ETTR, HBM, TP/PP/DP/CP/EP, ZeRO keep their usual abbreviations). One table for every command.
LABELS: dict[str, str] = {
    # shared
    "note": "注",
    "source": "来源",
    "assumptions": "假设",
    "on": "运行于",
    "GPUs": "卡",
    "nodes": "节点",
    "count": "数量",
    "power": "功率",
    "total": "合计",
    "share": "占比",
    "name": "名称",
    "model": "模型",
    "job": "训练任务",
    "steady state": "稳态",
    "step": "单步",
    "memory": "显存",
    "energy": "能耗",
    "checkpoint": "检查点",
    "storage": "存储",
    "fabric": "参数面网络",
    "racks": "机柜",
    "accelerators": "加速卡",
    "IT power": "IT 功耗",
    "host memory": "主机内存",
    "peak (dense)": "峰值算力 (稠密)",
    "scale-up": "超节点/机内互联",
    "parameters": "参数量",
    "strategy from": "策略来源",
    "published": "公开记录",
    "plot written to": "图已写入",
    # plan
    "strategy": "并行策略",
    "global batch": "全局批量",
    "step time": "步时",
    "tokens/s/GPU": "每卡吞吐 tokens/s",
    "(model FLOPs 6N + attention)": "（模型算力 6N + 注意力）",
    "compute fwd+bwd": "前向+反向计算",
    "recompute": "重计算",
    "zero-bubble ZB-H1": "零气泡 ZB-H1",
    "TP comm (exposed)": "TP 通信（暴露）",
    "CP comm (exposed)": "CP 通信（暴露）",
    "EP all-to-all (exposed)": "EP All2All（暴露）",
    "PP bubble": "PP 气泡",
    "PP p2p (exposed)": "PP 点对点（暴露）",
    "DP comm (exposed)": "DP 通信（暴露）",
    "optimizer": "优化器",
    "memory / GPU": "每卡显存",
    "weights": "权重",
    "grads": "梯度",
    "activations": "激活",
    "buffers": "缓冲",
    "of": "/",
    "does not fit": "放不下",
    "offloaded activations": "卸载的激活",
    "time to train": "训练时长",
    "at steady state (see `wanka reliability` for restarts)": "（稳态；含重启见 `wanka reliability`）",
    "save": "保存",
    "training stalls": "训练阻塞",
    "load": "加载",
    "operating": "运维假设",
    "`wanka search` (the scenario gives no parallel: block)": "`wanka search`（场景未给出 parallel: 块）",
    "trace": "时间线",
    "(open in https://ui.perfetto.dev or chrome://tracing)": "（用 https://ui.perfetto.dev 或 chrome://tracing 打开）",
    # search
    "objective": "优化目标",
    "layout": "并行布局",
    "mb": "微批",
    "to train": "训练时长",
    "energy $": "电费 $",
    "scenario's strategy": "场景给定策略",
    "Pareto front": "帕累托前沿",
    # reliability
    "replicas": "次模拟",
    "seed": "随机种子",
    "wall clock": "墙钟时间",
    "window": "固定窗口",
    "until trained": "直到训完",
    "interruptions": "中断次数",
    "unexpected": "意外",
    "planned": "计划内",
    "job MTBF": "任务级 MTBF",
    "failures/day": "次故障/天",
    "size-independent": "与规模无关",
    "table": "故障率表",
    "有效训练时长 ETTR": "有效训练时长 ETTR",
    "closed form": "解析解",
    "goodput": "有效吞吐率",
    "throughput": "吞吐",
    "tokens/s/GPU over the campaign": "每卡 tokens/s（整个训练周期）",
    "ETTR limited by": "ETTR 损失来源",
    "(of wall clock)": "（占墙钟时间）",
    "stall": "阻塞",
    "coordination": "协调",
    "persist": "落盘",
    "every": "间隔",
    "steps": "步",
    "(Young/Daly over whole steps ≥ persist)": "（Young/Daly 最优，整步且不短于落盘时间）",
    "spares": "备用节点",
    "hot": "热备",
    "idle cluster nodes": "集群空闲节点",
    "shrink and continue": "缩容继续训练",
    "swap a spare, else wait for repair": "换上备用节点，否则等待维修",
    "straggler factor": "慢节点系数",
    "P(no spare)": "P(无备用)",
    "cause": "原因",
    "detect": "检测",
    "GPU-h lost": "损失卡时",
    "checkpointing": "检查点",
    "checkpoint stalls": "检查点阻塞",
    "lost work": "丢失进度",
    "detection": "故障检测",
    "restart": "重启",
    "running shrunk": "缩容运行",
    "waiting for spare nodes": "等待备用节点",
    "checkpoint load": "检查点加载",
    "planned maintenance": "计划内维护",
    "stragglers": "慢节点",
    "waiting for stragglers": "等待慢节点",
    # show / presets
    "scenario presets": "场景预设",
    "model presets": "模型预设",
    "type": "类型",
    "layers": "层数",
    "hidden": "隐藏维度",
    "description": "说明",
    "read": "读",
    "write": "写",
    # fabric
    "tier": "层级",
    "switch": "交换机",
    "radix": "端口数",
    "switches": "交换机数",
    "down / up ports": "下行 / 上行端口",
    "oversubscription": "收敛比",
    "links below": "下行链路",
    "where": "位置",
    "module / cable": "光模块 / 线缆",
    "bisection": "对分带宽",
    "largest cluster with this switch": "该交换机可组最大集群",
    "optics": "光模块",
    # facility / storage
    "CPUs": "CPU",
    "node other (fans, NICs, memory, NVSwitch)": "节点其他（风扇、网卡、内存、NVSwitch）",
    "network": "网络",
    "IT total": "IT 合计",
    "cooling and power overhead": "制冷与供配电损耗",
    "facility": "机房总功率",
    "training stalled": "训练阻塞",
    "to file system": "落盘到文件系统",
    "restart load": "重启加载",
    "mode": "方式",
    "campaign": "训练周期",
    "hardware": "硬件",
    # schedule
    "completed": "完成",
    "rejected (too big)": "拒绝 (过大)",
    "utilisation (makespan)": "利用率 (全程)",
    "utilisation (arrivals)": "利用率 (到达期间)",
    "queue delay mean": "排队时延 均值",
    "queue delay median": "排队时延 中位数",
    "queue delay p99": "排队时延 p99",
    "JCT mean / median": "作业完成时间 均值/中位数",
    "fragmentation": "碎片率",
    "preemptions": "抢占",
    "node failures / restarts": "节点故障 / 重启",
    "multi-node jobs in 1 leaf": "多节点作业落在 1 台叶交换机下",
    "multi-node jobs in 1 pod": "多节点作业落在 1 个 pod 内",
    "GPU-h lost (fail / preempt)": "损失卡时（故障 / 抢占）",
    # collective
    "routing": "路由",
    "slowdown": "减速比",
    "done": "完成时间",
    "ideal": "理想时间",
    "util p50": "利用率 p50",
    "ECMP imb.": "ECMP 不均衡",
    "collective": "集合通信",
    "hottest": "最热链路",
    # validate
    "id": "编号",
    "kind": "类别",
    "predicted": "预测",
    "measured": "实测",
    "error": "误差",
    # catalog columns
    "HBM GiB": "HBM 容量 GiB",
    "HBM TB/s": "HBM 带宽 TB/s",
    "scale-up GB/s": "超节点互联 GB/s",
    "domains": "互联域",
    "TDP W": "TDP 功耗 W",
    "accelerator": "加速卡",
    "memory GiB": "内存 GiB",
    "NICs": "网卡",
    "max W": "最大功耗 W",
    "protocol": "协议",
    "ports": "端口数",
    "ns": "时延 ns",
    "form factor": "封装",
    "reach m": "传输距离 m",
    "read GB/s": "读 GB/s",
    "write GB/s": "写 GB/s",
    "published runs: predicted vs measured tokens/s/GPU": "公开训练记录：预测与实测 tokens/s/GPU",
}


def tx(en: str) -> str:
    """The label ``en`` in the current language (from :data:`LABELS`; English where it has no entry)."""
    return LABELS.get(en, en) if current() == "zh" else en


def lbl(en: str, width: int) -> str:
    """:func:`tx` padded with spaces to ``width`` terminal cells (a Chinese character is two cells)."""
    from rich.cells import cell_len

    s = tx(en)
    return s + " " * max(1, width - cell_len(s))
