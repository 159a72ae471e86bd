"""What each supernode preset buys a MoE and a dense job: exposed EP time and step time.

For every ``wanka.planner.presets.SUPERNODES`` entry: the supernode's layout on the supernode and on
the same accelerators in small scale-up domains (exposed EP all-to-all, step time, the fall in %),
and each at the layout the planner ranks first; then a dense job (Llama 3 70B) the same way.
Run: ``.venv/bin/python -m benchmarks.check_supernodes [--json]`` (~30 s on an idle core).
"""

from __future__ import annotations

import json
import sys

from wanka.planner.presets import SUPERNODES, supernode_gain
from wanka.spec import load_model


def main(argv: list[str]) -> int:
    out: dict[str, object] = {}
    dense = load_model("llama3-70b")
    for name, preset in SUPERNODES.items():
        sup, base = preset.scenarios()
        moe = supernode_gain(sup, base)
        flat = supernode_gain(
            sup.model_copy(update={"model": dense, "parallel": None}),
            base.model_copy(update={"model": dense, "parallel": None}),
        )
        out[name] = {"moe": moe.to_dict(), "dense": flat.to_dict()}
        if "--json" not in argv:
            print(f"{name}: {preset.en}")
            for line in moe.lines() + flat.lines():
                print(f"  {line}")
    if "--json" in argv:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
