from __future__ import annotations

from thresher.corpus.html import html_to_text

PAGE = """<!doctype html><html><head><title>The  Page</title>
<style>p { color: red }</style><script>alert("SCRIPT")</script><meta charset="utf-8"></head>
<body><noscript>NOSCRIPT</noscript><template>TEMPLATE</template>
<h1>Main heading</h1>
<p>First   paragraph
spans lines.<p>Second paragraph<br>with a break.</p>
<div hidden>HIDDEN-ATTR <p>nested HIDDEN</p></div>
<span aria-hidden="true">HIDDEN-ARIA</span>
<span style="display: none">HIDDEN-DISPLAY</span>
<div style="color:red; visibility:hidden">HIDDEN-VISIBILITY</div>
<p style="font-size:0px">HIDDEN-FONT</p>
<span style="font-size:0.8em">small but visible</span>
<ul><li>one<li>two</ul>
<!-- COMMENT -->
<p>Tom &amp; Jerry</p>
</body></html>"""


def test_hidden_and_non_content_elements_are_dropped() -> None:
    text, title, counts = html_to_text(PAGE)
    for gone in ("HIDDEN", "SCRIPT", "NOSCRIPT", "TEMPLATE", "COMMENT", "color: red", "The Page"):
        assert gone not in text
    assert counts == {"hidden_html": 5}
    assert title == "The Page"
    assert "small but visible" in text and "Tom & Jerry" in text


def test_blocks_become_paragraphs_and_whitespace_collapses() -> None:
    text, _, _ = html_to_text(PAGE)
    paragraphs = text.split("\n\n")
    assert paragraphs[0] == "Main heading"
    assert paragraphs[1] == "First paragraph spans lines."
    assert paragraphs[2] == "Second paragraph\nwith a break."
    assert "one\ntwo" in text
    assert "\n\n\n" not in text


def test_title_falls_back_to_first_visible_h1() -> None:
    _, title, _ = html_to_text("<h1 hidden>Secret</h1><h1>Shown <b>title</b></h1><p>x</p>")
    assert title == "Shown title"
    assert html_to_text("<p>no heading</p>")[1] is None


def test_implicitly_closed_hidden_paragraph_does_not_hide_the_next() -> None:
    text, _, counts = html_to_text("<p hidden>secret<p>visible")
    assert text == "visible" and counts == {"hidden_html": 1}


def test_pre_keeps_whitespace_and_table_cells_are_separated() -> None:
    text, _, _ = html_to_text("<p>p</p><pre>  a\n    b</pre><table><tr><td>x<td>y<tr><td>z</table>")
    assert "  a\n    b" in text
    assert "x y\nz" in text


def _traced_steps(html: str) -> int:
    """Python steps (calls and lines, generator steps included) one conversion takes:
    a count of work that does not depend on the machine's speed."""
    import sys

    steps = 0

    def tracer(frame, event, arg):
        nonlocal steps
        steps += 1
        return tracer

    sys.settrace(tracer)
    try:
        html_to_text(html)
    finally:
        sys.settrace(None)
    return steps


def test_unmatched_end_tags_cost_linear_work() -> None:
    """Many open elements then many end tags matching none (the attack: 50k <div> then
    50k </span>): each end tag must not scan the open-element stack."""

    def page(n: int) -> str:
        return "<div>" * n + "x" + "</span>" * n

    small, large = _traced_steps(page(400)), _traced_steps(page(1600))
    assert large / small < 6  # linear: about 4; scanning the stack: about 14
    text, _, _ = html_to_text("<div>" * 50_000 + "deep" + "</span>" * 50_000)
    assert text == "deep"


def test_matched_end_tags_still_close_what_they_name() -> None:
    html = "<div><p>a<span>b</div>c<ul><li>d</li></ul>"
    text, _, _ = html_to_text(html)
    assert text == "ab\n\nc\n\nd"


def test_text_painted_in_its_background_or_placed_off_screen_is_hidden() -> None:
    """White on white, far off screen, or indented out of view: a reader never sees it."""
    hiders = [
        '<span style="color:#ffffff;background-color:#ffffff">X</span>',
        '<span style="color: white; background: #FFF">X</span>',
        '<span style="position:absolute;left:-9999px">X</span>',
        '<div style="position: fixed; top: -5000px">X</div>',
        '<span style="text-indent:-10000px">X</span>',
    ]
    for hider in hiders:
        text, _, counts = html_to_text(f"<p>seen {hider.replace('X', 'secret order')}</p>")
        assert "secret order" not in text and "seen" in text, hider
        assert counts.get("hidden_html", 0) >= 1, hider
    for visible in (
        '<span style="color:#000;background:#fff">kept</span>',
        '<span style="position:absolute;left:12px">kept</span>',
    ):
        text, _, _ = html_to_text(f"<p>seen {visible}</p>")
        assert "kept" in text, visible


def test_site_navigation_and_footer_are_dropped_where_the_page_marks_them() -> None:
    page = (
        '<div class="nav"><a href="/">Main page</a> | <a href="/random">Random article</a></div>'
        "<nav>Home | About</nav><ul role=navigation><li>Menu item</ul>"
        '<div id="breadcrumbs">Site &gt; People</div>'
        "<h1>Bokrin Zeinrast</h1><p>Bokrin Zeinrast was born in Stosstead.</p>"
        '<div class="navigation-notes">kept: a class that only starts like one</div>'
        '<table class="infobox"><tr><th>Born</th><td>1984</td></tr></table>'
        '<footer>From The Open Encyclopedia.</footer><div class="site-footer">Privacy</div>'
    )
    text, title, counts = html_to_text(page)
    for gone in ("Main page", "Random", "Home", "Menu item", "Site >", "Encyclopedia", "Privacy"):
        assert gone not in text
    assert text.startswith("Bokrin Zeinrast\n\nBokrin Zeinrast was born in Stosstead.")
    assert "kept: a class" in text and "Born 1984" in text
    assert title == "Bokrin Zeinrast" and counts == {}  # chrome is no hidden text


def test_iframe_and_object_fallback_content_is_dropped() -> None:
    """A browser shows the framed page or the embedded object, never the markup inside
    the element: text there is invisible to a reader, so it is not indexed."""
    page = (
        "<p>Visible before.</p>"
        '<iframe src="https://example.org/frame">FRAME-FALLBACK <p>nested FRAME</p></iframe>'
        '<object data="movie.swf"><param name="q" value="1">OBJECT-FALLBACK'
        "<p>nested OBJECT</p></object>"
        "<p>Visible after.</p>"
    )
    text, _, _ = html_to_text(page)
    assert "FRAME" not in text and "OBJECT" not in text
    assert text == "Visible before.\n\nVisible after."
