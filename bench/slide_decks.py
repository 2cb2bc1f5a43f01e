"""Slide decks of our own that look like decks from elsewhere: vector plots whose markers are glyphs,
axis tick labels, symbol-font bullets, a footer repeated on every slide.

Why: the 88 PDFs of ../shared/data hold few plots drawn as text, so a rule fitted to them says
nothing about a statistics course's R plots or a Beamer deck. These decks are written here, with
text of their own (a made-up horticulture course), and measured by ``bench.extraction`` beside
the corpus and read by ``tests/test_slide_figures.py``:

* :func:`r_style_plot`: one page as R's ``pdf()`` device draws a scatter plot (points as
  ZapfDingbats circles, Helvetica tick labels, axes as paths); ``tests/fixtures/slides`` includes
  it into a Beamer deck, where it becomes a form XObject;
* :func:`fpdf_deck`: slides drawn by fpdf2 with the plot on the page itself (no form), a
  ZapfDingbats legend, bullets and a footer with the slide's number;
* :func:`matplotlib_deck`: slides made with matplotlib's PDF backend (``bench`` extra): a line
  plot with glyph markers, tick labels and a legend, the slide's words beside it;
* :func:`beamer_deck`: the Beamer deck built by ``pdflatex`` from ``tests/fixtures/slides``
  (committed built, as CI has no LaTeX): the default theme's triangle bullets come from the msam
  maths font, which has no Unicode map.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "slides"
FOOTER = "Lecture 5: Soil water   HORT 210, Autumn 2031"

#: Words each deck's slides say beside their plots: what must stay in the index.
SAID = (
    "Moisture falls fastest in sandy beds",
    "Mulched rows kept their water a week longer",
    "Irrigate when the probe reads under twenty percent",
)
#: (x, y) points of the plots: two groups, so a legend names them.
_POINTS = [(d, 34 - 1.6 * d + 3 * math.sin(d * 1.7)) for d in range(1, 15)]
_MULCHED = [(d, 38 - 0.9 * d + 2 * math.cos(d * 1.3)) for d in range(1, 15)]


def _plot_on(pdf: Any, left: float, bottom: float, width: float, height: float) -> None:
    """A scatter plot drawn as R's ``pdf()`` device draws one: the frame and ticks as paths, every
    point a ZapfDingbats glyph ("l" is a filled circle, "m" an open one), the tick labels and axis
    titles in Helvetica, a legend of glyph and word. Coordinates in the page's units, top-down."""
    x0, x1, y0, y1 = 0.0, 15.0, 0.0, 40.0

    def at(x: float, y: float) -> tuple[float, float]:
        return left + (x - x0) / (x1 - x0) * width, bottom - (y - y0) / (y1 - y0) * height

    pdf.set_draw_color(0)
    pdf.set_line_width(0.3)
    pdf.rect(left, bottom - height, width, height)
    pdf.set_font("Helvetica", size=9)
    for x in range(0, 16, 5):  # x ticks: 0 5 10 15
        px, py = at(x, y0)
        pdf.line(px, py, px, py + 1.5)
        label = str(x)
        pdf.text(px - pdf.get_string_width(label) / 2, py + 5, label)
    for y in range(0, 41, 10):  # y ticks: 0 10 20 30 40
        px, py = at(x0, y)
        pdf.line(px - 1.5, py, px, py)
        label = str(y)
        pdf.text(px - 2.5 - pdf.get_string_width(label), py + 1.2, label)
    pdf.text(left + width / 2 - 8, bottom + 10, "Days since watering")
    pdf.set_font("zapfdingbats", size=7)
    for glyph, points in (("l", _POINTS), ("m", _MULCHED)):
        for x, y in points:
            px, py = at(x, y)
            pdf.text(px - 1.2, py + 1.2, glyph)
    # the legend: a glyph and a word or two, top right inside the frame
    for row, (glyph, label) in enumerate((("l", "bare"), ("m", "mulched"))):
        px, py = at(11.5, 37 - 3.5 * row)
        pdf.set_font("zapfdingbats", size=7)
        pdf.text(px, py, glyph)
        pdf.set_font("Helvetica", size=8)
        pdf.text(px + 4, py, label)


def r_style_plot() -> bytes:
    """One page holding only a plot, as R writes ``pdf("moisture.pdf")``: what a deck includes."""
    from fpdf import FPDF

    pdf = FPDF(unit="mm", format=(120, 90))
    pdf.set_auto_page_break(False)
    pdf.add_page()
    _plot_on(pdf, 18, 76, 96, 68)
    return bytes(pdf.output())


def fpdf_deck() -> bytes:
    """Six slides: a title, bullets in a symbol font, two plot slides with words beside the plot, a
    summary; the footer and "N / 6" on every slide."""
    from fpdf import FPDF

    pdf = FPDF(orientation="L", unit="mm", format=(254, 190.5))  # 10 x 7.5 in, a slide
    pdf.set_auto_page_break(False)
    slides = [
        ("Soil water in raised beds", ["How beds dry out between waterings", "What mulch changes"]),
        ("Today", ["Reading a moisture probe", "Drying curves", "When to irrigate"]),
        ("Drying curve, bare beds", [SAID[0]]),
        ("Drying curve, mulched beds", [SAID[1]]),
        ("Rule of thumb", [SAID[2], "Check again after rain"]),
        ("Next week", ["Drip lines and their timers"]),
    ]
    for number, (title, lines) in enumerate(slides, 1):
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 26)
        pdf.text(15, 25, title)
        plot = "curve" in title
        y = 50
        for line in lines:
            pdf.set_font("zapfdingbats", size=12)  # a dingbat bullet: "u" is a black diamond
            pdf.text(15, y, "u")
            pdf.set_font("Helvetica", size=18)
            if plot:  # beside the plot, wrapped into a narrow column
                words, row = line.split(), ""
                for word in words:
                    if pdf.get_string_width(f"{row} {word}") > 80:
                        pdf.text(23, y, row)
                        y += 9
                        row = word
                    else:
                        row = f"{row} {word}".strip()
                pdf.text(23, y, row)
            else:
                pdf.text(23, y, line)
            y += 14
        if plot:
            _plot_on(pdf, 125, 160, 110, 105)
        pdf.set_font("Helvetica", size=9)
        pdf.text(15, 183, FOOTER)
        pdf.text(225, 183, f"{number} / {len(slides)}")
    return bytes(pdf.output())


def matplotlib_deck() -> bytes:
    """Four slides from matplotlib's PDF backend: a title slide, two slides of a line plot with glyph
    markers (text placed at each point), tick labels and a legend, the words beside it, and a
    summary; the footer on each."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    out = io.BytesIO()
    with PdfPages(out) as pages:
        for number, (title, said, points) in enumerate(
            [
                ("Soil water in raised beds", None, None),
                ("Drying curve, bare beds", SAID[0], _POINTS),
                ("Drying curve, mulched beds", SAID[1], _MULCHED),
                ("Rule of thumb", SAID[2], None),
            ],
            1,
        ):
            fig = Figure(figsize=(10, 7.5))
            fig.text(0.06, 0.9, title, fontsize=26, weight="bold")
            if said:
                fig.text(
                    0.06,
                    0.75,
                    "\u2022 " + said.replace(" fastest", "\nfastest").replace(" kept", "\nkept"),
                    fontsize=16,
                )
            if points:
                ax = fig.add_axes((0.5, 0.15, 0.45, 0.6))
                xs, ys = zip(*points, strict=True)
                ax.plot(xs, ys, color="0.5", linewidth=0.8, label="probe A")
                for x, y in points:  # markers as text glyphs, as plots exported from other tools are
                    ax.text(x, y, "\u25b2", ha="center", va="center", fontsize=9)
                    ax.text(x, y - 4, "\u25cb", ha="center", va="center", fontsize=9)
                ax.set_xlim(0, 15)
                ax.set_ylim(0, 40)
                ax.set_xticks(range(0, 16, 3))
                ax.set_yticks([0, 10, 20, 30, 40])
                ax.set_xlabel("Days since watering")
                ax.set_ylabel("Moisture (%)")
                ax.legend(loc="upper right")
            fig.text(0.06, 0.03, FOOTER, fontsize=9)
            fig.text(0.9, 0.03, f"{number} / 4", fontsize=9)
            pages.savefig(fig)
    return out.getvalue()


def beamer_deck() -> bytes:
    """The committed Beamer build (``tests/fixtures/slides/soil_water.tex``)."""
    return (FIXTURES / "soil_water.pdf").read_bytes()


#: Every deck by the file name it is read under.
DECKS = {
    "soil_water_beamer.pdf": beamer_deck,
    "soil_water_fpdf.pdf": fpdf_deck,
    "soil_water_matplotlib.pdf": matplotlib_deck,
}


def decks() -> dict[str, bytes]:
    """Each deck's bytes by name; the matplotlib one only where matplotlib is installed."""
    out = {}
    for name, build in DECKS.items():
        try:
            out[name] = build()
        except ImportError:  # matplotlib is a bench extra
            continue
    return out
