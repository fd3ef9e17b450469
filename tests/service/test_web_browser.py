"""The dashboard in a real browser: Playwright driving Debian's Chromium against a real API
server, in local mode (SQLite, no broker) and with Celery workers (private Redis and
PostgreSQL, ``service_fixtures``).

Every wait is on the page's observed state (Playwright's ``expect`` polls the DOM), never on
the clock. Screenshots of each page at 375 and 1280 px go to ``screenshots/dashboard/``
(git-ignored) at the top of the checkout.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from analysis_data import played_batch, store_batch
from service_fixtures import ROOT, Api, pg_cluster, redis_server, service_factory

__all__ = ["pg_cluster", "redis_server", "service_factory"]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

KEY = "dashboard-test-key"
SHOTS = ROOT / "screenshots" / "dashboard"
WIDTHS = (375, 1280)
DONE_TIMEOUT = 90_000
"""Upper bound (ms) for a small batch to finish on a loaded machine; the wait ends as soon as
the page shows it."""


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium is not installed (scripts/test installs the Debian package)")
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture(scope="module")
def local_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """``uvicorn api.app:app`` on a fresh SQLite file, no broker (local mode), with a key."""
    from storage.db import upgrade

    folder = tmp_path_factory.mktemp("dashboard")
    url = f"sqlite:///{folder}/dashboard.db"
    upgrade(url)
    env = {k: v for k, v in os.environ.items() if k not in {"BROKER_URL", "API_KEY_READS"}}
    env.update(DATABASE_URL=url, PYTHONPATH=str(ROOT), API_KEY=KEY)
    api = Api(env, folder)
    api.database_url = url  # type: ignore[attr-defined]
    yield api
    api.stop()


def shoot(tab: Any, name: str) -> None:
    """Screenshots of the page as it is, at each width (full page)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        tab.set_viewport_size({"width": width, "height": 900})
        tab.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
    tab.set_viewport_size({"width": 1280, "height": 900})


def fill_form(tab: Any, base: str, game: str, agents: list[str], matches: str) -> None:
    tab.goto(f"{base}/ui/new?game={game}")
    tab.locator("#api_key").fill(KEY)
    for seat, agent in enumerate(agents):
        tab.locator(f"#agent-{seat}").select_option(agent)
    tab.locator("#matches").fill(matches)


def submit_watch_and_replay(tab: Any, api: Api, mode: str) -> None:
    """Submit a batch from the form, watch it reach done without a reload, read its report,
    then replay one of its matches stepping forward and back."""
    fill_form(tab, api.url, "alquerque", ["random", "easy"], "24")
    shoot(tab, f"{mode}-new")
    tab.locator("#submit").click()
    tab.wait_for_url("**/ui/batches/*")
    batch_id = tab.url.rstrip("/").split("/")[-1]
    tab.evaluate("window.__sameDocument = true")  # gone if the page reloads
    status = tab.locator("#progress [data-cell='status']")
    expect(status).to_have_text("done", timeout=DONE_TIMEOUT)
    assert tab.evaluate("window.__sameDocument === true")
    expect(tab.locator("#progress [data-cell='count']")).to_have_text("24 / 24")
    # The report was swapped in without a reload: the same figures as the HTML report.
    expect(tab.locator("#report-body #fpa")).to_contain_text("First-player advantage")
    standalone = httpx.get(f"{api.url}/batches/{batch_id}/report.html").text
    fpa = re.search(r'<p id="fpa">(.*?)</p>', standalone)
    assert fpa is not None
    expect(tab.locator("#report-body #fpa")).to_have_text(re.sub(r"<[^>]+>", "", fpa[1]))
    expect(tab.locator("#report-body #fig-seats svg")).to_be_visible()
    assert tab.evaluate("window.__sameDocument === true")
    shoot(tab, f"{mode}-batch")

    tab.goto(api.url + "/")
    expect(tab.locator(f"tr[data-batch='{batch_id}'] [data-cell='status']")).to_have_text("done")
    shoot(tab, f"{mode}-batches")

    stored = httpx.get(f"{api.url}/batches/{batch_id}/matches/0").json()
    moves = stored["moves"]
    tab.goto(f"{api.url}/ui/batches/{batch_id}")
    tab.locator("a[href$='/matches/0']").click()
    replay = tab.locator("#replay")
    expect(replay).to_have_attribute("data-ready", "1")
    board = tab.locator("#board svg")

    def drawn() -> str:
        return str(board.evaluate("svg => svg.outerHTML"))

    start = drawn()
    assert tab.locator("#board circle.piece").count() == 24  # 12 a side at the start
    tab.locator("#next").click()
    expect(replay).to_have_attribute("data-ply", "1")
    after_one = drawn()
    assert after_one != start
    current = tab.locator("#moves a.current")
    expect(current).to_have_text(moves[0])
    tab.keyboard.press("ArrowRight")
    expect(replay).to_have_attribute("data-ply", "2")
    expect(current).to_have_text(moves[1])
    assert drawn() not in (start, after_one)
    tab.keyboard.press("ArrowLeft")
    expect(replay).to_have_attribute("data-ply", "1")
    expect(current).to_have_text(moves[0])
    assert drawn() == after_one
    tab.locator("#first").click()
    expect(replay).to_have_attribute("data-ply", "0")
    assert drawn() == start
    tab.locator("#last").click()
    expect(replay).to_have_attribute("data-ply", str(len(moves)))
    expect(current).to_have_text(moves[-1])
    # The scores shown at the end are the stored ones (pieces left, per seat).
    for seat, score in enumerate(stored["scores"]):
        shown = f"{int(score):,}" if float(score).is_integer() else f"{score:,.1f}"
        expect(tab.locator(f"[data-score='{seat}']")).to_have_text(shown)
    shoot(tab, f"{mode}-replay")


def test_local_mode_submit_watch_report_and_replay(page: Any, local_api: Api) -> None:
    submit_watch_and_replay(page, local_api, "local")


def test_a_bad_value_shows_the_apis_message_beside_its_field(page: Any, local_api: Api) -> None:
    fill_form(page, local_api.url, "alquerque", ["mcts", "random"], "10")
    page.locator("#param-0-mcts-iterations").fill("0")
    page.locator("#submit").click()
    # The API's own answer to the same request, asked directly.
    direct = httpx.post(
        f"{local_api.url}/batches",
        json={
            "game": "alquerque",
            "players": 2,
            "matches": 10,
            "agents": [{"name": "mcts", "iterations": "0"}, "random"],
        },
        headers={"Authorization": f"Bearer {KEY}"},
    ).json()
    assert direct["field"] == "agents[0].iterations"
    beside = page.locator("[data-error-for='agents[0].mcts.iterations']")
    expect(beside).to_have_text(direct["message"])
    expect(page.locator("#param-0-mcts-iterations")).to_have_attribute("aria-invalid", "true")
    assert "/ui/new" in page.url

    page.locator("#param-0-mcts-iterations").fill("")
    page.locator("#matches").fill("0")
    page.locator("#submit").click()
    direct = httpx.post(
        f"{local_api.url}/batches",
        json={"game": "alquerque", "players": 2, "matches": 0, "agents": ["mcts", "random"]},
        headers={"Authorization": f"Bearer {KEY}"},
    ).json()
    expect(page.locator("[data-error-for='matches']")).to_have_text(direct["message"])
    expect(page.locator("[data-error-for='agents[0].mcts.iterations']")).to_be_empty()
    shoot(page, "local-new-error")

    page.locator("#matches").fill("10")
    page.locator("#variation").select_option("openings")
    page.locator("#variation-plies").fill("99")
    page.locator("#submit").click()
    expect(page.locator("[data-error-for='variation.plies']")).to_have_text(
        "variation.plies must be between 0 and 20, not 99"
    )
    expect(page.locator("#variation-plies")).to_have_attribute("aria-invalid", "true")


def test_cancel_a_running_batch_from_the_list(page: Any, local_api: Api) -> None:
    slow = {
        "game": "alquerque",
        "agents": [{"name": "mcts", "iterations": 30}, "random"],
        "matches": 100_000,
        "chunk_size": 2,
    }
    answer = httpx.post(
        f"{local_api.url}/batches", json=slow, headers={"Authorization": f"Bearer {KEY}"}
    )
    assert answer.status_code == 202, answer.text
    batch_id = answer.json()["id"]
    page.goto(local_api.url + "/")
    page.locator("#key-input").fill(KEY)
    row = page.locator(f"tr[data-batch='{batch_id}']")
    expect(row.locator("[data-cell='status']")).to_have_text("running", timeout=DONE_TIMEOUT)
    shoot(page, "local-batches-running")
    row.locator("button.cancel").click()
    expect(row.locator("[data-cell='status']")).to_have_text("cancelled")
    expect(page.locator("#message")).to_have_text(f"Batch {batch_id} cancelled.")
    assert httpx.get(f"{local_api.url}/batches/{batch_id}").json()["status"] == "cancelled"


def test_compare_page_shows_both_batches_side_by_side(page: Any, local_api: Api) -> None:
    """Seat 0 wins 20 of 30 in batch a and 12 of 30 in b: the first-player advantage differs
    by 8/30 = 26.7 %."""
    ids = []
    for wins in (20, 12):
        outcomes = [((1.0, 0.0), (1.0, 0.0))] * wins + [((0.0, 1.0), (0.0, 1.0))] * (30 - wins)
        _, batch_id = store_batch(
            local_api.database_url,
            game="alquerque",
            players=2,
            labels=["random", "easy"],
            outcomes=outcomes,
        )
        ids.append(batch_id)
    page.goto(f"{local_api.url}/ui/compare")
    page.locator("#c-a").fill(ids[0])
    page.locator("#c-b").fill(ids[1][:6])
    page.get_by_role("button", name="Compare").click()
    row = page.locator("table.compare tbody tr").first
    expect(row).to_contain_text("First-player advantage")
    expect(row.locator("td").nth(0)).to_have_text("16.7%")
    expect(row.locator("td").nth(1)).to_have_text("-10.0%")
    expect(row.locator("td").nth(2)).to_have_text("26.7%")
    shoot(page, "local-compare")


def test_with_javascript_off_the_form_submits_and_the_replay_steps_by_links(
    browser: Any, local_api: Api
) -> None:
    context = browser.new_context(java_script_enabled=False)
    tab = context.new_page()
    try:
        fill_form(tab, local_api.url, "alveoles", ["random", "greedy"], "4")
        tab.locator("#submit").click()
        tab.wait_for_url("**/ui/batches/*")
        expect(tab.locator("h1")).to_have_text(re.compile(r"^Batch [0-9a-f]{12}$"))
        # A batch played in this process, to replay without waiting for the server's.
        batch_id = played_batch(local_api.database_url, "alveoles", ["random", "greedy"], 2)
        tab.goto(f"{local_api.url}/ui/batches/{batch_id}")
        expect(tab.locator("#progress [data-cell='status']")).to_have_text("done")
        expect(tab.locator("#report-body #fpa")).to_contain_text("First-player advantage")
        moves = httpx.get(f"{local_api.url}/batches/{batch_id}/matches/1").json()["moves"]
        tab.locator("a[href$='/matches/1']").click()
        plates = tab.locator("#board line.plate")
        expect(plates).to_have_count(0)
        tab.locator("#next").click()
        tab.wait_for_url("**?ply=1")
        expect(plates).to_have_count(1)
        expect(tab.locator("#moves a.current")).to_have_text(moves[0])
        tab.locator("#next").click()
        tab.wait_for_url("**?ply=2")
        expect(plates).to_have_count(2)
        expect(tab.locator("#moves a.current")).to_have_text(moves[1])
        tab.locator("#prev").click()
        tab.wait_for_url("**?ply=1")
        expect(tab.locator("#moves a.current")).to_have_text(moves[0])
        shoot(tab, "nojs-replay")
    finally:
        context.close()


@pytest.mark.integration
def test_celery_workers_submit_watch_report_and_replay(page: Any, service_factory: Any) -> None:
    service = service_factory(workers=1, API_KEY=KEY)
    submit_watch_and_replay(page, service.api, "celery")
