// The timeline page: draws html_view's data (the JSON block above) as text nodes only, never as markup.
// Rows are drawn in slices between frames, so a session of thousands of interactions never blocks the
// page; a message's JSON is built only when it is first unfolded.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("data").textContent);
  const byId = (id) => document.getElementById(id);
  const rows = []; // {el, lane, kinds: Set, msgs: [{dir, method, name, kinds}], text}
  const methods = new Set();
  const names = new Set();

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function plural(n, one, many) {
    return n + " " + (n === 1 ? one : many || one + "s");
  }

  // --- JSON, folded and unfolded ---------------------------------------------------------------------
  // Levels deeper than TREE_DEEPEST are one folded line of text: a browser lays out hundreds of nested boxes
  // in seconds (300 levels froze the page), and a cassette's value may nest up to 512 levels.
  const TREE_DEEPEST = 32;

  function deepText(value, hit) {
    const fold = el("details", "jf deep" + (hit ? " hit" : ""));
    const keys = Object.keys(value);
    const head = el("summary", "", Array.isArray(value) ? "[" : "{");
    const said = plural(keys.length, Array.isArray(value) ? "item" : "key");
    head.append(el("span", "jn", " " + said + ", deeper than " + TREE_DEEPEST + " levels: shown as text"));
    fold.append(head);
    fold.addEventListener("toggle", () => {
      if (fold.open && !fold.dataset.filled) {
        fold.dataset.filled = "yes";
        fold.append(el("pre", "jt", JSON.stringify(value)));
      }
    });
    return fold;
  }

  // hit: the path (keys and indexes as text) still to follow to the value to highlight; [] marks this one.
  function jsonTree(value, key, hit, level) {
    level = level || 0;
    const line = el("div", "jl" + (hit && !hit.length ? " hit" : ""));
    if (key !== undefined) line.append(el("span", "jk", JSON.stringify(key)), ": ");
    const open = Array.isArray(value) ? "[" : "{";
    if (value !== null && typeof value === "object" && Object.keys(value).length && level >= TREE_DEEPEST) {
      line.append(deepText(value, hit && hit.length));
    } else if (value !== null && typeof value === "object" && Object.keys(value).length) {
      const keys = Object.keys(value);
      const fold = el("details", "jf");
      fold.open = true;
      const head = el("summary", "", open);
      head.append(el("span", "jn", " " + plural(keys.length, Array.isArray(value) ? "item" : "key")));
      fold.append(head);
      const body = el("div", "jb");
      for (const k of keys) {
        const next = hit && hit.length && String(hit[0]) === k ? hit.slice(1) : null;
        body.append(jsonTree(value[k], Array.isArray(value) ? undefined : k, next, level + 1));
      }
      fold.append(body, el("div", "jc", Array.isArray(value) ? "]" : "}"));
      line.append(fold);
    } else {
      const kind = value === null ? "null" : typeof value;
      line.append(el("span", "jv " + kind, JSON.stringify(value)));
    }
    return line;
  }

  // An MCP App's HTML (the text of a `ui://` resource, read or embedded): its source is shown under the
  // message as text, as a text node like every value here, so nothing in it is ever parsed or run.
  function appSources(value, found, level) {
    if (value === null || typeof value !== "object" || level > TREE_DEEPEST) return found;
    if (typeof value.uri === "string" && value.uri.startsWith("ui://") && typeof value.text === "string") found.push(value);
    for (const k of Object.keys(value)) appSources(value[k], found, level + 1);
    return found;
  }

  function fillBody(fold, msg, lane) {
    if (fold.dataset.filled) return;
    fold.dataset.filled = "yes";
    const body = fold.querySelector(".body");
    if (msg.line) body.append(lineLink(lane, msg.line, true));
    if (typeof msg.json === "string") body.append(el("pre", "raw", msg.json));
    else if (msg.json !== null && msg.json !== undefined) body.append(jsonTree(msg.json, undefined, msg.hit || null));
    else body.append(el("p", "dim", "nothing recorded"));
    for (const app of appSources(msg.json, [], 0)) {
      const kind = typeof app.mimeType === "string" ? " (" + app.mimeType + ")" : "";
      body.append(el("p", "note", app.uri + kind + ": the MCP App's HTML, shown as text, never run"));
      body.append(el("pre", "raw app", app.text));
    }
  }

  function lineLink(lane, line, long) {
    const link = el("a", "loc", long ? lane.cassette + ":" + line : "L" + line);
    if (lane.href) link.href = lane.href;
    link.title = "the cassette at " + lane.cassette + ":" + line;
    return link;
  }

  // --- one message -----------------------------------------------------------------------------------
  const ARROW = { to: "→", from: "←" };

  function message(msg, lane) {
    const fold = el("details", "msg " + msg.dir + (msg.depth ? " depth" + msg.depth : ""));
    const head = el("summary");
    // Spans with spaces between them, so that copied text and a screen reader read words apart.
    const parts = [el("span", "arrow", ARROW[msg.dir])];
    if (msg.method && msg.kind !== "response" && msg.kind !== "answer") parts.push(el("span", "method", msg.method));
    if (msg.text) parts.push(el("span", "text " + (msg.style || ""), msg.text));
    for (const note of msg.notes || []) parts.push(el("span", "took", "(" + note + ")"));
    for (const mark of msg.marks || []) parts.push(el("span", "mark", "⚠ " + mark));
    if (msg.late) parts.push(el("span", "mark late", "↯ " + msg.late));
    if (msg.took) parts.push(el("span", "took", msg.took));
    for (const [key, said] of [["differed", "answer differed"], ["withheld", "withheld"]]) {
      if (!msg[key]) continue;
      fold.classList.add("differed");
      parts.push(el("span", "mark bad", said));
    }
    parts.forEach((part, k) => head.append(...(k ? [" ", part] : [part])));
    fold.append(head, el("div", "body"));
    fold.addEventListener("toggle", () => fold.open && fillBody(fold, msg, lane));
    return fold;
  }

  function msgKinds(msg) {
    const kinds = [];
    if (msg.error) kinds.push("error");
    if ((msg.marks || []).length) kinds.push("fault");
    if (msg.differed || msg.withheld) kinds.push("differed");
    if (msg.late) kinds.push("cancel");
    return kinds;
  }

  // --- one row: an interaction, or a miss -------------------------------------------------------------
  function interactionRow(row, lane, laneIndex) {
    const node = el("article", "row");
    node.id = "l" + laneIndex + "-i" + row.n;
    const gutter = el("div", "gutter");
    gutter.append(el("span", "idx", "[" + row.n + "]"));
    const first = row.msgs[0];
    if (first && first.at !== null && first.at !== undefined) gutter.append(el("span", "at", "+" + first.at.toFixed(3) + "s"));
    if (row.line) gutter.append(lineLink(lane, row.line, false));
    const rec = el("div", "rec");
    for (const msg of row.msgs) rec.append(message(msg, lane));
    const notes = [];
    if (row.match) notes.push("match: " + row.match);
    if (row.cancelled !== null && row.cancelled !== undefined) notes.push("cancelled by the host in [" + row.cancelled + "]");
    if (row.cancels !== undefined) notes.push("cancels the request of [" + row.cancels + "]");
    if (row.round) notes.push("input_required round " + row.round.k + " of " + row.round.of);
    for (const text of notes) rec.append(el("p", "note", text));
    if (row.after !== undefined) rec.append(afterNote(row));
    node.append(gutter, rec);
    const kinds = new Set();
    if ((row.cancelled !== null && row.cancelled !== undefined) || row.cancels !== undefined) kinds.add("cancel");
    if (lane.live) node.append(liveCell(row, node, kinds));
    return { node, kinds, msgs: row.msgs };
  }

  // A model's exchange: which MCP message the wall clock puts right before it (a link to its row).
  function afterNote(row) {
    const note = el("p", "note", (row.how ? row.how + " by vcrpy; " : "") + "in time: ");
    if (!row.after) note.append("before any MCP message");
    else {
      const link = el("a", "jump", (row.after.server ? row.after.server + " " : "") + "[" + row.after.n + "] " + row.after.method);
      link.href = "#l" + row.after.lane + "-i" + row.after.n;
      note.append("after ", link);
    }
    return note;
  }

  function liveCell(row, node, kinds) {
    const cell = el("div", "live");
    const live = row.live || { state: "idle" };
    const said = {
      played: live.plays > 1 ? "✓ played " + live.plays + " times" : "✓ played",
      sent: "✓ sent",
      unplayed: "never asked: unplayed",
      idle: "not part of this live session",
    }[live.state];
    cell.append(el("span", "badge " + live.state, said));
    if (typeof live.at === "number") cell.append(" ", el("span", "at", "at +" + live.at.toFixed(3) + "s"));
    node.classList.add(live.state);
    if (live.state === "unplayed") kinds.add("unplayed");
    if (live.extra) {
      cell.append(el("span", "badge bad", "asked " + plural(live.extra, "more time") + " than recorded"));
      kinds.add("repeat");
    }
    for (const msg of row.msgs) {
      for (const [key, title] of [["differed", "the host answered " + msg.method + " otherwise:"], ["withheld", "withheld:"]]) {
        if (!msg[key]) continue;
        const box = el("div", "diff");
        box.append(el("p", "", title));
        box.append(differences(msg[key]));
        cell.append(box);
        kinds.add("differed");
      }
    }
    return cell;
  }

  function differences(list) {
    const out = el("ul", "diffs");
    for (const text of list) {
      const item = el("li");
      const cut = text.indexOf(": ");
      if (cut > 0 && text.slice(0, cut).indexOf(" ") < 0) {
        item.append(el("code", "path", text.slice(0, cut)), ": " + text.slice(cut + 2));
      } else item.textContent = text;
      out.append(item);
    }
    return out;
  }

  function missRow(miss, lane, laneIndex) {
    const node = el("article", "row miss");
    const gutter = el("div", "gutter");
    gutter.append(el("span", "idx bad", "miss"));
    const rec = el("div", "rec");
    if (miss.closest.length) rec.append(el("p", "note", "closest recordings:"));
    else rec.append(el("p", "note", "no recording of " + miss.method + " comes close"));
    miss.closest.forEach((c, k) => {
      const box = el("div", "closest");
      const head = el("p");
      const link = el("a", "jump", (k + 1) + ". interactions[" + c.interaction + "]");
      link.href = "#l" + laneIndex + "-i" + c.interaction;
      head.append(link, " " + (c.plays ? "already played " + plural(c.plays, "time") : "not played yet") + " ");
      if (c.line) head.append(lineLink(lane, c.line, true));
      box.append(head, differences(c.differences));
      rec.append(box);
    });
    const cell = el("div", "live");
    const asked = { dir: "to", kind: "request", method: miss.method, name: miss.name, text: miss.text, marks: [] };
    Object.assign(asked, { json: miss.json, hit: miss.hit });
    const fold = message(asked, lane);
    fold.classList.add("missed");
    cell.append(el("span", "badge bad", "missed: " + miss.reason), fold);
    if (miss.fixes.length) {
      cell.append(el("p", "note", "how to fix:"));
      const fixes = el("ol", "fixes");
      for (const fix of miss.fixes) fixes.append(el("li", "", fix));
      cell.append(fixes);
    }
    node.append(gutter, rec, cell);
    return { node, kinds: new Set(["miss"]), msgs: [asked] };
  }

  // --- lanes -----------------------------------------------------------------------------------------
  function laneHead(lane, section) {
    const head = el("div", "lanehead");
    const title = el("h2");
    if (lane.name) title.append(el("span", "server", lane.name), " ");
    const file = el("a", "file", lane.cassette || "cassette");
    if (lane.href) file.href = lane.href;
    title.append(file);
    head.append(title);
    if (lane.facts.length) head.append(el("p", "facts", lane.facts.join(" · ")));
    if (lane.description) head.append(el("p", "dim", lane.description));
    head.append(el("p", "counts", lane.counts.join(" · ")));
    if (!lane.live && data.runner === "pytest" && lane.kind !== "model") {
      const said = "no live session reported: the host never started this server, or its replay was killed first";
      head.append(el("p", "livesum bad", said));
    }
    if (lane.live) {
      const live = lane.live;
      const said = [
        "played " + live.played + " of " + live.total,
        plural(live.missed, "miss", "misses"),
        live.unplayed + " unplayed",
        plural(live.differed, "answer") + " differed",
      ];
      if (live.sessions > 1) said.unshift(live.sessions + " live sessions");
      const bad = live.missed || live.unplayed || live.differed;
      head.append(el("p", "livesum " + (bad ? "bad" : "good"), "live: " + said.join(", ")));
      if (live.notes.length) {
        const notes = el("ul", "notes");
        for (const text of live.notes) notes.append(el("li", "", text));
        head.append(notes);
      }
      const cols = el("div", "cols");
      cols.append(el("span", "", ""), el("span", "", "recorded"), el("span", "", "live"));
      head.append(cols);
    }
    section.append(head);
  }

  const queue = [];
  const main = byId("lanes");
  data.lanes.forEach((lane, laneIndex) => {
    const section = el("section", "lane" + (lane.live ? " with-live" : ""));
    section.setAttribute("aria-label", (lane.name ? lane.name + ": " : "") + lane.cassette);
    laneHead(lane, section);
    const body = el("div", "rows");
    section.append(body);
    main.append(section);
    queue.push({ lane, laneIndex, body, next: 0, round: null, session: null });
  });

  function drawOne(job) {
    const item = job.lane.rows[job.next++];
    let drawn;
    if (item.miss) drawn = missRow(item, job.lane, job.laneIndex);
    else {
      if (job.lane.several && item.session !== job.session) {
        job.session = item.session;
        job.body.append(el("h3", "session", "recorded session " + item.session));
      }
      drawn = interactionRow(item, job.lane, job.laneIndex);
    }
    let parent = job.body;
    if (item.round) {
      if (item.round.k === 1 || !job.round || job.round.first !== item.round.first) {
        job.round = { first: item.round.first, box: el("div", "round") };
        job.round.box.append(el("p", "roundhead", "input_required: " + plural(item.round.of, "round") + " of one request"));
        job.body.append(job.round.box);
      }
      parent = job.round.box;
    } else if (!item.miss) job.round = null;
    parent.append(drawn.node);
    const entry = { el: drawn.node, kinds: drawn.kinds, msgs: drawn.msgs.map(describe), text: drawn.node.textContent.toLowerCase() };
    for (const m of entry.msgs) for (const k of m.kinds) entry.kinds.add(k);
    if (["miss", "unplayed", "differed", "repeat"].some((k) => entry.kinds.has(k))) {
      entry.kinds.add("problem");
      drawn.node.classList.add("problem");
    }
    rows.push(entry);
    applyTo(entry);
  }

  function describe(msg) {
    if (msg.method) methods.add(msg.method);
    if (msg.name) names.add(msg.name);
    return { dir: msg.dir, method: msg.method || "", name: msg.name || "", kinds: msgKinds(msg) };
  }

  function pump() {
    const start = performance.now();
    while (queue.length && performance.now() - start < 40) {
      const job = queue[0];
      if (job.next >= job.lane.rows.length) queue.shift();
      else drawOne(job);
    }
    if (queue.length) later.postMessage(null);
    else finished();
  }
  // A message to itself lets the browser paint and take input between slices, without setTimeout's clamp.
  const channel = new MessageChannel();
  const later = channel.port2;
  channel.port1.onmessage = pump;

  // --- filters and keys --------------------------------------------------------------------------------
  const filters = { q: "", method: "", tool: "", dir: "", kind: "" };

  function matches(entry) {
    if (filters.kind && !entry.kinds.has(filters.kind)) return false;
    if (filters.q && entry.text.indexOf(filters.q) < 0) return false;
    if (!filters.method && !filters.tool && !filters.dir) return true;
    return entry.msgs.some(
      (m) =>
        (!filters.method || m.method === filters.method) &&
        (!filters.tool || m.name === filters.tool) &&
        (!filters.dir || m.dir === filters.dir),
    );
  }

  function applyTo(entry) {
    entry.el.hidden = !matches(entry);
  }

  function applyAll() {
    let shown = 0;
    for (const entry of rows) {
      applyTo(entry);
      shown += !entry.el.hidden;
    }
    for (const box of document.querySelectorAll(".round")) {
      box.hidden = !Array.from(box.querySelectorAll(".row")).some((r) => !r.hidden);
    }
    byId("shown").textContent = shown === rows.length ? plural(rows.length, "row") : shown + " of " + rows.length + " rows";
  }

  function fillSelect(id, values) {
    const select = byId(id);
    for (const value of Array.from(values).sort()) select.append(el("option", "", value));
  }

  function finished() {
    fillSelect("method", methods);
    fillSelect("tool", names);
    applyAll();
    document.documentElement.dataset.rendered = "yes";
    window.timelineDrawnMs = performance.now();
  }

  for (const id of ["q", "method", "tool", "dir", "kind"]) {
    byId(id).addEventListener("input", () => {
      filters[id] = id === "q" ? byId(id).value.trim().toLowerCase() : byId(id).value;
      applyAll();
    });
  }
  byId("filters").addEventListener("submit", (event) => event.preventDefault());
  function foldAll(open) {
    for (const entry of rows) {
      if (entry.el.hidden) continue;
      for (const fold of entry.el.querySelectorAll("details.msg")) fold.open = open;
    }
  }
  byId("unfold").addEventListener("click", () => foldAll(true));
  byId("fold").addEventListener("click", () => foldAll(false));

  function jump(step) {
    const problems = rows.filter((entry) => entry.kinds.has("problem") && !entry.el.hidden);
    if (!problems.length) return;
    const here = document.activeElement && document.activeElement.closest ? document.activeElement.closest(".row") : null;
    let at = problems.findIndex((entry) => entry.el === here);
    at = at < 0 ? (step > 0 ? 0 : problems.length - 1) : (at + step + problems.length) % problems.length;
    const target = problems[at].el;
    const focus = target.querySelector("summary") || target;
    focus.focus();
    target.scrollIntoView({ block: "center" });
  }

  document.addEventListener("keydown", (event) => {
    const typing = /^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName);
    if (event.key === "Escape") {
      for (const id of ["q", "method", "tool", "dir", "kind"]) byId(id).value = "";
      for (const key of Object.keys(filters)) filters[key] = "";
      applyAll();
      if (typing) event.target.blur();
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "/") {
      event.preventDefault();
      byId("q").focus();
    } else if (event.key === "n" || event.key === "p") {
      jump(event.key === "n" ? 1 : -1);
    }
  });

  // The verdict: what the live sessions did, or the cassette's counts.
  const lives = data.lanes.filter((lane) => lane.live).map((lane) => lane.live);
  const verdict = byId("verdict");
  if (lives.length) {
    const sum = (key) => lives.reduce((total, live) => total + live[key], 0);
    const parts = [plural(sum("missed"), "miss", "misses"), sum("unplayed") + " unplayed", plural(sum("differed"), "answer") + " differed"];
    verdict.textContent = "replayed: " + parts.join(", ");
    verdict.className = sum("missed") || sum("unplayed") || sum("differed") ? "bad" : "good";
  } else {
    verdict.textContent = "the cassette alone: no live session";
  }
  pump();
})();
