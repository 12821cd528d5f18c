"""What every game's `picture.py` draws with: a self-contained SVG document built with the
standard library's ElementTree (python-chess draws its boards the same way), so a picture
needs no font file, image or stylesheet from anywhere and reads the same in a browser, an
`<img>` tag or a PNG converter.

Pure and deterministic: the same view gives the same bytes (attributes keep the order they
are given; numbers are written with at most two decimals). Every drawn component carries a
`<title>` (what a screen reader says, what a mouse-over shows) and a `class` naming what it is
(`card`, `token`, `noble`, `face-down`, ...), which is what tests check structurally.

Conventions every game follows:
- hidden information is drawn face down (`face_down`), never as blank space that could be
  told apart by its size or position from what it hides;
- component data marked approximate is marked in the picture too (`approximate_note`);
- the last move, when given, is highlighted (`HIGHLIGHT`, class `last-move`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable

SVG_NAMESPACE = "http://www.w3.org/2000/svg"
FONT = "sans-serif"
"""A generic family: the reader's own sans-serif font, never a font fetched from anywhere."""
INK = "#222222"
PAPER = "#fbf8f1"
MUTED = "#8a8577"
HIGHLIGHT = "#e8a400"
FACE_DOWN = "#5b6b8c"
WIDE = "wide"
"""The layout for a desktop's aspect (every game's first picture, issue 13)."""
PHONE = "phone"
"""The layout for a phone in portrait (issue 25): PHONE_WIDTH units wide, one column, every
touchable at least TOUCH_UNITS where the game's geometry allows it."""
LAYOUTS = (WIDE, PHONE)
PHONE_WIDTH = 340
"""A phone picture's width: fit to a 360 px phone's board (334 CSS px, the page's margins
taken off) a unit is 0.98 px, at 430 px 1.19 px."""
TOUCH_UNITS = 46
"""The least side of a touchable in a phone picture: 45 CSS px fit to a 360 px phone
(WCAG 2.5.5 asks 44)."""


def number(value: float) -> str:
    """A coordinate as SVG text: integers plain, others with at most two decimals."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


class Picture:
    """One SVG document of `width` x `height` user units, titled `title`."""

    def __init__(self, width: float, height: float, title: str) -> None:
        self.width = width
        self.height = height
        self.root = ET.Element(
            "svg",
            {
                "xmlns": SVG_NAMESPACE,
                "viewBox": f"0 0 {number(width)} {number(height)}",
                "width": number(width),
                "height": number(height),
                "role": "img",
                "font-family": FONT,
            },
        )
        ET.SubElement(self.root, "title").text = title
        self.rect(self.root, 0, 0, width, height, fill=PAPER, cls="background")

    # ------------------------------------------------------------------ structure

    def group(
        self,
        parent: ET.Element | None = None,
        *,
        cls: str,
        title: str | None = None,
        x: float = 0,
        y: float = 0,
        scale: float = 1,
    ) -> ET.Element:
        """A `<g>` named by `cls`, moved to (`x`, `y`) and drawn `scale` times its size
        (a phone layout's larger cards), with a `<title>` when given."""
        attributes = {"class": cls}
        if scale != 1:
            attributes["transform"] = f"translate({number(x)} {number(y)}) scale({number(scale)})"
        elif x or y:
            attributes["transform"] = f"translate({number(x)} {number(y)})"
        element = ET.SubElement(self.root if parent is None else parent, "g", attributes)
        if title:
            ET.SubElement(element, "title").text = title
        return element

    # ------------------------------------------------------------------ shapes

    def rect(
        self,
        parent: ET.Element,
        x: float,
        y: float,
        width: float,
        height: float,
        *,
        fill: str,
        stroke: str | None = None,
        stroke_width: float = 1,
        radius: float = 0,
        cls: str | None = None,
        title: str | None = None,
    ) -> ET.Element:
        attributes = {
            "x": number(x),
            "y": number(y),
            "width": number(width),
            "height": number(height),
            "fill": fill,
        }
        if radius:
            attributes["rx"] = number(radius)
        if stroke:
            attributes["stroke"] = stroke
            attributes["stroke-width"] = number(stroke_width)
        if cls:
            attributes["class"] = cls
        element = ET.SubElement(parent, "rect", attributes)
        if title:
            ET.SubElement(element, "title").text = title
        return element

    def circle(
        self,
        parent: ET.Element,
        cx: float,
        cy: float,
        r: float,
        *,
        fill: str,
        stroke: str | None = None,
        stroke_width: float = 1,
        cls: str | None = None,
        title: str | None = None,
    ) -> ET.Element:
        attributes = {"cx": number(cx), "cy": number(cy), "r": number(r), "fill": fill}
        if stroke:
            attributes["stroke"] = stroke
            attributes["stroke-width"] = number(stroke_width)
        if cls:
            attributes["class"] = cls
        element = ET.SubElement(parent, "circle", attributes)
        if title:
            ET.SubElement(element, "title").text = title
        return element

    def polygon(
        self,
        parent: ET.Element,
        points: Iterable[tuple[float, float]],
        *,
        fill: str,
        stroke: str | None = None,
        stroke_width: float = 1,
        cls: str | None = None,
        title: str | None = None,
    ) -> ET.Element:
        attributes = {
            "points": " ".join(f"{number(x)},{number(y)}" for x, y in points),
            "fill": fill,
        }
        if stroke:
            attributes["stroke"] = stroke
            attributes["stroke-width"] = number(stroke_width)
        if cls:
            attributes["class"] = cls
        element = ET.SubElement(parent, "polygon", attributes)
        if title:
            ET.SubElement(element, "title").text = title
        return element

    def line(
        self,
        parent: ET.Element,
        x1: float,
        y1: float,
        x2: float,
        y2: float,
        *,
        stroke: str = INK,
        stroke_width: float = 1,
        cls: str | None = None,
    ) -> ET.Element:
        attributes = {
            "x1": number(x1),
            "y1": number(y1),
            "x2": number(x2),
            "y2": number(y2),
            "stroke": stroke,
            "stroke-width": number(stroke_width),
        }
        if cls:
            attributes["class"] = cls
        return ET.SubElement(parent, "line", attributes)

    def text(
        self,
        parent: ET.Element,
        x: float,
        y: float,
        words: str,
        *,
        size: float = 12,
        fill: str = INK,
        anchor: str = "start",
        bold: bool = False,
        cls: str | None = None,
    ) -> ET.Element:
        """`words` with its baseline at `y`; `anchor` start, middle or end."""
        attributes = {
            "x": number(x),
            "y": number(y),
            "font-size": number(size),
            "fill": fill,
            "text-anchor": anchor,
        }
        if bold:
            attributes["font-weight"] = "bold"
        if cls:
            attributes["class"] = cls
        element = ET.SubElement(parent, "text", attributes)
        element.text = words
        return element

    # ------------------------------------------------------------------ conventions

    def face_down(
        self,
        parent: ET.Element,
        x: float,
        y: float,
        width: float,
        height: float,
        *,
        title: str,
        radius: float = 4,
    ) -> ET.Element:
        """A hidden component, drawn as its back: the same size as the component face up,
        so the picture says that something is there and nothing of what it is."""
        back = self.group(parent, cls="face-down", title=title)
        self.rect(back, x, y, width, height, fill=FACE_DOWN, stroke=INK, radius=radius)
        inset = min(width, height) * 0.18
        self.rect(
            back,
            x + inset,
            y + inset,
            width - 2 * inset,
            height - 2 * inset,
            fill="none",
            stroke=PAPER,
            radius=max(0, radius - 1),
        )
        return back

    def highlight(
        self, parent: ET.Element, x: float, y: float, width: float, height: float
    ) -> ET.Element:
        """The frame around what the last move changed."""
        return self.rect(
            parent,
            x - 3,
            y - 3,
            width + 6,
            height + 6,
            fill="none",
            stroke=HIGHLIGHT,
            stroke_width=3,
            radius=6,
            cls="last-move",
        )

    def approximate_note(self, words: str) -> ET.Element:
        """The picture's own mark that some component data is approximate (as the recorded
        files said), along its bottom edge."""
        note = self.group(cls="approximate", title=words)
        self.text(
            note, 8, self.height - 8, fitted(f"≈ {words}", self.width - 16, 11), size=11, fill=MUTED
        )
        return note

    def touch(self, element: ET.Element, touch_id: str) -> ET.Element:
        """Mark `element` as something a player taps to compose a move (issue 25): `touch_id`
        is stable across revisions (`slot-1.3`, `bank-u`), the game's `touches.py` names the
        moves by these ids, and the element's `<title>` is its accessible name."""
        element.set("data-touch", touch_id)
        return element

    def button(
        self,
        parent: ET.Element,
        x: float,
        y: float,
        words: str,
        touch_id: str,
        *,
        width: float = 0,
        height: float = 30,
    ) -> ET.Element:
        """A touchable label for a choice that is no component (pass, end the turn, a
        neighbour's side): a rounded box of at least 44 x `height` units with `words` in it
        (a phone layout's buttons are TOUCH_UNITS high)."""
        width = max(width or len(words) * 13 * AVERAGE_ADVANCE + 16, 44.0, height)
        box = self.group(parent, cls="button", title=words)
        self.rect(box, x, y, width, height, fill="#ffffff", stroke=INK, radius=6)
        self.text(box, x + width / 2, y + height / 2 + 5, words, size=13, anchor="middle")
        return self.touch(box, touch_id)

    def svg(self) -> str:
        """The document as text (UTF-8, no XML declaration, so it can be inlined in HTML)."""
        return markup(self.root)


AVERAGE_ADVANCE = 0.56
"""A sans-serif character's average width, in font sizes (the widest text any picture shows
is mostly lower-case words; no font is measured: the viewer's font draws it)."""


def check_layout(layout: str) -> None:
    """Refuses a layout no picture draws (the service only asks for LAYOUTS)."""
    if layout not in LAYOUTS:
        raise ValueError(f"no picture layout {layout!r}: one of {', '.join(LAYOUTS)}")


def fitted(words: str, width: float, size: float) -> str:
    """`words` cut at a word, with "…", when they would run past `width` at font `size`
    (the whole text stays in the element's title)."""
    room = int(width / (size * AVERAGE_ADVANCE))
    if len(words) <= room:
        return words
    cut = words[: room - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"


_ATTRIBUTE_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "\n": "&#10;",
        "\r": "&#13;",
        "\t": "&#09;",
    }
)
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_NEEDS_ESCAPE = re.compile(r'[&<>"\n\r\t]').search
"""Most values need no escape; finding that out in C is several times faster than
`translate`, which looks every character up in a dict."""


def markup(element: ET.Element) -> str:
    """`element` as XML text, the same characters as `ET.tostring(element,
    encoding="unicode")` for the plain elements a `Picture` holds (no namespaced tags,
    comments or processing instructions), in about half its time: ElementTree's serializer
    first walks the whole tree for namespaces, and serializing is most of a picture's cost
    (issue 13: p50 <= 2 ms per state)."""
    parts: list[str] = []
    add = parts.append

    def write(node: ET.Element) -> None:
        tag = node.tag
        add("<" + tag)
        for name, value in node.items():
            if _NEEDS_ESCAPE(value):
                value = value.translate(_ATTRIBUTE_ESCAPES)
            add(f' {name}="{value}"')
        if node.text or len(node):
            add(">")
            text = node.text
            if text:
                add(text.translate(_TEXT_ESCAPES) if _NEEDS_ESCAPE(text) else text)
            for child in node:
                write(child)
            add(f"</{tag}>")
        else:
            add(" />")
        if node.tail:
            add(node.tail.translate(_TEXT_ESCAPES))

    write(element)
    return "".join(parts)
