// docket verify — annotator page. Vanilla JS, no build step.
// Every piece of annotator or model text is written with textContent, never innerHTML.
"use strict";

(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (selector) => document.querySelector(selector);
  const state = { record: newRecord(), generation: 0 };

  function newRecord() {
    const id = "dlg-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2, 8);
    return { id: id, turns: [], fields: {} };
  }

  // Build an element; text goes through textContent only.
  function el(tag, props, text) {
    const node = document.createElement(tag);
    Object.entries(props || {}).forEach(([key, value]) => {
      if (key === "class") node.className = value;
      else if (key.startsWith("data-")) node.setAttribute(key, value);
      else node[key] = value;
    });
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function setStatus(text, isError) {
    const status = $("#verify-status");
    status.textContent = text;
    status.classList.toggle("error", Boolean(isError));
  }

  // The record's named fields (scenario, ...) as typed into the page right now.
  function currentFields() {
    const fields = {};
    document.querySelectorAll("textarea.record-field").forEach((area) => {
      if (area.value.trim()) fields[area.dataset.field] = area.value;
    });
    return fields;
  }

  function renderTurns() {
    const list = $("#turns");
    list.replaceChildren();
    state.record.turns.forEach((turn, index) => {
      const item = el("li", { class: "turn", "data-index": String(index) });
      item.append(el("span", { class: "role role-" + turn.role }, turn.role));
      item.append(el("span", { class: "text" }, turn.text));
      list.append(item);
    });
  }

  async function postJSON(url, body) {
    const response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(data.error || response.statusText);
    return data;
  }

  // Parse a Server-Sent Events stream read from fetch (EventSource cannot POST).
  async function readEvents(response, onEvent) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const blocks = buffer.split(/\r?\n\r?\n/);
      buffer = blocks.pop();
      blocks.forEach((block) => {
        let event = "message";
        const data = [];
        block.split(/\r?\n/).forEach((line) => {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        });
        if (data.length) onEvent(event, JSON.parse(data.join("\n")));
      });
    }
  }

  async function verify(body) {
    const generation = ++state.generation;
    $("#results").replaceChildren();
    setStatus("Checking…");
    const started = performance.now();
    const response = await fetch("/annotate/verify/stream", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, Accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      setStatus("Could not check: " + (data.error || response.statusText), true);
      return;
    }
    await readEvents(response, (event, data) => {
      if (generation !== state.generation) return; // a newer check replaced this one
      if (event === "result") addResult(data);
      else if (event === "verdict") { showVerdict(data, performance.now() - started); loadStats(); }
      else if (event === "error") setStatus("Checking failed: " + data.message, true);
    });
  }

  // A flag is a result the annotator must answer: not a pass, and not a not_yet (a rule
  // that cannot be decided until more turns are written is not violated).
  function isFlag(result) {
    return result.status !== "pass" && result.status !== "not_yet";
  }

  function showVerdict(verdict, ms) {
    const flags = verdict.results.filter(isFlag).length;
    const word = flags === 1 ? "flag" : "flags";
    setStatus(`Done in ${(ms / 1000).toFixed(2)} s: ${verdict.results.length} rules checked, ${flags} ${word}.`);
  }

  function addResult(result) {
    const item = el("li", { class: "result status-" + result.status,
      "data-rule-id": result.rule_id, "data-status": result.status, "data-result-id": result.id });
    const head = el("div", { class: "head" });
    head.append(el("span", { class: "badge" }, result.status.replace("_", " ")));
    head.append(el("code", {}, result.rule_id));
    head.append(el("span", { class: "tier tier-" + result.tier }, result.tier));
    if (result.cached) head.append(el("span", { class: "muted" }, "cached"));
    if (result.truncated) head.append(el("span", { class: "muted" }, "truncated"));
    item.append(head);
    if (result.explanation) item.append(el("p", { class: "explanation" }, result.explanation));
    if (result.span && result.span.text) item.append(el("blockquote", { class: "span" }, result.span.text));
    if (isFlag(result)) {
      if (result.fix) item.append(el("p", { class: "fix" }, "Suggested fix: " + result.fix));
      item.append(actions(result, item));
    }
    const list = $("#results");
    // Flags first, then not_yet and passes.
    if (!isFlag(result)) list.append(item);
    else list.insertBefore(item, list.querySelector(".status-pass, .status-not_yet"));
  }

  function flaggedTurn(result) {
    if (result.turn !== null && result.turn !== undefined) return result.turn;
    return state.record.turns.length - 1;
  }

  function actions(result, item) {
    const box = el("div", { class: "actions" });
    const accept = el("button", { type: "button", class: "accept" }, "Accept and fix");
    const dismiss = el("button", { type: "button", class: "dismiss" }, "Dismiss");
    accept.addEventListener("click", () => { box.replaceChildren(fixEditor(result, item)); });
    dismiss.addEventListener("click", () => { box.replaceChildren(dismissForm(result, item)); });
    box.append(accept, dismiss);
    return box;
  }

  function fixEditor(result, item) {
    const index = flaggedTurn(result);
    const form = el("div", { class: "fix-editor" });
    const area = el("textarea", { class: "fix-text", rows: 3 });
    area.value = state.record.turns[index] ? state.record.turns[index].text : "";
    const save = el("button", { type: "button", class: "save-fix" }, "Save fix");
    save.addEventListener("click", async () => {
      try {
        renderStats(await postJSON("/annotate/feedback",
          { result_id: result.id, action: "accepted", fixed_text: area.value }));
        state.record.turns[index].text = area.value;
        renderTurns();
        markAnswered(item, "accepted and fixed");
        state.record.fields = currentFields();
        await verify({ record: state.record, turn_index: index });
      } catch (error) { setStatus("Could not save: " + error.message, true); }
    });
    // Turns are numbered from 1 on the page, as in the list of turns (an <ol>).
    form.append(el("label", {}, "Fixed text of turn " + (index + 1)), area, save);
    return form;
  }

  function dismissForm(result, item) {
    const form = el("div", { class: "dismiss-form" });
    const reason = el("input", { type: "text", class: "dismiss-reason", placeholder: "Why is this flag wrong?" });
    const confirm = el("button", { type: "button", class: "confirm-dismiss" }, "Dismiss flag");
    confirm.addEventListener("click", async () => {
      if (!reason.value.trim()) { reason.focus(); return; }
      try {
        renderStats(await postJSON("/annotate/feedback",
          { result_id: result.id, action: "dismissed", reason: reason.value }));
        markAnswered(item, "dismissed");
      } catch (error) { setStatus("Could not save: " + error.message, true); }
    });
    form.append(reason, confirm);
    return form;
  }

  function markAnswered(item, what) {
    item.classList.add("answered");
    item.setAttribute("data-answer", what);
    const box = item.querySelector(".actions");
    if (box) box.replaceChildren(el("span", { class: "muted answer" }, what));
  }

  function rate(row) {
    return row.accepted_rate === null ? "–" : Math.round(row.accepted_rate * 100) + "%";
  }

  function statsRow(label, row, attrs) {
    const tr = el("tr", attrs);
    tr.append(el("td", {}, label), el("td", {}, row.tier), el("td", { class: "flags" }, row.flags),
      el("td", { class: "accepted" }, row.accepted), el("td", { class: "dismissed" }, row.dismissed),
      el("td", { class: "rate" }, rate(row)));
    return tr;
  }

  function renderStats(stats) {
    const body = $("#stats-table tbody");
    body.replaceChildren();
    stats.by_tier.forEach((row) => body.append(statsRow("all " + row.tier, row, { class: "tier-row", "data-tier": row.tier })));
    stats.by_rule.forEach((row) => body.append(statsRow(row.rule_id, row, { "data-rule-id": row.rule_id })));
  }

  async function loadStats() {
    const response = await fetch("/annotate/stats", { credentials: "same-origin" });
    if (response.ok) renderStats(await response.json());
  }

  $("#turn-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = $("#turn-text").value;
    if (!text.trim()) return;
    const turn = { role: $("#turn-role").value, text: text };
    state.record.fields = currentFields();
    const body = { record: { id: state.record.id, turns: state.record.turns.slice(), fields: state.record.fields }, turn: turn };
    state.record.turns.push(turn);
    renderTurns();
    $("#turn-text").value = "";
    $("#turn-role").value = turn.role === "user" ? "assistant" : "user";
    try { await verify(body); } catch (error) { setStatus("Could not check: " + error.message, true); }
  });

  $("#new-dialogue").addEventListener("click", () => {
    state.record = newRecord();
    state.generation++;
    renderTurns();
    $("#results").replaceChildren();
    setStatus("New dialogue started.");
  });

  loadStats();
})();
