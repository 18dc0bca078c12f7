"""The page: sections as HTML with inline CSS and ``data:`` images — no script, no external reference."""

from __future__ import annotations

from html import escape

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 62em;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.8em; }
nav ol { columns: 2; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
code { font-size: 0.9em; word-break: break-all; }
.muted { color: #666; font-size: 0.9em; }
"""


def _section(s) -> str:
    parts = [f'<section id="{escape(s.id)}">', f"<h2>{escape(s.title)}</h2>"]
    parts += [f"<p>{escape(p)}</p>" for p in s.paragraphs]
    if s.header:
        head = "".join(f"<th>{escape(h)}</th>" for h in s.header)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in s.rows)
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    for f in s.figures:
        parts.append(f'<figure><img id="{escape(f.id)}" src="{f.uri}" alt="{escape(f.alt)}">'
                     f"<figcaption>{escape(f.caption)}</figcaption></figure>")
    parts.append("</section>")
    return "\n".join(parts)


def page(title: str, subtitle: str, sections: list, footer: str) -> str:
    """The whole document (UTF-8, one file)."""
    nav = "".join(f'<li><a href="#{escape(s.id)}">{escape(s.title)}</a></li>' for s in sections)
    body = "\n".join(_section(s) for s in sections)
    return (f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"<h1>{escape(title)}</h1>\n<p class=\"muted\">{escape(subtitle)}</p>\n"
            f"<nav><ol>{nav}</ol></nav>\n{body}\n<footer><p class=\"muted\">{escape(footer)}</p></footer>\n"
            "</body>\n</html>\n")
