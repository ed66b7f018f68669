// Stepgate's operators' inbox: plain JavaScript, no dependency. Every
// string from a run (tool names, arguments, reasons, results) is set as
// text, never as markup.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const state = { csrf: "", tickets: [], selected: 0, runs: new Map(), page: "", run: "", context: new Map() };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  async function api(method, path, body) {
    const opts = { method, headers: {}, credentials: "same-origin" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    if (method !== "GET") opts.headers["X-CSRF-Token"] = state.csrf;
    const res = await fetch(path, opts);
    if (res.status === 401) { location.href = "/login"; throw new Error("signed out"); }
    if (res.status === 204) return null;
    const data = await res.json();
    if (!res.ok) throw new Error((data.code || res.status) + ": " + (data.message || ""));
    return data;
  }

  // ULIDs carry their time in the first ten characters.
  function ulidTime(id) {
    const abc = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let t = 0;
    for (const ch of (id || "").slice(0, 10).toUpperCase()) {
      const v = abc.indexOf(ch);
      if (v < 0) return null;
      t = t * 32 + v;
    }
    return new Date(t);
  }
  function ago(d) {
    if (!d) return "";
    let s = Math.max(0, Math.round((Date.now() - d.getTime()) / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m";
    if (s < 86400) return Math.floor(s / 3600) + "h" + Math.floor((s % 3600) / 60) + "m";
    return Math.floor(s / 86400) + "d";
  }

  // ---- routing
  function route() {
    const p = location.pathname;
    let page = "inbox";
    state.only = p.startsWith("/tickets/") ? decodeURIComponent(p.slice(9)) : "";
    if (p === "/runs") page = "runs";
    else if (p.startsWith("/runs/")) { page = "run"; state.run = decodeURIComponent(p.slice(6)); }
    else if (p === "/grants") page = "grants";
    state.page = page;
    for (const s of ["inbox", "runs", "run", "grants"]) $("page-" + s).hidden = s !== page;
    for (const s of ["inbox", "runs", "grants"]) $("nav-" + s).classList.toggle("active", s === page || (s === "runs" && page === "run"));
    if (page === "inbox") loadTickets();
    if (page === "runs") loadRuns();
    if (page === "run") loadRun();
    if (page === "grants") loadGrants();
  }
  document.addEventListener("click", (e) => {
    const a = e.target.closest("a[data-nav]");
    if (!a || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    history.pushState(null, "", a.getAttribute("href"));
    route();
  });
  window.addEventListener("popstate", route);

  // ---- inbox
  async function loadRunsMap() {
    const runs = await api("GET", "/api/runs");
    state.runs = new Map(runs.map((r) => [r.id, r]));
    return runs;
  }
  let loading = null;
  function loadTickets() {
    if (loading) { loading.again = true; return loading.p; }
    const l = { again: false };
    l.p = (async () => {
      try {
        do {
          l.again = false;
          const q = new URLSearchParams({ limit: "1000" });
          if (state.only) q.set("ticket", state.only);
          for (const [k, id] of [["project", "f-project"], ["tool", "f-tool"], ["older_than", "f-age"]]) {
            const v = $(id).value.trim();
            if (v) q.set(k, v);
          }
          const [page] = await Promise.all([api("GET", "/api/tickets?" + q), loadRunsMap()]);
          let ts = page.tickets || [];
          const agent = $("f-agent").value.trim();
          if (agent) ts = ts.filter((t) => (state.runs.get(t.run) || {}).agent === agent);
          if ($("f-order").value === "newest") ts.reverse();
          state.tickets = ts;
          $("inbox-error").textContent = "";
          renderTickets();
        } while (l.again);
      } catch (err) {
        $("inbox-error").textContent = String(err.message || err);
      } finally {
        loading = null;
      }
    })();
    loading = l;
    return l.p;
  }
  for (const id of ["f-project", "f-agent", "f-tool", "f-age", "f-order"]) $(id).addEventListener("change", () => loadTickets());
  $("inbox-filters").addEventListener("submit", (e) => { e.preventDefault(); loadTickets(); });

  function renderTickets() {
    const list = $("tickets");
    const keep = state.tickets[state.selected] && state.tickets[state.selected].id;
    list.replaceChildren(...state.tickets.map(ticketCard));
    const i = state.tickets.findIndex((t) => t.id === keep);
    state.selected = i >= 0 ? i : Math.min(state.selected, state.tickets.length - 1);
    if (state.selected < 0) state.selected = 0;
    $("inbox-empty").hidden = state.tickets.length > 0;
    $("inbox-count").textContent = state.tickets.length ? "(" + state.tickets.length + ")" : "";
    select(state.selected, false);
  }

  function argsView(t) {
    const box = el("div");
    const args = t.args === undefined ? null : t.args;
    if (t.tool === "edit" && args && typeof args.path === "string") {
      box.append(el("div", "hdr", "edit " + args.path + (args.replaceAll ? " (every occurrence)" : "")));
      const pre = el("pre", "diff");
      for (const line of String(args.oldString || "").split("\n")) if (args.oldString) pre.append(el("span", "del", "- " + line));
      for (const line of String(args.newString || "").split("\n")) pre.append(el("span", "add", "+ " + line));
      box.append(pre);
      return box;
    }
    if (t.tool === "apply_patch" && args && typeof args.patchText === "string") {
      const pre = el("pre", "diff");
      for (const line of args.patchText.split("\n")) {
        const cls = line.startsWith("***") ? "hdr" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "";
        pre.append(cls ? el("span", cls, line) : document.createTextNode(line + "\n"));
      }
      box.append(pre);
      return box;
    }
    if (t.tool === "bash" && args && typeof args.command === "string") {
      box.append(el("pre", "", "$ " + args.command));
      return box;
    }
    box.append(el("pre", "", JSON.stringify(args, null, 2)));
    return box;
  }

  function ticketCard(t, i) {
    const li = $("ticket-tmpl").content.firstElementChild.cloneNode(true);
    li.dataset.ticket = t.id;
    li.id = "ticket-" + t.id;
    const run = state.runs.get(t.run) || {};
    li.querySelector(".tool").textContent = t.tool + (t.kind === "input" ? " (asks for answers)" : "");
    li.querySelector(".project").textContent = "project " + (t.project || "—");
    li.querySelector(".agent").textContent = run.agent ? "agent " + run.agent : "";
    const a = li.querySelector(".run");
    a.textContent = "run " + t.run + " step " + t.step;
    a.href = "/runs/" + encodeURIComponent(t.run);
    const issued = ulidTime(t.id);
    li.querySelector(".age").textContent = "waiting " + ago(issued);
    li.querySelector(".deadline").textContent = t.deadline ? "expires " + new Date(t.deadline).toLocaleString() : "no deadline";
    li.querySelector(".reason").textContent = t.reason || "";
    const reqs = li.querySelector(".requests");
    const save = [];
    for (const r of t.requests || []) {
      const always = r.ask && !(r.save || []).length ? "  (always asks: approve always saves nothing for it)" : "";
      const label = r.action + " " + (r.resources || []).join(", ") + always;
      reqs.append(el("li", "", label));
      for (const s of r.save || []) save.push(r.action + " " + s);
    }
    li.querySelector(".args").append(argsView(t));
    li.querySelector(".covers").textContent = save.length
      ? "Approve always saves for project " + (t.project || "—") + ": " + save.join("; ")
      : "Approve always saves nothing for this call (it always asks).";
    li.querySelector(".edit-args").value = JSON.stringify(t.args === undefined ? {} : t.args, null, 2);
    li.querySelector(".once").addEventListener("click", () => answer(t, "once"));
    const grants = [];
    for (const r of t.requests || []) for (const s of r.save || []) if (!grants.some((g) => g.action === r.action && g.pattern === s)) grants.push({ action: r.action, pattern: s });
    li.querySelector(".grant-project").textContent = t.project || "—";
    const pat = li.querySelector(".grant-pattern");
    if (grants.length === 1) {
      li.querySelector(".grant-action").textContent = grants[0].action;
      pat.value = grants[0].pattern;
      li.querySelector(".grant-note").textContent = "Narrow the pattern if you like: the engine saves only a pattern within " + JSON.stringify(grants[0].pattern) + " that still matches this call.";
    } else {
      li.querySelector(".grant-action").textContent = grants.map((g) => g.action + " " + g.pattern).join("; ") || "nothing (it always asks)";
      pat.hidden = true;
    }
    li.querySelector(".always").addEventListener("click", () => toggleAlways(li));
    li.querySelector(".always-save").addEventListener("click", () => answer(t, "always"));
    pat.addEventListener("keydown", (e) => { if (e.key === "Enter") answer(t, "always"); });
    li.querySelector(".reject").addEventListener("click", () => answer(t, "reject"));
    li.querySelector(".edit").addEventListener("click", () => toggleEdit(li));
    li.querySelector(".edit-once").addEventListener("click", () => answer(t, "edit"));
    li.addEventListener("click", (e) => { if (!e.target.closest("button, input, textarea, a")) select(i, false); });
    const ctx = state.context.get(t.run);
    if (ctx) li.querySelector(".context").replaceChildren(ctx.cloneNode(true));
    return li;
  }

  // Approve always first shows the grant it saves; saving is a second step.
  function toggleAlways(li) {
    const p = li.querySelector(".always-panel");
    p.hidden = !p.hidden;
    if (!p.hidden) li.querySelector(".always-save").focus(); // not the input: the key that opened it would land there
  }

  function toggleEdit(li) {
    const ed = li.querySelector(".editor");
    ed.hidden = !ed.hidden;
    if (!ed.hidden) li.querySelector(".edit-args").focus();
  }

  function select(i, scroll) {
    const cards = $("tickets").children;
    for (const c of cards) c.classList.remove("selected");
    if (!cards[i]) return;
    state.selected = i;
    cards[i].classList.add("selected");
    if (scroll !== false) cards[i].scrollIntoView({ block: "nearest" });
    loadContext(state.tickets[i], cards[i]);
  }

  // The run's last steps, for context.
  async function loadContext(t, li) {
    try {
      const d = await api("GET", "/api/runs/" + encodeURIComponent(t.run));
      const box = el("div");
      box.append(el("div", "", "Last steps of the run:"));
      const ol = el("ol");
      for (const s of (d.run.steps || []).slice(-3)) {
        for (const c of s.calls || []) {
          const verdict = c.decision ? c.decision.verdict : "undecided";
          const rule = c.decision && c.decision.rule ? " by " + c.decision.rule.action + " " + JSON.stringify(c.decision.rule.resource) + " (" + (c.decision.rule.source || "") + ")" : "";
          let res = "";
          if (c.result && c.result.parts) res = " → " + c.result.parts.filter((p) => p.text).map((p) => p.text).join(" ").slice(0, 120);
          const where = c.ran_on ? " · ran on " + c.ran_on : ""; // the host that executed it, when it ran
          ol.append(el("li", "", "step " + s.n + ": " + c.tool + " " + verdict + rule + res + where));
        }
      }
      box.append(ol);
      state.context.set(t.run, box);
      li.querySelector(".context").replaceChildren(box.cloneNode(true));
    } catch (_) { /* context is optional */ }
  }

  async function answer(t, how) {
    const li = $("ticket-" + t.id);
    const body = { reply: how };
    if (how === "reject") {
      const msg = li.querySelector(".message").value.trim();
      if (msg) body.message = msg;
    }
    if (how === "always") {
      const input = li.querySelector(".grant-pattern");
      const asked = (t.requests || []).flatMap((r) => r.save || []);
      const p = input.value.trim();
      if (!input.hidden && p && !asked.includes(p)) body.pattern = p;
    }
    if (how === "edit") {
      body.reply = "once";
      try { body.args = JSON.parse(li.querySelector(".edit-args").value); }
      catch (err) { li.querySelector(".error").textContent = "the arguments are not JSON: " + err.message; return; }
    }
    li.querySelector(".error").textContent = "";
    for (const b of li.querySelectorAll("button")) b.disabled = true;
    try {
      await api("POST", "/api/tickets/" + encodeURIComponent(t.id) + "/reply", body);
      removeTicket(t.id);
    } catch (err) {
      li.querySelector(".error").textContent = String(err.message || err);
      for (const b of li.querySelectorAll("button")) b.disabled = false;
    }
  }

  function removeTicket(id) {
    const i = state.tickets.findIndex((t) => t.id === id);
    if (i < 0) return;
    state.tickets.splice(i, 1);
    renderTickets();
  }

  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, textarea, select")) {
      if (e.key === "Escape") e.target.blur();
      if (e.key === "Enter" && e.target.classList.contains("message")) { const t = state.tickets[state.selected]; if (t) answer(t, "reject"); }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "?") { $("help").hidden = !$("help").hidden; return; }
    if (e.key === "Escape") { $("help").hidden = true; return; }
    if (state.page !== "inbox") return;
    const t = state.tickets[state.selected];
    const li = t && $("ticket-" + t.id);
    switch (e.key) {
      case "j": select(Math.min(state.selected + 1, state.tickets.length - 1)); break;
      case "k": select(Math.max(state.selected - 1, 0)); break;
      case "a": if (t) answer(t, "once"); break;
      case "A": if (li) { e.preventDefault(); toggleAlways(li); } break;
      case "r": if (t) answer(t, "reject"); break;
      case "e": if (li) { e.preventDefault(); toggleEdit(li); } break;
      default: return;
    }
  });
  $("help").addEventListener("click", () => { $("help").hidden = true; });

  // ---- runs
  async function loadRuns() {
    const runs = await loadRunsMap();
    const st = $("r-status").value, agent = $("r-agent").value.trim();
    const rows = runs.filter((r) => (!st || r.status === st) && (!agent || r.agent === agent)).map((r) => {
      const tr = el("tr");
      const a = el("a", "", r.id);
      a.href = "/runs/" + encodeURIComponent(r.id);
      a.dataset.nav = "";
      const td = el("td");
      td.append(a);
      tr.append(td, el("td", "", r.agent), el("td", "status", r.status + (r.cause ? " (" + r.cause + ")" : "") + (r.diverged ? " DIVERGED" : "")), el("td", "", String(r.steps)));
      tr.dataset.run = r.id;
      return tr;
    });
    $("runs").replaceChildren(...rows);
  }
  for (const id of ["r-status", "r-agent"]) $(id).addEventListener("change", loadRuns);
  $("runs-filters").addEventListener("submit", (e) => { e.preventDefault(); loadRuns(); });

  async function loadRun() {
    $("run-title").textContent = "run " + state.run;
    $("run-frame").src = "/report/" + encodeURIComponent(state.run);
    try {
      const d = await api("GET", "/api/runs/" + encodeURIComponent(state.run));
      $("run-status").textContent = d.run.status + (d.run.end ? " (" + d.run.end.cause + ")" : "");
    } catch (err) { $("run-status").textContent = String(err.message || err); }
  }

  // ---- grants
  async function loadGrants() {
    const gs = await api("GET", "/api/grants");
    const by = new Map();
    for (const g of gs) { if (!by.has(g.project)) by.set(g.project, []); by.get(g.project).push(g); }
    const box = el("div", "grants");
    if (!gs.length) box.append(el("p", "empty", "No saved approvals."));
    for (const [project, list] of [...by.entries()].sort()) {
      box.append(el("h3", "", "project " + project));
      for (const g of list) {
        const row = el("div", "grant");
        row.dataset.grant = g.id;
        const when = ulidTime(g.id); // a grant's id is a ULID of when it was saved
        row.append(el("span", "", g.action + " " + JSON.stringify(g.resource)),
          el("span", "by", "saved by " + (g.principal || "?") + (when ? " " + when.toLocaleString() : "") + (g.ticket ? " (ticket " + g.ticket + ")" : "") + (g.revoked ? " — revoked by " + (g.revoked.principal || "?") : "")));
        if (!g.revoked) {
          const b = el("button", "revoke", "Revoke");
          b.type = "button";
          b.addEventListener("click", async () => {
            b.disabled = true;
            try { await api("POST", "/api/grants/" + encodeURIComponent(g.id) + "/revoke"); loadGrants(); }
            catch (err) { b.disabled = false; row.append(el("span", "error", String(err.message || err))); }
          });
          row.append(b);
        }
        box.append(row);
      }
    }
    $("grants").replaceChildren(box);
  }

  // ---- live updates, from the log
  const debounced = new Map();
  function soon(key, fn, ms) {
    if (debounced.has(key)) return;
    debounced.set(key, setTimeout(() => { debounced.delete(key); fn(); }, ms));
  }
  function live() {
    const es = new EventSource("/api/events");
    es.onopen = () => { $("live").className = "live on"; if (state.page === "inbox") loadTickets(); };
    es.onerror = () => { $("live").className = "live off"; };
    es.addEventListener("ticket_resolved", (m) => {
      const ev = JSON.parse(m.data);
      if (state.page === "inbox") removeTicket(ev.ticket);
    });
    es.addEventListener("ticket_issued", () => { if (state.page === "inbox") soon("tickets", loadTickets, 100); });
    es.addEventListener("run_changed", (m) => {
      const ev = JSON.parse(m.data);
      state.context.delete(ev.run);
      if (state.page === "run" && ev.run === state.run) soon("run", loadRun, 250);
      if (state.page === "runs") soon("runs", loadRuns, 250);
    });
    es.addEventListener("grants_changed", () => { if (state.page === "grants") soon("grants", loadGrants, 100); });
  }

  $("logout").addEventListener("click", async () => {
    try { await api("POST", "/logout"); } catch (_) { /* signed out anyway */ }
    location.href = "/login";
  });

  (async () => {
    const s = await api("GET", "/api/session");
    state.csrf = s.csrf || "";
    $("who").textContent = s.principal;
    route();
    live();
  })();
})();
