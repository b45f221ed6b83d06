/* thresher trace viewer.
 * Builds the page from a trace (docs/trace-schema.md) with DOM calls only: every
 * string from the trace goes in through textContent or an attribute, never as HTML.
 * Data: the JSON block #trace-data = {source, events, context}; with no events,
 * a file picker reads any JSONL trace. No network, no build step.
 */
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var CAUSES = {
    retrieval_miss: "retrieval miss",
    premature_pruning: "premature pruning",
    context_overload: "context overload / synthesis",
    hallucination: "hallucination / retrieval gap",
    early_termination: "termination too aggressive"
  };
  var FAILED = ["policy_error", "endpoint_unavailable", "invalid_input", "cancelled", "error"];

  // bidi controls (RLO and the like) shown as visible marks, so no id or text of a trace
  // can reorder what the page shows
  var BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;
  function visible(text) {
    return String(text).replace(BIDI, function (c) {
      return "\u2039U+" + c.charCodeAt(0).toString(16).toUpperCase() + "\u203a";
    });
  }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = visible(text);
    return node;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var kid = arguments[i];
      if (kid === null || kid === undefined) continue;
      parent.appendChild(typeof kid === "string" ? document.createTextNode(visible(kid)) : kid);
    }
    return parent;
  }
  function badge(text, kind) { return el("span", "badge" + (kind ? " " + kind : ""), text); }
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    return node;
  }
  function short(text, n) {
    var flat = String(text === undefined || text === null ? "" : text).replace(/\s+/g, " ").trim();
    return flat.length > n ? flat.slice(0, n - 1) + "\u2026" : flat;
  }
  function args(a) {
    if (!a || typeof a !== "object") return String(a);
    return Object.keys(a).map(function (k) { return k + "=" + JSON.stringify(a[k]); }).join(", ");
  }
  function docOf(chunkId) { var i = String(chunkId).lastIndexOf("#"); return i < 0 ? chunkId : chunkId.slice(0, i); }

  function parseJsonl(text) {
    return text.split(/\r?\n/).filter(function (l) { return l.trim(); }).map(function (l, i) {
      try { return JSON.parse(l); } catch (e) { throw new Error("line " + (i + 1) + " is not JSON"); }
    });
  }

  // -- the model: the trace folded into turns, chunks, lineage and context states ------------
  function put(list, id) { if (list.indexOf(id) < 0) list.push(id); }
  function drop(list, id) { var i = list.indexOf(id); if (i >= 0) list.splice(i, 1); }
  function applyResult(state, e) {
    (e.shown || []).forEach(function (id) { drop(state.pruned, id); put(state.active, id); });
    (e.pruned || []).forEach(function (id) { drop(state.active, id); put(state.pruned, id); });
    (e.recalled || []).concat(e.reactivated || []).forEach(function (id) {
      drop(state.pruned, id); put(state.active, id); state.recalled[id] = e.turn;
    });
  }

  function build(events) {
    // maps keyed by trace values have no prototype: "__proto__" or "toString" is just a key
    var m = {
      start: null, end: null, turns: [], byTurn: Object.create(null), chunks: Object.create(null),
      lineage: Object.create(null), recalled: Object.create(null)
    };
    var state = { active: [], pruned: [], recalled: m.recalled };
    events.forEach(function (e) {
      if (e.type === "episode_start") { m.start = e; return; }
      if (e.type === "episode_end") { m.end = e; return; }
      var t = m.byTurn[e.turn];
      if (!t) { t = { turn: e.turn, events: [], state: null }; m.byTurn[e.turn] = t; m.turns.push(t); }
      t.events.push(e);
      if (e.type === "query_state") {
        t.state = e;
        state = { active: e.active.slice(), pruned: e.pruned.slice(), recalled: m.recalled };
      } else if (e.type === "tool_result") {
        (e.new_chunks || []).forEach(function (c) { m.chunks[c.chunk_id] = c; });
        (e.lineage || []).forEach(function (l) { if (!(l.chunk_id in m.lineage)) m.lineage[l.chunk_id] = l; });
        applyResult(state, e);
      }
    });
    m.endState = state;
    var budget = (m.start && m.start.config && m.start.config.budget) || {};
    m.budget = budget.total || (m.turns[0] && m.turns[0].state && m.turns[0].state.budget) || 0;
    m.soft = m.budget * (budget.soft_fraction === undefined ? 0.5 : budget.soft_fraction);
    m.hard = m.budget * (budget.hard_fraction === undefined ? 0.85 : budget.hard_fraction);
    return m;
  }

  // -- the summary and the eval attribution --------------------------------------------------
  function exitKind(reason) {
    if (reason === "answered") return "ok";
    return FAILED.indexOf(reason) >= 0 ? "bad" : "warn";
  }

  function summary(m, ctx) {
    var box = el("section", "summary-box");
    add(box, el("p", "question", m.start ? m.start.question : "(no episode_start event)"));
    var line = el("div", "summary");
    if (m.start) add(line, badge("policy " + m.start.policy));
    if (m.end) {
      add(line, badge("exit: " + m.end.exit_reason + (m.end.partial ? " (partial)" : ""), exitKind(m.end.exit_reason)));
      add(line, badge(m.end.turns + " turn(s)"));
      var calls = Object.keys(m.end.tool_calls || {}).map(function (k) { return k + " " + m.end.tool_calls[k]; });
      add(line, badge("calls: " + (calls.join(", ") || "none")));
      add(line, badge("peak " + (m.end.usage.peak || 0) + " / " + m.budget + " tokens"));
      add(line, badge(Number(m.end.wall_s || 0).toFixed(2) + " s"));
      if (m.end.message) add(line, el("span", "muted", m.end.message));
    } else {
      add(line, badge("no episode_end: the episode is still running or the trace is cut", "warn"));
    }
    add(box, line);
    if (ctx) add(box, attribution(ctx));
    return box;
  }

  function attribution(ctx) {
    var box = el("div", "attribution");
    add(box, el("h2", null, "Evaluation" + (ctx.task_id ? " \u00b7 task " + ctx.task_id : "") + (ctx.side ? " (side " + ctx.side + ")" : "")));
    var line = el("div", "summary");
    var a = ctx.attribution || {};
    if (a.failed) {
      var cause = CAUSES[a.cause] || a.cause || "unknown cause";
      add(line, badge("failure: " + cause + (a.hop !== null && a.hop !== undefined ? " (hop " + a.hop + ")" : ""), "bad attribution-badge"));
      if (a.recoverable) add(line, badge("recoverable: recall_chunks(" + (a.recover_chunk_ids || []).join(", ") + ")", "recallable"));
    } else if (ctx.attribution) {
      add(line, badge("no failure: the gold documents were returned", "ok attribution-badge"));
    }
    (ctx.gold_doc_ids || []).forEach(function (d) { add(line, badge("gold " + d, "gold")); });
    add(box, line);
    var docCauses = a.doc_causes || {};
    Object.keys(docCauses).forEach(function (d) {
      add(box, el("div", "muted", d + ": " + (CAUSES[docCauses[d]] || docCauses[d])));
    });
    (a.evidence || []).forEach(function (ev) {
      add(box, el("div", "muted", "evidence: turn " + ev.turn + " \u00b7 event " + ev.seq + " (" + ev.event + "): " + ev.detail));
    });
    return box;
  }

  // -- the token-usage curve -----------------------------------------------------------------
  function chart(m) {
    var W = 720, H = 220, L = 56, R = 120, T = 12, B = 28;
    var points = m.turns.filter(function (t) { return t.state; }).map(function (t) { return [t.turn, t.state.used]; });
    var top = Math.max(m.budget, points.reduce(function (a, p) { return Math.max(a, p[1]); }, 0), 1);
    var last = Math.max(points.length ? points[points.length - 1][0] : 0, 1);
    function x(turn) { return L + (W - L - R) * turn / last; }
    function y(v) { return T + (H - T - B) * (1 - v / top); }
    var s = svg("svg", { "class": "usage-chart", viewBox: "0 0 " + W + " " + H, role: "img" });
    var title = svg("title", {}); title.textContent = "token usage per turn against the soft and hard lines"; s.appendChild(title);
    [["budget", m.budget, "#1d232a"], ["hard", m.hard, "#d32f2f"], ["soft", m.soft, "#e3a008"]].forEach(function (l) {
      s.appendChild(svg("line", { "class": l[0], x1: L, x2: W - R, y1: y(l[1]), y2: y(l[1]), stroke: l[2], "stroke-dasharray": l[0] === "budget" ? "" : "5 4" }));
      var label = svg("text", { x: W - R + 4, y: y(l[1]) + 4 }); label.textContent = l[0] + " " + Math.round(l[1]); s.appendChild(label);
    });
    s.appendChild(svg("line", { x1: L, x2: L, y1: T, y2: H - B, stroke: "#66707a" }));
    s.appendChild(svg("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#66707a" }));
    var y0 = svg("text", { x: 4, y: H - B + 4 }); y0.textContent = "0"; s.appendChild(y0);
    var yl = svg("text", { x: 4, y: T + 10 }); yl.textContent = String(Math.round(top)); s.appendChild(yl);
    var xl = svg("text", { x: L, y: H - 8 }); xl.textContent = "turn"; s.appendChild(xl);
    if (points.length) {
      s.appendChild(svg("polyline", {
        "class": "usage", fill: "none", stroke: "#2f6feb", "stroke-width": 2,
        points: points.map(function (p) { return x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1); }).join(" ")
      }));
      points.forEach(function (p) {
        var dot = svg("circle", { "class": "usage-point", cx: x(p[0]), cy: y(p[1]), r: 3.5, fill: "#2f6feb" });
        var tip = svg("title", {}); tip.textContent = "turn " + p[0] + ": " + p[1] + " tokens"; dot.appendChild(tip);
        s.appendChild(dot);
        var tx = svg("text", { x: x(p[0]) - 3, y: H - B + 14 }); tx.textContent = String(p[0]); s.appendChild(tx);
      });
    }
    return s;
  }

  // -- the turns -----------------------------------------------------------------------------
  function chunkItem(m, ctx, id) {
    var c = m.chunks[id] || { chunk_id: id, title: "", text: "" };
    var li = el("li", "chunk");
    add(li, el("code", null, id), " ", el("span", null, short(c.title, 80)));
    if (isGold(ctx, c.doc_id || docOf(id))) add(li, " ", badge("gold", "gold"));
    var more = el("details");
    add(more, el("summary", "muted", "text"), el("div", "chunk-text", c.text));
    add(li, more);
    return li;
  }
  function isGold(ctx, doc) { return !!ctx && (ctx.gold_doc_ids || []).indexOf(doc) >= 0; }
  function evidenceAt(ctx, seq) {
    if (!ctx || !ctx.attribution) return null;
    var hit = (ctx.attribution.evidence || []).filter(function (ev) { return ev.seq === seq; })[0];
    return hit ? badge("attribution evidence: " + short(hit.detail, 120), "evidence") : null;
  }

  function step(m, ctx, e) {
    var box = el("div", "step");
    if (e.type === "proposal") {
      if (!e.valid) {
        box.className = "step refused";
        add(box, "\u2717 proposal refused: " + short(e.raw, 300));
      } else {
        var p = e.proposal || {};
        if (p.text) add(box, el("div", "muted", short(p.text, 400)));
        (p.tool_calls || []).forEach(function (c) {
          add(box, el("div", "call", "\u2192 " + c.name + "(" + args(c.arguments) + ")  [" + c.call_id + "]"));
        });
        if (p.final) add(box, el("div", "call", "\u2192 final answer: " + (p.final.documents || []).length + " document(s)"));
      }
    } else if (e.type === "refusal") {
      box.className = "step refused";
      add(box, "\u2717 refused (" + e.code + "): " + e.message);
    } else if (e.type === "tool_result") {
      var mark = { ok: "\u2713", error: "!", refused: "\u2717" }[e.status] || "?";
      if (e.status !== "ok") box.className = "step " + (e.status === "refused" ? "refused" : "error");
      var head = mark + " " + e.tool + " [" + e.call_id + "]" + (e.code ? " " + e.code : "");
      add(box, el("div", "call", head + " \u00b7 " + e.tokens + " tok"));
      var text = [e.header, e.footer].filter(Boolean).join(" \u2026 ");
      if (text) add(box, el("div", "muted", short(text, 300)));
      if ((e.shown || []).length) {
        var ul = el("ul", "chunks");
        e.shown.forEach(function (id) { add(ul, chunkItem(m, ctx, id)); });
        add(box, ul);
      }
      if ((e.pruned || []).length) {
        var pr = el("div", null, "pruned: ");
        e.pruned.forEach(function (id) { add(pr, el("del", "pruned", id), " "); });
        add(box, pr);
      }
      if ((e.recalled || []).length) add(box, el("div", null, "recalled: " + e.recalled.join(", ")));
      if ((e.reactivated || []).length) add(box, el("div", null, "shown again: " + e.reactivated.join(", ")));
      (e.rejected || []).forEach(function (r) { add(box, el("div", "step refused", "\u2717 " + r.id + " (" + r.code + "): " + r.message)); });
    } else if (e.type === "usage") {
      add(box, el("div", "muted", "endpoint usage: prompt " + e.prompt_tokens + " (counted " + e.counted + "), completion " + e.completion_tokens));
    } else if (e.type === "final") {
      add(box, el("div", null, "final answer:"));
      var ol = el("ol", "final");
      (e.documents || []).forEach(function (d) {
        var li = el("li");
        add(li, el("code", null, d.doc_id), " ", el("span", null, d.title || ""));
        if (isGold(ctx, d.doc_id)) add(li, " ", badge("gold", "gold"));
        if (d.justification) add(li, el("div", "muted", d.justification));
        add(ol, li);
      });
      add(box, ol);
    } else {
      return null;
    }
    add(box, evidenceAt(ctx, e.seq));
    return box;
  }

  function turnCard(m, ctx, t, select) {
    var card = el("section", "turn");
    card.setAttribute("data-turn", String(t.turn));
    add(card, el("h3", null, "Turn " + t.turn));
    if (t.state) {
      var flags = t.state.hard ? " \u00b7 HARD CUTOFF" : (t.state.soft ? " \u00b7 past the soft line" : "");
      add(card, el("div", "usage", "[Token usage: " + t.state.used + "/" + t.state.budget + "] \u00b7 active " + t.state.active.length + " \u00b7 pruned " + t.state.pruned.length + flags));
      t.state.notices.slice(1).forEach(function (n) { add(card, el("div", "muted", "notice: " + n)); });
    }
    t.events.forEach(function (e) { add(card, step(m, ctx, e)); });
    card.addEventListener("click", function () { select(t.turn); });
    return card;
  }

  // -- the context panel ---------------------------------------------------------------------
  function lineageText(m, id) {
    var l = m.lineage[id];
    if (!l) return "lineage unknown";
    var parts = ["\u2190 " + l.tool + "(" + short(l.query, 80) + ")", "turn " + l.turn];
    if (l.rank !== null && l.rank !== undefined) parts.push("rank " + l.rank);
    if (l.hop !== null && l.hop !== undefined) parts.push("hop " + l.hop);
    if ((l.parents || []).length) parts.push("bridge from " + l.parents.join(", "));
    if (l.duplicate_of) parts.push("same text as " + l.duplicate_of);
    return parts.join(" \u00b7 ");
  }

  function contextRow(m, ctx, id, pruned) {
    var c = m.chunks[id] || { title: "" };
    var row = el("div", "context-row" + (pruned ? " is-pruned" : ""));
    row.setAttribute("data-chunk", id);
    var label = el(pruned ? "del" : "span", pruned ? "pruned" : null);
    add(label, el("code", null, id), " ", short(c.title, 70));
    add(row, label);
    if (pruned) add(row, " ", badge("recallable", "recallable"));
    if (!pruned && id in m.recalled) add(row, " ", badge("recalled at turn " + m.recalled[id]));
    if (isGold(ctx, c.doc_id || docOf(id))) add(row, " ", badge("gold", "gold"));
    add(row, el("div", "lineage", lineageText(m, id)));
    return row;
  }

  function contextPanel(m, ctx) {
    var panel = el("section", "context-panel");
    var head = el("h2", null, "Active context");
    var controls = el("div", "controls");
    var chooser = el("select");
    chooser.id = "turn-select";
    m.turns.forEach(function (t) {
      if (!t.state) return;
      var o = el("option", null, "start of turn " + t.turn); o.value = String(t.turn); add(chooser, o);
    });
    var end = el("option", null, "end of episode"); end.value = "end"; add(chooser, end);
    chooser.value = "end";
    var body = el("div", "context-body");
    add(controls, el("label", null, "at: "), chooser);
    add(panel, head, controls, body);
    function show(which) {
      var st = which === "end" ? m.endState : (m.byTurn[which] && m.byTurn[which].state) || m.endState;
      while (body.firstChild) body.removeChild(body.firstChild);
      add(body, el("div", "muted", st.active.length + " in view \u00b7 " + st.pruned.length + " pruned (still in the cache, recallable)"));
      st.active.forEach(function (id) { add(body, contextRow(m, ctx, id, false)); });
      st.pruned.forEach(function (id) { add(body, contextRow(m, ctx, id, true)); });
      Array.prototype.forEach.call(document.querySelectorAll("section.turn"), function (card) {
        card.classList.toggle("selected", card.getAttribute("data-turn") === String(which));
      });
    }
    chooser.addEventListener("change", function () { show(chooser.value); });
    panel.select = function (turn) {
      chooser.value = m.byTurn[turn] && m.byTurn[turn].state ? String(turn) : "end";
      show(chooser.value);
    };
    show("end");
    return panel;
  }

  // -- the page ------------------------------------------------------------------------------
  function render(events, ctx, source) {
    var app = document.getElementById("app");
    while (app.firstChild) app.removeChild(app.firstChild);
    document.getElementById("source").textContent = visible(source || "");
    var m = build(events);
    add(app, summary(m, ctx));
    add(app, el("h2", null, "Token usage"), chart(m));
    var layout = el("div", "layout");
    var left = el("div", "turns");
    var right = el("div", "sticky");
    var panel = contextPanel(m, ctx);
    add(left, el("h2", null, "Turns"));
    m.turns.forEach(function (t) { add(left, turnCard(m, ctx, t, panel.select)); });
    add(right, panel);
    add(layout, left, right);
    add(app, layout);
    document.body.setAttribute("data-rendered", "true");
  }

  function problem(text) {
    var p = document.getElementById("problem");
    p.textContent = text;
    p.hidden = false;
  }

  function main() {
    var data = {};
    try { data = JSON.parse(document.getElementById("trace-data").textContent || "{}"); }
    catch (e) { problem("the embedded trace is not JSON: " + e.message); }
    if (data.events && data.events.length) {
      render(data.events, data.context || null, data.source || "");
      return;
    }
    var loader = document.getElementById("loader");
    loader.hidden = false;
    document.getElementById("file").addEventListener("change", function (ev) {
      var file = ev.target.files && ev.target.files[0];
      if (!file) return;
      var reader = new FileReader();
      reader.onload = function () {
        try { render(parseJsonl(String(reader.result)), null, file.name); }
        catch (e) { problem(file.name + ": " + e.message); }
      };
      reader.readAsText(file);
    });
  }

  main();
})();
