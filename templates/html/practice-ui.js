{% raw %}
/* The practice page's buttons: check a question, reveal its worked steps one at a time, keep
   what was typed in localStorage (this browser only). */
(function () {
  var KEY = WSG.key, W = WSG.words;
  var STORE = "worksheetgen-practice:" + KEY.sheet;

  function esc(t) {
    return String(t).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  /* A sentence with its placeholders filled: html[name] is markup already, text is escaped. */
  function say(name, text, html) {
    var out = esc(W[name]);
    Object.keys(text || {}).forEach(function (k) { out = out.split("{" + k + "}").join(esc(text[k])); });
    Object.keys(html || {}).forEach(function (k) { out = out.split("{" + k + "}").join(html[k]); });
    return out;
  }
  function entries(n, name) {
    return Array.prototype.slice.call(document.querySelectorAll('[data-q="' + n + '"][data-answer="' + CSS.escape(name) + '"]'));
  }
  function cellName(input) {
    var label = input.getAttribute("aria-label") || "";
    var colon = label.indexOf(": ");
    return colon >= 0 ? label.slice(colon + 2) : label;
  }

  function checkQuestion(q) {
    var vals = {}, full = {};
    q.answers.forEach(function (a) {
      var box = document.getElementById("v-" + q.number + "-" + a.name);
      if (!box) return;
      var inputs = entries(q.number, a.name);
      var html = [], state = "";
      if (a.kind === "text") {
        html.push(say("text_part", { part: a.part.slice(1, -1) }));
      } else if (a.kind === "choice" && a.right) {
        // mark all that apply: every box ticked, scored per option as grade scores it
        var m = WSG.gradeMulti(a, inputs.filter(function (i) { return i.checked; }).map(function (i) { return i.value; }));
        var pm = a.part.slice(1, -1);
        vals[a.name] = null; full[a.name] = m.ok;
        if (m.blank) html.push(say("blank", { part: pm }));
        else if (m.ok) { html.push(say("right", { part: pm })); state = "right"; }
        else if (m.share > 0) { html.push(say("partly_right", { part: pm, right: m.hits, wrong: m.misses, share: Math.round(m.share * 100) })); state = "wrong"; }
        else { html.push(say("wrong_one", { part: pm })); state = "wrong"; }
      } else if (a.kind === "choice") {
        var chosen = inputs.filter(function (i) { return i.checked; })[0];
        var r = WSG.gradeChoice(q, a, chosen ? chosen.value : null, vals, full, q.carry);
        var p = a.part.slice(1, -1);
        if (r.blank) html.push(say("blank", { part: p }));
        else if (r.ok) { html.push(say("right", { part: p })); state = "right"; }
        else if (r.carried) { html.push(say("carried", { part: p, sources: sourcesText(q, r.sources) })); state = "right"; }
        else { html.push(say("wrong_one", { part: p })); state = "wrong"; slipLines(r.slips, html); }
      } else {
        var key = WSG.grid(a.grid);
        var got = key.map(function (row) { return row.map(function () { return NaN; }); });
        var byCell = {}, unreadable = [];
        inputs.forEach(function (i) {
          var r0 = +i.getAttribute("data-r") - 1, c0 = +i.getAttribute("data-c") - 1;
          var x = WSG.parseNumber(i.value);
          if (x === null) { unreadable.push(i.value.trim()); x = NaN; }
          if (r0 < got.length && c0 < got[0].length) { got[r0][c0] = x; byCell[r0 + "," + c0] = i; }
        });
        var res = WSG.gradeNumeric(q, a, got, vals, full, q.carry);
        var p2 = a.part.slice(1, -1), total = 0, answered = 0, wrong = [], carried = 0;
        res.right.forEach(function (row, i) {
          row.forEach(function (ok, j) {
            total++;
            var input = byCell[i + "," + j];
            if (res.answered[i][j]) answered++;
            if (res.carried[i][j]) carried++;
            var bad = res.answered[i][j] && !ok && !res.carried[i][j];
            if (bad) wrong.push(input ? cellName(input) : "");
            if (input) {
              if (bad) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
              input.classList.toggle("entry-right", res.answered[i][j] && !bad);
            }
          });
        });
        unreadable.forEach(function (t) { html.push(say("unreadable", { part: p2, text: t })); });
        if (answered === 0 && !unreadable.length) html.push(say("blank", { part: p2 }));
        else if (wrong.length) {
          state = "wrong";
          html.push(total === 1 ? say("wrong_one", { part: p2 })
            : say("wrong", { part: p2, wrong: wrong.length, total: total, entries: wrong.join("; ") }));
          slipLines(res.slips, html);
        } else if (answered < total) {
          html.push(say("partly_blank", { part: p2, missing: total - answered, total: total }));
        } else if (carried) {
          state = "right"; html.push(say("carried", { part: p2, sources: sourcesText(q, res.sources) }));
        } else { state = "right"; html.push(say("right", { part: p2 })); }
      }
      box.className = "verdict " + state;
      box.setAttribute("data-state", state || "blank");
      box.innerHTML = html.map(function (h) { return "<p>" + h + "</p>"; }).join("");
    });
  }
  function sourcesText(q, names) {
    return names.map(function (n) {
      for (var i = 0; i < q.answers.length; i++) if (q.answers[i].name === n) return q.answers[i].part;
      return n;
    }).join(", ");
  }
  function slipLines(slips, html) {
    if (!slips.length) { html.push(say("no_slip")); return; }
    slips.forEach(function (s) {
      var line = say("slip", {}, { title: s.title, what: s.what });
      if (s.avoid) line += " " + say("avoid", {}, { avoid: s.avoid });
      html.push('<span class="slip-named" data-slip="' + esc(s.name) + '">' + line + "</span>");
    });
  }

  function load() {
    try { return JSON.parse(localStorage.getItem(STORE) || "{}"); } catch (e) { return {}; }
  }
  function save() {
    var state = { entries: {}, steps: {} };
    document.querySelectorAll("[data-entry]").forEach(function (i) {
      if (i.type === "radio") { if (i.checked) state.entries[i.name] = i.value; }
      else if (i.type === "checkbox") { if (i.checked) (state.entries[i.name] = state.entries[i.name] || []).push(i.value); }
      else if (i.value) state.entries[i.getAttribute("data-entry")] = i.value;
    });
    document.querySelectorAll("ol.worked").forEach(function (ol) {
      state.steps[ol.id] = ol.querySelectorAll("li:not([hidden])").length;
    });
    try { localStorage.setItem(STORE, JSON.stringify(state)); } catch (e) { /* private mode */ }
  }
  function reveal(button, count) {
    var ol = document.getElementById(button.getAttribute("aria-controls"));
    var hidden = ol.querySelectorAll("li[hidden]");
    for (var i = 0; i < count && i < hidden.length; i++) hidden[i].hidden = false;
    if (!ol.querySelector("li[hidden]")) { button.disabled = true; button.textContent = W.all_steps_shown; }
  }

  var saved = load();
  document.querySelectorAll("[data-entry]").forEach(function (i) {
    var boxed = i.type === "radio" || i.type === "checkbox";
    var v = (saved.entries || {})[boxed ? i.name : i.getAttribute("data-entry")];
    if (v !== undefined) {
      if (i.type === "radio") i.checked = i.value === v;
      else if (i.type === "checkbox") i.checked = Array.isArray(v) && v.indexOf(i.value) >= 0;
      else i.value = v;
    }
    i.addEventListener("change", save);
    i.addEventListener("input", save);
  });
  document.querySelectorAll("button.reveal").forEach(function (b) {
    var n = (saved.steps || {})[b.getAttribute("aria-controls")] || 0;
    if (n) reveal(b, n);
    b.addEventListener("click", function () { reveal(b, 1); save(); });
  });
  document.querySelectorAll("button.check").forEach(function (b) {
    var n = +b.getAttribute("data-check");
    b.addEventListener("click", function () {
      KEY.questions.forEach(function (q) { if (q.number === n) checkQuestion(q); });
    });
  });
})();
{% endraw %}
