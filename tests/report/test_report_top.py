"""The answer on the first screen: for each shipped profile, ``advisor report``'s page opened in
headless chromium at 1400x900 holds, within its first 900 px, every setting ``advisor emit
--format env`` writes for that profile and the command that deploys them; the title names the
machine class and the date.

The layout check: a copy of the page, with the Content-Security-Policy meta removed (it blocks
scripts), gets a script that writes each marked element's bottom edge
(``getBoundingClientRect``) into the DOM, which ``--dump-dom`` then returns.
"""

from __future__ import annotations

import html
import re

import pytest
from browser_support import NEEDS_CHROMIUM, chromium, console_errors, listener  # noqa: F401
from report_support import run_advisor

from advisor.shipped import list_shipped

pytestmark = [pytest.mark.integration, NEEDS_CHROMIUM]

MEASURE = ("<script>for (const el of document.querySelectorAll('.set-name, #deploy')) {"
           "el.setAttribute('data-bottom', String(el.getBoundingClientRect().bottom"
           " + window.scrollY));}</script>")


def _emitted(name: str) -> list[str]:
    """The variables ``advisor emit --format env`` exports for shipped profile ``name``."""
    res = run_advisor("emit", "--format", "env", "--profile", f"@{name}")
    assert res.returncode == 0, res.stderr[-2000:]
    return sorted(set(re.findall(r"export (\w+)$", res.stdout, re.MULTILINE)))


@pytest.mark.parametrize("name", [p.name for p in list_shipped()])
def test_first_screen_holds_settings_and_deploy(name, tmp_path, listener):  # noqa: F811
    from advisor.profile import load_profile
    from advisor.shipped import shipped_path

    emitted = _emitted(name)
    assert emitted, f"{name}: emit writes nothing; the test would prove nothing"
    page = tmp_path / "report.html"
    res = run_advisor("report", "--profile", f"@{name}", "-o", str(page), timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    text = page.read_text()
    prof = load_profile(shipped_path(name))
    title = re.search(r"<title>(.*?)</title>", text).group(1)
    assert prof.facts.class_fingerprint() in title and prof.provenance.created[:10] in title

    probe_page = tmp_path / "measured.html"
    probe_page.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "",
                                 text).replace("</body>", MEASURE + "</body>"))
    dom = chromium(probe_page.as_uri(), tmp_path, listener.port, "--window-size=1400,900",
                   "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_errors(dom.stderr) == []
    names = re.findall(r'<code class="set-name" data-bottom="([\d.]+)">([^<]+)</code>',
                       dom.stdout)
    assert sorted({n for _, n in names}) == emitted, (names, emitted)
    low = [(n, y) for y, n in names if float(y) > 900]
    assert low == [], f"{name}: settings below the first screen: {low}"
    deploy = re.search(r'<code id="deploy" data-bottom="([\d.]+)">([^<]+)</code>', dom.stdout)
    assert deploy, "no deploy command measured"
    assert float(deploy.group(1)) <= 900, f"deploy command at {deploy.group(1)} px"
    assert html.unescape(deploy.group(2)) == (f"advisor emit --format env --profile @{name} "
                                              "> site.sh")
    assert listener.page_requests() == [], "the page made network requests"
