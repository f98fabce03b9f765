"""The link settings' theme swatches show the cards' own colours: each theme's rule in
app.css is the gradient and box colour ``web/cards/themes.py`` draws with, and the macro
(``templates/card_themes.html``) names a rule that exists for every theme."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2

from anonbox.links.schemas import CARD_THEMES
from anonbox.web.cards.themes import THEMES

WEB = Path(__file__).resolve().parents[2] / "src" / "anonbox" / "web"


def _rule(css: str, selector: str) -> str:
    found = re.search(rf"{re.escape(selector)}\s*\{{([^}}]*)\}}", css)
    assert found, f"no rule for {selector} in app.css"
    return found.group(1)


def test_every_swatch_has_its_themes_colours() -> None:
    css = (WEB / "static" / "app.css").read_text(encoding="utf-8")
    assert set(CARD_THEMES) == set(THEMES)
    for name in CARD_THEMES:
        rule = _rule(css, f".theme-swatch-{name}")
        theme = THEMES[name]
        assert f"background: {theme.swatch};" in rule, (name, rule)
        box = re.search(r"--swatch-box:\s*(#[0-9a-f]{6})", rule)
        assert (box.group(1) if box else "#ffffff") == "#{:02x}{:02x}{:02x}".format(*theme.box)


def test_the_macro_draws_a_swatch_with_a_rule() -> None:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(WEB / "templates"), autoescape=True)
    macro = env.get_template("card_themes.html").module.theme_swatch  # type: ignore[attr-defined]
    css = (WEB / "static" / "app.css").read_text(encoding="utf-8")
    for name in CARD_THEMES:
        html = str(macro(name))
        assert 'aria-hidden="true"' in html
        [swatch] = re.findall(r'class="theme-swatch (theme-swatch-[a-z]+)"', html)
        _rule(css, f".{swatch}")
