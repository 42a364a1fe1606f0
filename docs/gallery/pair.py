"""Put each figure's before and after side by side: ``python docs/gallery/pair.py BEFORE AFTER OUT``.

BEFORE and AFTER hold one folder per profile (``advisor report -p @NAME -f png -o DIR/NAME``)
and ``fleet`` for fleet figures; OUT gets ``<folder>--<figure>.png`` per figure (a figure only
one side has is shown beside an empty frame) and ``index.md``.  Pictures are halved and stored
with a 256-colour palette (Pillow, matplotlib's own dependency) to keep the folder small.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw

#: Each side's width in the pair, pixels (the figures are 1200 px: half their size).
SIDE = 600
#: Height of the caption strip above each side, pixels.
CAPTION = 22


def _side(path: Path | None, label: str, height: int) -> Image.Image:
    canvas = Image.new("RGB", (SIDE, height + CAPTION), "white")
    draw = ImageDraw.Draw(canvas)
    draw.text((6, 4), label if path else f"{label}: (no such figure)", fill="black")
    if path is not None:
        img = Image.open(path).convert("RGB")
        img = img.resize((SIDE, round(img.height * SIDE / img.width)), Image.LANCZOS)
        canvas.paste(img, (0, CAPTION))
    return canvas


def main(before: Path, after: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    names = sorted({p.relative_to(d) for d in (before, after) for p in d.glob("*/*.png")})
    lines = ["# Figures before and after issue 27", ""]
    for rel in names:
        b, a = before / rel, after / rel
        b, a = (b if b.exists() else None), (a if a.exists() else None)
        heights = [round(Image.open(p).height * SIDE / Image.open(p).width) for p in (b, a) if p]
        h = max(heights)
        pair = Image.new("RGB", (2 * SIDE + 8, h + CAPTION), "#cccccc")
        pair.paste(_side(b, "before", h), (0, 0))
        pair.paste(_side(a, "after", h), (SIDE + 8, 0))
        name = f"{rel.parent}--{rel.stem}.png"
        pair.quantize(256).save(out / name, optimize=True)
        lines += [f"## {rel.parent}: {rel.stem}", "", f"![{rel.stem}]({name})", ""]
    (out / "index.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main(*(Path(a) for a in sys.argv[1:4]))
