#!/usr/bin/env python3
"""A terminal screen captured with `tmux capture-pane -e -p` (text + SGR colour sequences) as one
HTML page: a <pre> in a monospace font, one <span> per run of equal attributes, black background
(the terminal's defaults: light grey on black). Used by scripts/editor-screenshots.sh to turn a
real Neovim screen into a PNG (headless Chromium renders the page).
usage: ansi_html.py CAPTURE.txt TITLE > OUT.html"""
import html
import re
import sys

FG, BG = "#d0d0d0", "#1c1c1c"
BASE16 = ["#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
          "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff"]


def xterm256(n):
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + 10 * (n - 232)
    return "#%02x%02x%02x" % (v, v, v)


def apply(params, st):
    """Updates the attribute dict `st` with one SGR parameter list."""
    p = [int(x) if x else 0 for x in params.split(";")] if params else [0]
    i = 0
    while i < len(p):
        c = p[i]
        if c == 0:
            st.clear()
        elif c == 1:
            st["bold"] = True
        elif c == 3:
            st["italic"] = True
        elif c == 4:
            st["underline"] = True
        elif c == 7:
            st["reverse"] = True
        elif c == 22:
            st.pop("bold", None)
        elif c == 23:
            st.pop("italic", None)
        elif c == 24:
            st.pop("underline", None)
        elif c == 27:
            st.pop("reverse", None)
        elif 30 <= c <= 37 or 90 <= c <= 97:
            st["fg"] = BASE16[c - 30 if c < 90 else c - 90 + 8]
        elif 40 <= c <= 47 or 100 <= c <= 107:
            st["bg"] = BASE16[c - 40 if c < 100 else c - 100 + 8]
        elif c in (38, 48) and i + 1 < len(p):
            key = "fg" if c == 38 else "bg"
            if p[i + 1] == 5 and i + 2 < len(p):
                st[key] = xterm256(p[i + 2])
                i += 2
            elif p[i + 1] == 2 and i + 4 < len(p):
                st[key] = "#%02x%02x%02x" % tuple(p[i + 2:i + 5])
                i += 4
        elif c == 39:
            st.pop("fg", None)
        elif c == 49:
            st.pop("bg", None)
        i += 1


def style(st):
    fg, bg = st.get("fg", FG), st.get("bg", BG)
    if st.get("reverse"):
        fg, bg = bg, fg
    css = ["color:" + fg]
    if bg != BG:
        css.append("background:" + bg)
    if st.get("bold"):
        css.append("font-weight:bold")
    if st.get("italic"):
        css.append("font-style:italic")
    if st.get("underline"):
        css.append("text-decoration:underline")
    return ";".join(css)


def main():
    text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
    title = sys.argv[2] if len(sys.argv) > 2 else "terminal"
    out, st = [], {}
    for part in re.split(r"(\x1b\[[0-9;]*m)", text):
        m = re.fullmatch(r"\x1b\[([0-9;]*)m", part)
        if m:
            apply(m.group(1), st)
        elif part:
            part = re.sub(r"\x1b[^a-zA-Z]*[a-zA-Z]", "", part)  # any other escape: dropped
            out.append('<span style="%s">%s</span>' % (style(st), html.escape(part)))
    print('<!doctype html><html><head><meta charset="utf-8"><title>%s</title><style>'
          'body{margin:0;background:%s}pre{margin:0;padding:8px;font:15px/1.25 "DejaVu Sans Mono",monospace;'
          'color:%s;background:%s;display:inline-block}</style></head><body><pre id="screen">%s</pre></body></html>'
          % (html.escape(title), BG, FG, BG, "".join(out)))


main()
