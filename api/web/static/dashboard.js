// Live parts of every dashboard page: the API key kept in this tab's session storage, progress
// of queued and running batches polled every two seconds, and cancel buttons. The pages are
// complete without this script; it only keeps them current and sends writes with the key.
"use strict";

const KEY = "playtester.apiKey";
const POLL_MS = 2000;
const ROOT = document.body.dataset.root || "";

function apiKey() {
  return sessionStorage.getItem(KEY) || "";
}

function authHeaders() {
  const key = apiKey();
  return key ? { Authorization: "Bearer " + key } : {};
}

function setupKeyBox() {
  const box = document.getElementById("keybox");
  const input = document.getElementById("key-input");
  const formKey = document.getElementById("api_key");
  if (formKey) {
    // The form has its own key field; keep both in step.
    formKey.value = apiKey();
    formKey.addEventListener("input", () => sessionStorage.setItem(KEY, formKey.value));
    return;
  }
  if (!box || !input) return;
  box.hidden = false;
  input.value = apiKey();
  input.addEventListener("input", () => sessionStorage.setItem(KEY, input.value));
}

function say(text) {
  const message = document.getElementById("message");
  if (message) message.textContent = text;
}

function fill(container, row) {
  const cells = {};
  container.querySelectorAll("[data-cell]").forEach((el) => (cells[el.dataset.cell] = el));
  if (cells.status) {
    cells.status.textContent = row.status + (row.stopped_early ? " (stopped early)" : "");
    cells.status.className = "status status-" + row.status;
  }
  if (cells.bar) {
    cells.bar.max = row.matches;
    cells.bar.value = row.finished;
    cells.bar.textContent = Math.round(row.fraction * 100) + " %";
  }
  if (cells.count) {
    const n = (x) => x.toLocaleString("en-US");
    cells.count.textContent =
      n(row.finished) + " / " + n(row.matches) + (row.failed ? " (" + n(row.failed) + " failed)" : "");
  }
  if (cells.rate) cells.rate.textContent = row.rate_text;
  if (cells.eta) cells.eta.textContent = row.eta_text;
  if (cells.headline) cells.headline.textContent = row.headline || "—";
  container.dataset.live = row.live ? "1" : "0";
  if (!row.live) {
    container.querySelectorAll("[data-cancel]").forEach((b) => b.remove());
  }
}

async function refreshBatchPage() {
  // The batch finished: swap in its report and match list from a fresh copy of this page.
  const response = await fetch(location.href, { headers: { Accept: "text/html" } });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  for (const id of ["report-body", "matches"]) {
    const now = document.getElementById(id);
    const next = fresh.getElementById(id);
    if (now && next) now.innerHTML = next.innerHTML;
  }
  document.body.dataset.finished = "1";
}

async function poll() {
  const live = [...document.querySelectorAll("[data-batch][data-live='1']")];
  if (!live.length) return;
  try {
    const ids = live.map((el) => el.dataset.batch).join(",");
    const response = await fetch(ROOT + "/ui/live?ids=" + ids, { headers: authHeaders() });
    if (response.ok) {
      const { items } = await response.json();
      for (const row of items) {
        document.querySelectorAll("[data-batch='" + row.id + "']").forEach((el) => {
          fill(el, row);
          if (!row.live && el.id === "progress") refreshBatchPage();
        });
      }
    }
  } catch (err) {
    say("Could not reach the server; retrying.");
  }
  setTimeout(poll, POLL_MS);
}

async function cancel(button) {
  const id = button.dataset.cancel;
  button.disabled = true;
  const response = await fetch(ROOT + "/batches/" + id + "/cancel", {
    method: "POST",
    headers: authHeaders(),
  });
  if (response.ok) {
    say("Batch " + id + " cancelled.");
    const row = await response.json();
    document.querySelectorAll("[data-batch='" + id + "'] [data-cell='status']").forEach((el) => {
      el.textContent = row.status;
      el.className = "status status-" + row.status;
    });
  } else {
    let message = "cancel failed (" + response.status + ")";
    try {
      message = (await response.json()).message || message;
    } catch (err) {}
    say(message);
    button.disabled = false;
  }
}

function setupCancel() {
  document.querySelectorAll("[data-cancel]").forEach((button) => {
    button.hidden = false;
    button.addEventListener("click", () => cancel(button));
  });
}

document.documentElement.classList.add("js");
setupKeyBox();
setupCancel();
const note = document.getElementById("live-note");
if (note && document.querySelector("[data-live='1']")) note.hidden = false;
setTimeout(poll, POLL_MS);
