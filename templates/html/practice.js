{% raw %}
"use strict";
/* worksheetgen's practice page: grade's rule for one sheet, in the browser (no request).
   Ported from worksheetgen/grading/responses.py (_parse_number) and grading/score.py (_close,
   _recompute and its steps, _diagnose, _grade_numeric, _grade_choice, multi_share); tested against them in
   tests/e2e/test_practice_browser.py. */
var WSG = (function () {
  var KEY = JSON.parse(document.getElementById("wsg-key").textContent);
  var WORDS = JSON.parse(document.getElementById("wsg-words").textContent);
  var SLACK = KEY.slack;
  var MASKED = {};
  KEY.masked.forEach(function (w) { MASKED[w] = true; });
  var NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
  var GROUP = "[ \u2009\u202f\u00a0]";
  var GROUPED = new RegExp("^[+-]?\\d{1,3}(?:" + GROUP + "\\d{3})*(?:\\.(?:\\d{3}(?:" + GROUP +
    "\\d{3})*(?:" + GROUP + "\\d{1,2})?|\\d+))?$");
  var FRACTION = /^([+-]?\d+)\s*\/\s*(\d+)$/;

  /* The number an entry holds (grade's _parse_number): NaN for a blank, null for text that
     is no number, -Infinity for a masked word. */
  function parseNumber(text) {
    var t = String(text).trim().replace(/\u2212/g, "-");
    if (t === "") return NaN;
    if (MASKED[t.toLowerCase()]) return -Infinity;
    if (t.length > 100) return null;
    if (KEY.comma && t.indexOf(",") >= 0) {
      /* a decimal comma (a point is one too); two separators are never a thousands' */
      if (t.split(/[,.]/).length > 2) return null;
      t = t.replace(",", ".");
    }
    if (GROUPED.test(t) && new RegExp(GROUP).test(t)) t = t.replace(new RegExp(GROUP, "g"), "");
    var x = null;
    if (NUMBER.test(t)) {
      x = parseFloat(t);
    } else {
      var m = FRACTION.exec(t);
      if (m && parseInt(m[2], 10) !== 0) x = fraction(m[1], m[2]);
    }
    if (x !== null && !isFinite(x)) return null;
    return x;
  }

  /* p/q rounded once, as Python's float(Fraction(p, q)) (exact for small numbers, and
     through BigInt for large ones). */
  function fraction(p, q) {
    var P = BigInt(p), Q = BigInt(q);
    if (P < 0n ? -P < 9007199254740992n : P < 9007199254740992n) {
      if (Q < 9007199254740992n) return Number(P) / Number(Q);
    }
    var neg = P < 0n; if (neg) P = -P;
    var whole = P / Q, rest = P % Q, digits = "";
    for (var i = 0; i < 40 && rest !== 0n; i++) { rest *= 10n; digits += (rest / Q).toString(); rest %= Q; }
    var x = parseFloat(whole.toString() + "." + (digits || "0"));
    return neg ? -x : x;
  }

  function grid(g) {
    return g.map(function (row) { return row.map(function (x) { return x === "-inf" ? -Infinity : x; }); });
  }

  /* grade's _close: within tol (+ the float slack) of the expected value; -inf only -inf. */
  function close(expected, got, tol) {
    return Math.abs(expected - got) <= tol + SLACK || expected === got;
  }

  function shape(m) { return [m.length, m.length ? m[0].length : 0]; }
  function map2(m, f) { return m.map(function (row, i) { return row.map(function (x, j) { return f(x, i, j); }); }); }
  function transpose(m) { return m[0].map(function (_, j) { return m.map(function (row) { return row[j]; }); }); }
  function matmul(a, b) {
    if (a[0].length !== b.length) return null;
    return a.map(function (row) {
      return b[0].map(function (_, j) {
        var s = 0; for (var k = 0; k < row.length; k++) s += row[k] * b[k][j]; return s;
      });
    });
  }
  function softmaxRows(m) {
    return m.map(function (row) {
      var top = Math.max.apply(null, row);
      var e = row.map(function (x) { return Math.exp(x - top); });
      var s = e.reduce(function (u, v) { return u + v; }, 0);
      return e.map(function (x) { return x / s; });
    });
  }
  function givenGrid(v) {
    if (Array.isArray(v) && v.length && Array.isArray(v[0])) return grid(v);
    if (Array.isArray(v) && v.length) return grid([v]);
    if (typeof v === "number" || v === "-inf") return grid([[v]]);
    return null;
  }

  function answerOf(q, name) {
    for (var i = 0; i < q.answers.length; i++) if (q.answers[i].name === name) return q.answers[i];
    return null;
  }
  function roundingOf(q, name) { var a = answerOf(q, name); return a ? a.rounding : 0; }

  /* grade's _step: one carried step, [value, slack] or null where it does not fit. */
  function step(q, op, names, xs, args) {
    var x = xs[0];
    if (op === "matmul" || op === "matmul_t") {
      if (xs.length !== 2) return null;
      var right = op === "matmul_t" ? transpose(xs[1]) : xs[1];
      var out = matmul(x, right);
      if (out === null) return null;
      var r0 = roundingOf(q, names[0]), r1 = roundingOf(q, names[1]);
      var colSums = right[0].map(function (_, j) { return right.reduce(function (s, row) { return s + Math.abs(row[j]); }, 0); });
      var rowSums = x.map(function (row) { return row.reduce(function (s, v) { return s + Math.abs(v); }, 0); });
      return [out, map2(out, function (_, i, j) { return r0 * colSums[j] + r1 * rowSums[i]; })];
    }
    if (op === "scale") {
      var d = args.d_k;
      return typeof d === "number" && d > 0 ? [map2(x, function (v) { return v / Math.sqrt(d); }), 0] : null;
    }
    if (op === "mask") {
      var sh = shape(x);
      return sh[0] === sh[1] ? [map2(x, function (v, i, j) { return j > i ? -Infinity : v; }), 0] : null;
    }
    if (op === "softmax") return [softmaxRows(x), 0];
    if (op === "times") {
      var f = args.factor;
      return typeof f === "number" ? [map2(x, function (v) { return v * f; }), 0] : null;
    }
    if (op === "shape") {
      var cols = args.cols, s2 = shape(x);
      if (typeof cols !== "number" || s2[0] !== 1 || s2[1] !== 1) return null;
      return [[[x[0][0], cols]], 0];
    }
    if (op === "compare_top") {
      if (xs.length !== 2) return null;
      var text = topChoice(x, xs[1], args);
      return text === null ? null : [text, 0];
    }
    return null;
  }

  function normText(t) { return String(t).toLowerCase().split(/\s+/).filter(Boolean).join(" "); }

  function topChoice(before, after, args) {
    var topOf = args.top_of, options = args.options;
    if (!Array.isArray(topOf) || !topOf.length || !Array.isArray(options) || options.length !== 3) return null;
    var top = 0;
    for (var i = 1; i < topOf.length; i++) if (topOf[i] > topOf[top]) top = i;
    if (before.length !== 1 || after.length !== 1 || top >= Math.min(before[0].length, after[0].length)) return null;
    var u = before[0][top], v = after[0][top];
    if (isNaN(u) || isNaN(v)) return null;
    return normText(u > v ? options[0] : u < v ? options[1] : options[2]);
  }

  /* grade's _recompute: the answer carried through the first of its steps that applies. */
  function recompute(q, name, vals) {
    var asked = {};
    q.answers.forEach(function (a) { asked[a.name] = true; });
    for (var c = 0; c < q.carries.length; c++) {
      var carry = q.carries[c];
      if (carry.answer !== name) continue;
      var anyAsked = carry.inputs.some(function (n) { return asked[n]; });
      var badAsked = carry.inputs.some(function (n) { return asked[n] && !Array.isArray(vals[n]); });
      if (!anyAsked || badAsked) continue;
      var xs = carry.inputs.map(function (n) { return asked[n] ? vals[n] : givenGrid(q.given[n]); });
      if (xs.some(function (x) { return x === null || x === undefined; })) continue;
      var value = null, slack = 0, ok = true;
      for (var i = 0; i < carry.steps.length; i++) {
        var done = step(q, carry.steps[i], carry.inputs, i === 0 ? xs : [value], carry.args);
        if (done === null) { ok = false; break; }
        value = done[0];
        slack = i === carry.steps.length - 1 ? done[1] : 0;
      }
      if (ok) return { sources: carry.inputs.filter(function (n) { return asked[n]; }), value: value, slack: slack };
    }
    return null;
  }

  function slackAt(slack, i, j) { return Array.isArray(slack) ? slack[i][j] : slack; }

  /* One numeric part (grade's _grade_numeric): per entry right, carried or wrong, and the
     slips whose values match every entry given. */
  function gradeNumeric(q, a, got, vals, full, carryOn) {
    var key = grid(a.grid);
    var answered = map2(got, function (x) { return !isNaN(x); });
    var right = map2(got, function (x, i, j) { return answered[i][j] && close(key[i][j], x, a.tolerance); });
    var carried = map2(got, function () { return false; });
    var sources = [];
    vals[a.name] = got;
    var allRight = right.every(function (row) { return row.every(Boolean); });
    if (!allRight && carryOn) {
      var redo = recompute(q, a.name, vals);
      if (redo && Array.isArray(redo.value) && redo.value.length === got.length && redo.value[0].length === got[0].length) {
        var fromRight = redo.sources.every(function (s) { return full[s] === undefined ? true : full[s]; });
        if (fromRight) {
          right = map2(got, function (x, i, j) { return right[i][j] || (answered[i][j] && close(redo.value[i][j], x, a.tolerance)); });
        } else {
          carried = map2(got, function (x, i, j) {
            var own = a.rounding + slackAt(redo.slack, i, j);
            return answered[i][j] && !right[i][j] && close(redo.value[i][j], x, Math.max(a.tolerance, own));
          });
          if (carried.some(function (row) { return row.some(Boolean); })) sources = redo.sources;
        }
      }
    }
    full[a.name] = right.every(function (row) { return row.every(Boolean); });
    var wrongSome = false;
    map2(got, function (x, i, j) { if (answered[i][j] && !right[i][j]) wrongSome = true; });
    var slips = [];
    if (wrongSome) {
      q.slips.forEach(function (s) {
        var g = s.grids[a.name];
        if (!g) return;
        g = grid(g);
        if (g.length !== got.length || g[0].length !== got[0].length) return;
        var all = true;
        map2(got, function (x, i, j) { if (answered[i][j] && !close(g[i][j], x, a.tolerance)) all = false; });
        if (all) slips.push(s);
      });
    }
    return { right: right, carried: carried, answered: answered, sources: sources, slips: slips };
  }

  function gradeChoice(q, a, text, vals, full, carryOn) {
    var t = text === null ? null : normText(text);
    vals[a.name] = t;
    var ok = t !== null && t === a.text;
    full[a.name] = ok;
    var carried = false, sources = [];
    if (t !== null && !ok && carryOn) {
      var redo = recompute(q, a.name, vals);
      if (redo && typeof redo.value === "string" && !redo.sources.every(function (s) { return full[s] === undefined ? true : full[s]; })) {
        carried = redo.value === t;
        if (carried) sources = redo.sources;
      }
    }
    var slips = [];
    if (t !== null && !ok && a.choice_slips.length) {
      var chosen = {};
      a.choice_slips.forEach(function (p) { if (p[0] === t) chosen[p[1]] = true; });
      slips = q.slips.filter(function (s) { return chosen[s.name]; });
    } else if (t !== null && !ok) {
      slips = q.slips.filter(function (s) { return s.texts[a.name] !== undefined && s.texts[a.name] === t; });
    }
    return { ok: ok, carried: carried, sources: sources, slips: slips, blank: t === null };
  }

  // a mark-all part (grading.score.multi_share): each right option marked earns
  // 1/(number right), each wrong one costs 1/(number wrong), at least 0; or all or nothing
  function gradeMulti(a, texts) {
    var chosen = {};
    texts.forEach(function (t) { chosen[normText(t)] = true; });
    var hits = 0, misses = 0;
    Object.keys(chosen).forEach(function (t) { if (a.right.indexOf(t) >= 0) hits++; else misses++; });
    var ok = hits === a.right.length && misses === 0;
    var wrong = a.options - a.right.length;
    var share = a.all_or_nothing ? (ok ? 1 : 0)
      : Math.max(0, Math.min(1, hits / a.right.length - (wrong ? misses / wrong : 0)));
    return { ok: ok, blank: texts.length === 0, share: share, hits: hits, misses: misses };
  }

  return {
    key: KEY, words: WORDS, parseNumber: parseNumber, close: close, grid: grid,
    recompute: recompute, gradeNumeric: gradeNumeric, gradeChoice: gradeChoice,
    gradeMulti: gradeMulti, normText: normText
  };
})();
{% endraw %}
