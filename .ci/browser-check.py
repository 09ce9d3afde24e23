"""Open the built documentation site in a real headless Chromium and check what it renders.

    python3 .ci/browser-check.py [--site build/site] [--screenshots build/screenshots]

The site is served on localhost; each checked page (the front page, the errata page, a results page)
is loaded in Debian's Chromium, screenshotted, and inspected after rendering: its headings, its
tables and its images must be there and visible (a non-zero box), every image must have loaded
(`naturalWidth` > 0), which a broken or missing figure fails, and its math must be typeset: no TeX source
left in its text (`^{`, `_{`, `\\(`), no formula MathJax refused or never reached. The inspection runs in
the page itself: a small wrapper page on the same server loads the page in an iframe, measures it with the DOM API and
writes what it found into its own body, which `chromium --dump-dom` prints. Exit 0 when every required
page passes, 1 otherwise, 2 on bad input (no site, no Chromium). Standard library only.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

# why kept: ROOT and a list of literal strings, like tests' module lists: alike in shape, nothing shared
ROOT = Path(__file__).resolve().parents[1]
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]
WRAPPER = "__tmcheck_check__.html"
# The inspection, run in the wrapper once the page in its iframe has loaded (and its images with it).
SCRIPT = """
<!doctype html><html><body><script>
const page = decodeURIComponent(location.hash.slice(1));
const frame = document.createElement('iframe');
frame.width = 1280; frame.height = 3000; frame.src = page;
const typeset = w => (w.MathJax && w.MathJax.startup && w.MathJax.startup.promise) || Promise.resolve();
frame.onload = () => setTimeout(() => typeset(frame.contentWindow).then(() => {
  const d = frame.contentDocument, w = frame.contentWindow;
  const shown = e => { const r = e.getBoundingClientRect(), s = w.getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const text = e => e.textContent.replace(/\\u00b6/g, '').trim();
  const main = d.querySelector('.md-content') || d.body;
  const out = {
    title: d.title,
    h1: [...main.querySelectorAll('h1')].filter(shown).map(text),
    h2: [...main.querySelectorAll('h2')].filter(shown).map(text),
    tables: [...main.querySelectorAll('table')].filter(shown).map(t => t.rows.length),
    images: [...main.querySelectorAll('img')].map(i => ({src: i.getAttribute('src'), complete: i.complete,
      naturalWidth: i.naturalWidth, shown: shown(i)})),
    math: main.querySelectorAll('mjx-container').length,
    math_errors: main.querySelectorAll('mjx-merror').length,
    untypeset: [...main.querySelectorAll('.arithmatex')].filter(e => !e.querySelector('mjx-container')).length,
  };
  // TeX the reader sees as source: the page's text less typeset math and code.
  const prose = main.cloneNode(true);
  prose.querySelectorAll('mjx-container, code, pre, script, style').forEach(e => e.remove());
  out.raw_tex = (prose.textContent.match(/.{0,30}(?:[\\^_]\\{|\\\\\\(|\\\\\\[|\\\\frac).{0,30}/g) || []).slice(0, 5);
  const pre = document.createElement('pre'); pre.id = 'tmcheck-result';
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
}), 300);
document.body.appendChild(frame);
</script></body></html>
"""


@dataclass
class Page:
    """What a page must render: its h1 (a substring), h2 substrings, and how many tables and images."""

    name: str
    path: str  # under the site
    h1: str
    h2: list[str] = field(default_factory=list)
    tables: int = 0
    images: int = 0
    math: int = 0  # typeset formulas at least
    source: str | None = None  # the markdown page it is built from (a page of another owner may not exist yet)


PAGES = [
    Page("front", "index.html", "tmcheck", ["Results"], tables=1, images=1, source="docs/index.md"),
    Page("errata", "theory/claims/index.html", "", [], tables=0, images=0, math=50, source="docs/theory/claims.md"),
    Page("lemma1", "theory/lemma1-theorem2/index.html", "Lemma 1", [], tables=2, math=5),
    Page("results", "results/pretrain/index.html", "Figure 2", ["The report"], tables=3, images=2),
]


def find_chromium(explicit: str | None = None) -> str:
    for cand in (explicit, "chromium", "chromium-browser", "google-chrome"):
        if cand and (path := shutil.which(cand)):
            return path
    raise FileNotFoundError("no Chromium found: apt-get install chromium (or pass --chromium PATH)")


@functools.cache
def _quiet_handler(directory: str):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=directory, **kwargs)

        def log_message(self, *args):  # no request log on stderr
            pass

    return Handler


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """The site on a free localhost port, with the inspection wrapper beside it; (server, base URL)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _quiet_handler(str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def chromium(binary: str, *args: str, profile: Path, timeout: float = 60) -> str:
    cmd = [binary, *FLAGS, f"--user-data-dir={profile}", *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        raise RuntimeError(f"chromium exited {res.returncode}: {res.stderr.strip().splitlines()[-1:]}")
    return res.stdout


def inspect(binary: str, base: str, page: Page, screenshots: Path, profile: Path) -> dict:
    """Screenshot the page, then measure what it renders (through the wrapper page)."""
    url = base + page.path
    shot = screenshots / f"{page.name}.png"
    chromium(binary, f"--screenshot={shot}", "--window-size=1280,2400", url, profile=profile)
    dom = chromium(binary, "--virtual-time-budget=20000", "--dump-dom", f"{base}{WRAPPER}#{page.path}", profile=profile)
    m = re.search(r'<pre id="tmcheck-result">(.*?)</pre>', dom, re.S)
    if not m:
        return {"error": "the page did not finish loading in the browser"}
    import html

    found = json.loads(html.unescape(m.group(1)))
    found["screenshot"] = str(shot) if shot.is_file() and shot.stat().st_size > 0 else None
    return found


def problems(page: Page, found: dict) -> list[str]:
    """What the rendered page lacks against its specification (empty when it passes)."""
    if "error" in found:
        return [found["error"]]
    out = []
    if not found["h1"]:
        out.append("no visible h1")
    elif page.h1 and not any(page.h1 in h for h in found["h1"]):
        out.append(f"h1 {found['h1']!r} does not contain {page.h1!r}")
    for want in page.h2:
        if not any(want in h for h in found["h2"]):
            out.append(f"no visible h2 containing {want!r} (h2: {found['h2']!r})")
    if len(found["tables"]) < page.tables:
        out.append(f"{len(found['tables'])} visible tables, {page.tables} expected")
    if any(rows < 2 for rows in found["tables"]):
        out.append("a table without rows")
    imgs = found["images"]
    if len(imgs) < page.images:
        out.append(f"{len(imgs)} images, {page.images} expected")
    for img in imgs:
        if not img["complete"] or img["naturalWidth"] <= 0:
            out.append(f"image {img['src']} did not load")
        elif not img["shown"]:
            out.append(f"image {img['src']} is not visible")
    if found.get("math", 0) < page.math:
        out.append(f"{found.get('math', 0)} typeset formulas, {page.math} expected")
    if found.get("untypeset"):
        out.append(f"{found['untypeset']} formulas were not typeset (MathJax did not run)")
    if found.get("math_errors"):
        out.append(f"MathJax could not typeset {found['math_errors']} formulas")
    if found.get("raw_tex"):
        out.append(f"raw TeX on the page: {found['raw_tex']!r}")
    if not found.get("screenshot"):
        out.append("no screenshot was written")
    return out


def check(site: Path, screenshots: Path, pages: list[Page] = PAGES, binary: str | None = None, root: Path = ROOT):
    """{page name: {"problems": [...], "found": {...}} or {"skipped": why}} for every page."""
    if not (site / "index.html").is_file():
        raise FileNotFoundError(f"{site} holds no built site (run `make docs` first)")
    binary = find_chromium(binary)
    screenshots.mkdir(parents=True, exist_ok=True)
    (site / WRAPPER).write_text(SCRIPT, encoding="utf-8")
    server, base = serve(site)
    report = {}
    try:
        with tempfile.TemporaryDirectory(prefix="tmcheck-chromium-") as profile:
            for page in pages:
                if page.source and not (root / page.source).is_file():
                    report[page.name] = {"skipped": f"{page.source} does not exist (its owner's page is not merged)"}
                    continue
                found = inspect(binary, base, page, screenshots, Path(profile))
                report[page.name] = {"problems": problems(page, found), "found": found}
    finally:
        server.shutdown()
        (site / WRAPPER).unlink(missing_ok=True)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "build" / "site")
    parser.add_argument("--screenshots", type=Path, default=ROOT / "build" / "screenshots")
    parser.add_argument("--chromium", default=None)
    args = parser.parse_args(argv)
    try:
        report = check(args.site, args.screenshots, binary=args.chromium)
    except (FileNotFoundError, RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"browser-check: {exc}", file=sys.stderr)
        return 2
    failed = 0
    for name, r in report.items():
        if "skipped" in r:
            print(f"skip {name}: {r['skipped']}")
            continue
        f = r["found"]
        summary = (
            f"h1 {f.get('h1')}, {len(f.get('tables', []))} tables, "
            f"{sum(i['naturalWidth'] > 0 for i in f.get('images', []))} images loaded; screenshot {f.get('screenshot')}"
        )
        if r["problems"]:
            failed += 1
            print(f"FAIL {name}: " + "; ".join(r["problems"]))
        else:
            print(f"ok   {name}: {summary}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
