"""``ragbot stats --html FILE``: one self-contained page, inline SVG charts (pygal), no network.

The page loads nothing: the charts are SVG elements written into the HTML by pygal with its
tooltip script switched off, the styles are inline, and every text that users typed (questions,
answers) is HTML-escaped.
"""

from __future__ import annotations

import re
import sys
from html import escape
from typing import Any

import pygal
from pygal.style import Style

from bots.admin.stats import OUTCOMES, Stats, histogram_labels, ms

# pygal adds an import hook for its map plugins (pygal.maps.*) that only has the legacy
# find_module API, so Python warns (ImportWarning) on every later import; no map is used here.
sys.meta_path[:] = [finder for finder in sys.meta_path if type(finder).__name__ != "PluginImportFixer"]


def _style(colors: tuple[str, ...]) -> Style:
    return Style(
        background="white", plot_background="white", foreground="#333", foreground_strong="#111",
        foreground_subtle="#999", colors=colors, font_family="system-ui, sans-serif", label_font_size=11,
        major_label_font_size=11, legend_font_size=12, title_font_size=14,
    )


_STYLE = _style(("#2b6cb0", "#dd6b20", "#38a169", "#e53e3e", "#805ad5", "#718096"))
#: Outcome colours: answered green, unverified orange, not found grey, failed red.
_OUTCOME_STYLE = _style(("#38a169", "#dd6b20", "#a0aec0", "#e53e3e", "#805ad5", "#4a5568"))
_SCRIPT = re.compile(r"<script\b.*?</script>", re.DOTALL)
_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.muted { color: #666; } .cards { display: flex; gap: 1rem; flex-wrap: wrap; }
.card { border: 1px solid #ddd; border-radius: 8px; padding: .8rem 1.2rem; min-width: 9rem; }
.card b { display: block; font-size: 1.6rem; }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.charts figure { margin: 0; border: 1px solid #eee; border-radius: 8px; padding: .5rem; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #eee; vertical-align: top; }
th { background: #f7f7f7; } td.n { text-align: right; white-space: nowrap; }
code { font-size: .8rem; color: #555; }
"""


def _chart(kind: type[Any], title: str, **options: Any) -> Any:
    options.setdefault("style", _STYLE)
    return kind(title=title, js=[], disable_xml_declaration=True, width=540, height=300,
                legend_at_bottom=True, print_values=False, explicit_size=False,
                show_minor_y_labels=False, y_labels_major_count=6, **options)


def charts(stats: Stats) -> list[str]:
    """The SVG charts: answer latency histogram, questions per day, outcomes by platform."""
    latency = _chart(pygal.Bar, "Answer latency (end to end)", show_legend=False,
                     x_label_rotation=35)
    latency.x_labels = histogram_labels()
    latency.add("answers", stats.histogram)
    daily = _chart(pygal.Bar, "Questions and not found per day", x_label_rotation=35)
    daily.x_labels = [d[5:] for d, _, _ in stats.per_day]
    daily.add("questions", [n for _, n, _ in stats.per_day])
    daily.add("not found", [m for _, _, m in stats.per_day])
    platforms = _chart(pygal.StackedBar, "Outcomes by platform", style=_OUTCOME_STYLE)
    names = sorted(stats.by_platform)
    platforms.x_labels = names
    for outcome in OUTCOMES:
        platforms.add(outcome.replace("_", " "), [stats.by_platform[p].get(outcome, 0) for p in names])
    # pygal always writes its tooltip configuration as an inline <script>; nothing here uses it.
    return [_SCRIPT.sub("", c.render(is_unicode=True)) for c in (latency, daily, platforms)]


def _table(headers: list[str], rows: list[list[str]], numeric: set[int] | None = None) -> str:
    if not rows:
        return '<p class="muted">None in this period.</p>'
    numeric = numeric or set()
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cards(stats: Stats) -> str:
    cards = [("questions", str(stats.questions))]
    for outcome in ("answered", "not_found", "failed"):
        rate = stats.rate(outcome)
        cards.append((outcome.replace("_", " "), "-" if rate is None else f"{rate:.0%}"))
    cards.append(("thumbs up / down", f"{stats.votes[0]} / {stats.votes[1]}"))
    return '<div class="cards">' + "".join(
        f'<div class="card"><b>{escape(v)}</b>{escape(k)}</div>' for k, v in cards) + "</div>"


def _tables(stats: Stats) -> list[str]:
    steps = [[escape(name), str(lat.count), _num(ms(lat.p50)), _num(ms(lat.p95))]
             for name, lat in stats.latency.items()]
    gaps = [[str(g.count), escape(g.question), escape("; ".join(g.variants)), escape(g.last_asked[:10])]
            for g in stats.gaps]
    pages = [[str(n), escape(t), f'<a href="{escape(u)}">{escape(u)}</a>'] for u, t, n in stats.top_pages]
    down = [[escape(t["when"][:16]), escape(t["platform"]), escape(t["question"]), escape(t["answer"][:400]),
             f"<code>{escape(t['query_id'] or '')}</code>"] for t in stats.thumbs_down]
    errors = [[str(n), escape(e)] for e, n in stats.errors]
    return [
        "<h2>Pipeline latency</h2>" + _table(["step", "count", "p50 ms", "p95 ms"], steps, {1, 2, 3}),
        "<h2>Coverage gaps: unanswered questions, grouped</h2>"
        + _table(["asked", "question", "also asked as", "last"], gaps, {0}),
        "<h2>Thumbs down</h2>" + _table(["when", "platform", "question", "answer", "query id"], down),
        "<h2>Most-cited pages</h2>" + _table(["answers", "title", "url"], pages, {0}),
        "<h2>Errors</h2>" + _table(["times", "error"], errors, {0}),
    ]


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def render_html(stats: Stats) -> str:
    """The whole page as one string."""
    ingest = stats.last_ingest
    synced = (f"docs last synced {escape(ingest['when'][:19])} UTC: {escape(ingest['summary'] or '')}"
              if ingest else "no ingest recorded")
    period = f"{stats.since:%Y-%m-%d %H:%M} to {stats.until:%Y-%m-%d %H:%M} UTC"
    figures = "".join(f"<figure>{svg}</figure>" for svg in charts(stats))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>ragbot stats {escape(period)}</title><style>{_CSS}</style></head><body>"
        f"<h1>ragbot stats</h1><p class=\"muted\">{escape(period)} · {synced}</p>"
        f"{_cards(stats)}<h2>Charts</h2><div class=\"charts\">{figures}</div>"
        + "".join(_tables(stats)) + "</body></html>\n"
    )
