// The replay page with JavaScript: the positions are fetched once as JSON, page after page
// (each answer names the ply its next page starts at), and the page steps through them without
// reloading: buttons, the slider, the move list and the keyboard (← → one ply, Home / End the
// ends). A ply whose page has not arrived yet is loaded as a page of its own by its link.
"use strict";

(function () {
  const box = document.getElementById("replay");
  if (!box) return;
  const board = document.getElementById("board");
  const slider = document.getElementById("ply-slider");
  const out = document.getElementById("ply-out");
  const moves = document.getElementById("moves");
  const toMove = document.getElementById("to-move");
  let positions = null;
  let ply = Number(box.dataset.ply);
  const last = Number(box.dataset.last);

  function setLink(id, target) {
    const link = document.getElementById(id);
    link.href = "?ply=" + target;
    link.dataset.ply = target;
  }

  function have(target) {
    return positions !== null && positions[target] !== undefined;
  }

  function show(next) {
    const target = Math.max(0, Math.min(last, next));
    if (!have(target)) return;
    ply = target;
    const p = positions[ply];
    if (p.board) {
      board.innerHTML = p.board;
    } else {
      board.innerHTML = "";
      const pre = document.createElement("pre");
      pre.className = "text-board";
      pre.textContent = p.text;
      board.appendChild(pre);
    }
    slider.value = ply;
    out.textContent = ply;
    box.dataset.ply = ply;
    setLink("prev", Math.max(0, ply - 1));
    setLink("next", Math.min(last, ply + 1));
    p.scores.forEach((score, seat) => {
      const cell = document.querySelector("[data-score='" + seat + "']");
      if (cell) cell.textContent = Number.isInteger(score)
          ? score.toLocaleString("en-US")
          : score.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
      const row = document.querySelector("tr[data-seat='" + seat + "']");
      if (row) row.classList.toggle("to-move", p.to_move === seat);
    });
    toMove.textContent = p.to_move === null ? "Game over." : "Seat " + p.to_move + " to move.";
    moves.querySelectorAll("a.current").forEach((a) => {
      a.classList.remove("current");
      a.removeAttribute("aria-current");
    });
    const current = moves.querySelector("a[data-ply='" + ply + "']");
    if (current) {
      current.classList.add("current");
      current.setAttribute("aria-current", "step");
      current.scrollIntoView({ block: "nearest" });
    }
    history.replaceState(null, "", "?ply=" + ply);
  }

  function step(event, target) {
    if (!have(Math.max(0, Math.min(last, target)))) return; // not loaded: the link loads it
    event.preventDefault();
    show(target);
  }

  document.getElementById("first").addEventListener("click", (e) => step(e, 0));
  document.getElementById("prev").addEventListener("click", (e) => step(e, ply - 1));
  document.getElementById("next").addEventListener("click", (e) => step(e, ply + 1));
  document.getElementById("last").addEventListener("click", (e) => step(e, last));
  slider.addEventListener("input", () => show(Number(slider.value)));
  moves.addEventListener("click", (e) => {
    const link = e.target.closest("a[data-ply]");
    if (link) step(e, Number(link.dataset.ply));
  });
  document.addEventListener("keydown", (e) => {
    if (e.target === slider || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.target.closest && e.target.closest("input, select, textarea")) return;
    const target = { ArrowLeft: ply - 1, ArrowRight: ply + 1, Home: 0, End: last }[e.key];
    if (target !== undefined) step(e, target);
  });

  function load(start) {
    fetch(box.dataset.positions + "?start=" + start)
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(String(r.status)))))
      .then((data) => {
        positions = positions || [];
        data.positions.forEach((p) => { positions[p.ply] = p; });
        if (data.next !== null) {
          load(data.next);
          return;
        }
        box.dataset.ready = "1";
        document.getElementById("key-hint").hidden = false;
      })
      .catch(() => {}); // the links still work: each loads the page at its ply
  }
  load(0);
})();
