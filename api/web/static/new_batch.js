// The new-batch form with JavaScript: the game and player pickers reload the form at once,
// only the chosen agent's parameters are shown, and the form is sent with the API key as a
// Bearer header; an error answer {message, field} is shown beside the field it names.
"use strict";

(function () {
  const ROOT = document.body.dataset.root || "";
  const KEY = "playtester.apiKey";
  const pick = document.getElementById("pick-game");
  const form = document.getElementById("batch-form");

  pick.querySelectorAll("select").forEach((select) =>
    select.addEventListener("change", () => {
      if (select.name === "game") pick.elements.players.value = "";
      pick.submit();
    }),
  );

  function showParams() {
    form.querySelectorAll(".agent-pick").forEach((select) => {
      form.querySelectorAll(".params[data-seat='" + select.dataset.seat + "']").forEach((set) => {
        set.hidden = set.dataset.agent !== select.value;
      });
    });
  }
  form.querySelectorAll(".agent-pick").forEach((s) => s.addEventListener("change", showParams));
  showParams();

  function slots() {
    const found = {};
    form.querySelectorAll("[data-error-for]").forEach((el) => (found[el.dataset.errorFor] = el));
    return found;
  }

  // Same rule as api.web.forms.error_slot: the field's slot, else its nearest parent's.
  function slotFor(field, known) {
    if (!field) return known.form;
    const param = /^agents\[(\d+)\]\.(\w+)$/.exec(field);
    if (param) {
      const chosen = form.elements["agent." + param[1]].value;
      const candidate = "agents[" + param[1] + "]." + chosen + "." + param[2];
      if (known[candidate]) return known[candidate];
    }
    while (field) {
      if (known[field]) return known[field];
      const cut = Math.max(field.lastIndexOf("."), field.lastIndexOf("["));
      field = cut > 0 ? field.slice(0, cut) : "";
    }
    return known.form;
  }

  function clearErrors() {
    form.querySelectorAll("[data-error-for]").forEach((el) => (el.textContent = ""));
    form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors();
    const data = new FormData(form);
    const key = data.get("api_key") || "";
    sessionStorage.setItem(KEY, key);
    data.delete("api_key");
    const headers = { Accept: "application/json" };
    if (key) headers.Authorization = "Bearer " + key;
    const button = document.getElementById("submit");
    button.disabled = true;
    try {
      const response = await fetch(ROOT + "/ui/new", {
        method: "POST",
        headers,
        body: new URLSearchParams(data),
      });
      const answer = await response.json();
      if (response.status === 202) {
        location.assign(answer.url);
        return;
      }
      const slot = slotFor(answer.field, slots());
      slot.textContent = answer.message;
      const input = form.querySelector("[aria-describedby='" + slot.id + "']");
      if (input) {
        input.setAttribute("aria-invalid", "true");
        input.focus();
      }
    } catch (err) {
      slots().form.textContent = "Could not reach the server: " + err;
    }
    button.disabled = false;
  });
})();
