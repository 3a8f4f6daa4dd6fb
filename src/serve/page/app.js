/*
 * The page of `agentledger serve` (docs/dashboards.md "The page"): plain script, no
 * build step. It polls the JSON API every 5 s (one round at a time, each with
 * its own AbortController) and renders every value with textContent and
 * createElement, never innerHTML: a LoopID like `<img src=x onerror=…>` is
 * shown as those characters. Money comes as picodollar strings and is shown
 * exactly with money.js; only the chart plots floats. Times are UTC.
 */
'use strict';
(function main() {
  var money = window.agentledgerMoney;
  var POLL_MS = 5000;
  var PALETTE = ['#2b6cb0', '#dd6b20', '#38a169', '#d53f8c', '#805ad5', '#d69e2e', '#319795', '#e53e3e', '#718096', '#4a5568', '#9c4221', '#2c7a7b'];

  /** The current filters, from the form. */
  function filters() {
    var form = document.querySelector('form.filters');
    return {
      range: form.elements.range.value,
      step: form.elements.step.value,
      by: form.elements.by.value,
      source: form.elements.source.value,
      model: form.elements.model.value.trim(),
      name: form.elements.name.value.trim(),
    };
  }

  /** Query string of the given parameters, empty ones left out. */
  function qs(params) {
    var q = new URLSearchParams();
    Object.keys(params).forEach(function (k) {
      if (params[k] !== '' && params[k] !== undefined && params[k] !== null) q.set(k, String(params[k]));
    });
    var text = q.toString();
    return text === '' ? '' : '?' + text;
  }

  function getJson(path, params, signal) {
    return fetch(path + qs(params), { signal: signal, headers: { accept: 'application/json' }, credentials: 'same-origin' }).then(function (res) {
      return res.json().then(function (body) {
        if (!res.ok) throw new Error(path + ': ' + (body && body.error ? body.error : res.status));
        return body;
      });
    });
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (k === 'text') node.textContent = attrs[k];
        else if (k === 'className') node.className = attrs[k];
        else node.setAttribute(k, attrs[k]);
      });
    }
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return node;
  }

  /** `2026-12-01T06:00:00Z` or `2026-12-01 06:00:00` -> `2026-12-01 06:00` (UTC, as labelled). */
  function utc(text, seconds) {
    if (text === null || text === undefined || text === '') return '';
    var t = String(text).replace('T', ' ').replace(/\.\d+Z?$/, '').replace(/Z$/, '');
    return seconds ? t : t.slice(0, 16);
  }

  // ---- Tables with a CSV button ------------------------------------------------

  /** RFC 4180: a field with a comma, quote, CR or LF is quoted, quotes doubled. */
  function csvField(text) {
    return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  /** The table's cells as CSV: exactly the header and cell texts shown. */
  function tableCsv(table) {
    var lines = [];
    table.querySelectorAll('tr').forEach(function (tr) {
      var cells = [];
      tr.querySelectorAll('th, td').forEach(function (c) {
        cells.push(csvField(c.textContent));
      });
      lines.push(cells.join(','));
    });
    return lines.join('\r\n') + '\r\n';
  }

  function download(name, text) {
    var url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
    var a = el('a', { href: url, download: name + '.csv' });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () {
      URL.revokeObjectURL(url);
    }, 1000);
  }

  /** Builds each `[data-table]` holder once: a title, a CSV button, an empty table. */
  var tables = {};
  document.querySelectorAll('[data-table]').forEach(function (holder) {
    var name = holder.getAttribute('data-table');
    var table = el('table', { 'data-testid': name + '-table' });
    var button = el('button', { type: 'button', className: 'csv', 'data-testid': name + '-csv', text: 'CSV' });
    button.addEventListener('click', function () {
      download(name, tableCsv(table));
    });
    holder.appendChild(el('div', { className: 'table-head' }, [el('h2', { text: holder.getAttribute('data-title') }), button]));
    holder.appendChild(el('div', { className: 'scroll' }, [table]));
    tables[name] = table;
  });

  /**
   * Replaces a table's rows. columns: [{ title, cell(row) -> string | Node, className }].
   * A cell that is a string becomes its text.
   */
  function fill(name, columns, rows, empty) {
    var table = tables[name];
    table.replaceChildren();
    var head = el('tr', null, columns.map(function (c) {
      return el('th', { text: c.title, className: c.className || '' });
    }));
    table.appendChild(el('thead', null, [head]));
    var body = el('tbody');
    rows.forEach(function (row) {
      body.appendChild(el('tr', null, columns.map(function (c) {
        var v = c.cell(row);
        var td = el('td', { className: c.className || '' });
        if (v instanceof Node) td.appendChild(v);
        else if (c.className === 'payload') td.appendChild(el('div', { className: 'clip', text: v === undefined || v === null ? '' : String(v) }));
        else td.textContent = v === undefined || v === null ? '' : String(v);
        return td;
      })));
    });
    table.appendChild(body);
    if (rows.length === 0) table.appendChild(el('caption', { text: empty || 'nothing in this range' }));
  }

  var usd = function (pico) {
    return pico === null || pico === undefined ? '' : money.formatUsd(pico);
  };
  var num = { className: 'num' };
  function col(title, cell, cls) {
    return { title: title, cell: cell, className: cls ? cls.className : '' };
  }

  // ---- Cards -----------------------------------------------------------------

  function renderCards(o) {
    var holder = document.querySelector('[data-testid="cards"]');
    var cards = [
      ['today', 'Spend today (UTC)', usd(o.today.costPicoUsd), o.today.calls + ' calls'],
      ['week', 'Last 7 days', usd(o.week.costPicoUsd), 'since ' + utc(o.week.since).slice(0, 10)],
      ['month', 'Last 30 days', usd(o.month.costPicoUsd), 'since ' + utc(o.month.since).slice(0, 10)],
      ['verified', 'Verified runtime cost (30 d)', usd(o.verified.costPicoUsd), o.verified.calls + ' calls'],
      ['unverified', 'Unverified, not counted (30 d)', usd(o.unverified.costPicoUsd), o.unverified.calls + ' calls'],
      ['calls', 'Model calls (30 d)', String(o.modelCalls), 'both sources'],
      ['active', 'Active loops', String(o.activeLoops), 'an envelope within the hour'],
      ['stuck', 'Stuck loops', String(o.stuckLoops), 'firing stuck_loop alerts'],
      ['alerts', 'Firing alerts', String(o.firingAlerts), 'all rules'],
      ['violations', 'Chain violations', String(o.chainViolations), 'stored, every verdict but ok'],
    ];
    holder.replaceChildren.apply(holder, cards.map(function (c) {
      var card = el('div', { className: 'card', 'data-testid': 'card-' + c[0] }, [
        el('div', { className: 'label', text: c[1] }),
        el('div', { className: 'value', 'data-testid': 'card-' + c[0] + '-value', text: c[2] }),
        el('div', { className: 'note', text: c[3] }),
      ]);
      if ((c[0] === 'alerts' || c[0] === 'stuck' || c[0] === 'violations' || c[0] === 'unverified') && c[2] !== '0' && c[2] !== '$0.00') card.classList.add('warn');
      return card;
    }));
  }

  // ---- Chart -----------------------------------------------------------------

  var chart = null;
  var chartKeys = '';
  var chartSeries = null;

  /** An axis label: $1.5k, $25M (the exact figures are in the legend and the tables). */
  function compactUsd(v) {
    var abs = Math.abs(v);
    var units = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'k']];
    for (var i = 0; i < units.length; i++) {
      if (abs >= units[i][0]) return '$' + +(v / units[i][0]).toPrecision(3) + units[i][1];
    }
    return '$' + +v.toPrecision(3);
  }

  /** A stacked bar chart: each line is the sum of those below it; the legend shows each key's own exact text. */
  function renderChart(s) {
    var holder = document.querySelector('[data-testid="spend-chart"]');
    chartSeries = s;
    var xs = s.buckets.map(function (b) {
      return Date.parse(b) / 1000;
    });
    var running = xs.map(function () {
      return 0;
    });
    var stacked = s.series.map(function (line) {
      running = running.map(function (v, i) {
        return v + money.toFloatUsd(line.costPicoUsd[i]);
      });
      return running.slice();
    });
    // Drawn top layer first, so each smaller stack paints over the larger.
    var order = s.series.map(function (_, i) {
      return s.series.length - 1 - i;
    });
    var data = [xs].concat(order.map(function (i) {
      return stacked[i];
    }));
    var keys = JSON.stringify([s.step, order.map(function (i) {
      return s.series[i].key;
    })]);
    if (chart && keys === chartKeys) {
      chart.setData(data);
      return;
    }
    if (chart) chart.destroy();
    holder.replaceChildren();
    chartKeys = keys;
    var series = [{ label: 'UTC', value: function (u, v) {
      return v === null || v === undefined ? '' : new Date(v * 1000).toISOString().replace('T', ' ').slice(0, s.step === 'day' ? 10 : 16);
    } }].concat(order.map(function (i) {
      var color = PALETTE[i % PALETTE.length];
      return {
        label: s.series[i].key === '' ? '(none)' : s.series[i].key,
        stroke: color,
        fill: color + 'cc',
        width: 1,
        paths: uPlot.paths.bars({ size: [0.8, 64], align: 0 }),
        points: { show: false },
        value: function (u, v, si, idx) {
          var line = chartSeries && chartSeries.series[i];
          return idx === null || idx === undefined || !line ? '' : money.formatUsd(line.costPicoUsd[idx] || '0');
        },
      };
    }));
    chart = new uPlot({
      width: Math.max(320, holder.clientWidth || 900),
      height: 260,
      series: series,
      axes: [
        { incrs: s.step === 'day' ? [86400, 2 * 86400, 7 * 86400, 30 * 86400] : [3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400], values: function (u, splits) {
          return splits.map(function (v) {
            var t = new Date(v * 1000).toISOString();
            return s.step === 'day' ? t.slice(5, 10) : t.slice(5, 10) + ' ' + t.slice(11, 16);
          });
        } },
        { values: function (u, splits) {
          return splits.map(compactUsd);
        }, size: 64 },
      ],
      scales: { x: { time: true, range: function (u, min, max) {
        var pad = s.step === 'day' ? 86400 : 3600;
        return [min, max + pad];
      } } },
      tzDate: function (ts) {
        return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');
      },
      cursor: { drag: { x: false, y: false } },
    }, data, holder);
  }

  // ---- Panels ----------------------------------------------------------------

  var selectedRoot = null;

  function renderSeries(s) {
    document.querySelector('[data-testid="series-caption"]').textContent =
      '(per ' + s.step + ', by ' + s.by + ', ' + utc(s.since) + ' to ' + utc(s.until) + ' UTC)';
    var total = document.querySelector('[data-testid="series-total"]');
    total.textContent = usd(s.totalCostPicoUsd);
    total.setAttribute('data-pico', s.totalCostPicoUsd);
    document.querySelector('[data-testid="series-calls"]').textContent = String(s.totalCalls);
    renderChart(s);
    fill('series', [
      col(s.by, function (l) {
        return l.key;
      }),
      col('calls', function (l) {
        return String(l.totalCalls);
      }, num),
      col('USD', function (l) {
        return usd(l.totalCostPicoUsd);
      }, num),
    ], s.series);
    var rows = s.buckets.map(function (b, i) {
      return { bucket: b, calls: s.totals.calls[i], cost: s.totals.costPicoUsd[i] };
    }).filter(function (r) {
      return r.calls !== 0 || r.cost !== '0';
    });
    fill('buckets', [
      col(s.step === 'day' ? 'day (UTC)' : 'hour (UTC)', function (r) {
        return s.step === 'day' ? r.bucket.slice(0, 10) : utc(r.bucket);
      }),
      col('calls', function (r) {
        return String(r.calls);
      }, num),
      col('USD', function (r) {
        return usd(r.cost);
      }, num),
    ], rows);
  }

  function renderRoots(rows) {
    fill('roots', [
      col('root', function (r) {
        if (r.source !== 'runtime') return r.rootLoopId;
        var b = el('button', { type: 'button', className: 'link', 'data-testid': 'root-link', 'data-root': r.rootLoopId, text: r.rootLoopId });
        b.addEventListener('click', function () {
          selectedRoot = r.rootLoopId;
          refreshTree();
        });
        return b;
      }),
      col('source', function (r) {
        return r.source;
      }),
      col('name', function (r) {
        return r.name;
      }),
      col('calls', function (r) {
        return String(r.calls);
      }, num),
      col('USD', function (r) {
        return usd(r.costPicoUsd);
      }, num),
      col('last hour (UTC)', function (r) {
        return utc(r.lastHour);
      }),
    ], rows);
  }

  function renderNames(rows) {
    fill('names', [
      col('loop name', function (r) {
        return r.name;
      }),
      col('calls', function (r) {
        return String(r.calls);
      }, num),
      col('USD', function (r) {
        return usd(r.costPicoUsd);
      }, num),
    ], rows);
  }

  function verdictText(v) {
    return Object.keys(v).sort().map(function (k) {
      return k + ' ' + v[k];
    }).join(', ');
  }

  function renderTree(t) {
    document.querySelector('[data-testid="tree-root"]').textContent = t ? t.root : 'pick a root above';
    var cost = document.querySelector('[data-testid="tree-subtree-cost"]');
    cost.textContent = t ? usd(t.subtreeModelCostPicoUsd) : '–';
    cost.setAttribute('data-pico', t ? t.subtreeModelCostPicoUsd : '');
    fill('tree', [
      col('loop', function (l) {
        var span = el('span', { className: 'indent', text: l.loopId });
        span.style.paddingLeft = l.depth * 1.2 + 'em';
        return span;
      }),
      col('name', function (l) {
        return l.name;
      }),
      col('depth', function (l) {
        return String(l.depth);
      }, num),
      col('outcome', function (l) {
        return l.outcome || 'running';
      }),
      col('calls', function (l) {
        return String(l.modelCalls);
      }, num),
      col('own USD', function (l) {
        return usd(l.modelCostPicoUsd);
      }, num),
      col('subtree USD', function (l) {
        return usd(l.subtreeModelCostPicoUsd);
      }, num),
      col('warnings', function (l) {
        return String(l.convergenceWarnings);
      }, num),
      col('envelopes by verdict', function (l) {
        return verdictText(l.verdicts);
      }),
    ], t ? t.loops : [], 'pick a root above');
  }

  function renderAlerts(rows, since) {
    var shown = rows.filter(function (a) {
      return a.state === 'firing' || Date.parse(a.lastNotifiedAt) / 1000 >= since;
    });
    fill('alerts', [
      col('state', function (a) {
        return a.state;
      }),
      col('severity', function (a) {
        return a.severity;
      }),
      col('rule', function (a) {
        return a.rule;
      }),
      col('subject', function (a) {
        return a.subject;
      }),
      col('fired (UTC)', function (a) {
        return utc(a.firedAt, true);
      }),
      col('resolved (UTC)', function (a) {
        return utc(a.resolvedAt, true);
      }),
      col('detail', function (a) {
        return a.detail;
      }, { className: 'payload' }),
    ], shown, 'no alert');
  }

  function renderSessions(rows, f) {
    var shown = rows.filter(function (s) {
      return (f.source === 'all' || f.source === 'craze') && f.name === '' && (f.model === '' || s.models.indexOf(f.model) >= 0);
    });
    fill('sessions', [
      col('session', function (s) {
        return s.sessionId;
      }),
      col('models', function (s) {
        return s.models.join(' ');
      }),
      col('USD', function (s) {
        return usd(s.costPicoUsd);
      }, num),
      col('turns done/failed', function (s) {
        return s.turnsDone + '/' + s.turnsFailed;
      }),
      col('sub-agents ok/failed', function (s) {
        return s.subagentsCompleted + '/' + s.subagentsFailed;
      }),
      col('last seen (UTC)', function (s) {
        return utc(s.lastSeen, true);
      }),
      col('cwd', function (s) {
        return s.cwd;
      }),
    ], shown, 'no craze session in this range');
  }

  function evidenceText(v) {
    if (v.verdict === 'fork' && v.evidence && typeof v.evidence === 'object' && v.evidence.stored) {
      var s = v.evidence.stored;
      return 'stored first: hash ' + s.hash + ', ' + s.kind + ' at ' + s.time + ', payload ' + s.payload;
    }
    return v.evidence === null ? '' : typeof v.evidence === 'string' ? v.evidence : JSON.stringify(v.evidence);
  }

  function renderViolations(shown) {
    fill('violations', [
      col('loop', function (v) {
        return v.loopId;
      }),
      col('seq', function (v) {
        return v.seq;
      }, num),
      col('verdict', function (v) {
        return v.verdict;
      }),
      col('kind', function (v) {
        return v.kind;
      }),
      col('time (as sent)', function (v) {
        return v.time;
      }),
      col('carried hash', function (v) {
        return v.carriedHash;
      }, { className: 'hash' }),
      col('recomputed hash', function (v) {
        return v.expectedHash;
      }, { className: 'hash' }),
      col('this version', function (v) {
        return v.verdict === 'fork' ? v.payload : '';
      }, { className: 'payload' }),
      col('evidence', evidenceText, { className: 'payload' }),
      col('detail', function (v) {
        return v.detail;
      }, { className: 'payload' }),
    ], shown, 'no chain violation');
  }

  function renderReconciliation(r) {
    fill('reconciliation', [
      col('loop', function (l) {
        return l.loopId;
      }),
      col('root', function (l) {
        return l.rootLoopId;
      }),
      col('model cost', function (l) {
        return usd(l.modelCostPicoUsd);
      }, num),
      col('model budget', function (l) {
        return usd(l.modelBudgetPicoUsd);
      }, num),
      col('model − budget', function (l) {
        return usd(l.modelMinusModelBudgetPicoUsd);
      }, num),
      col('budget − total_spend', function (l) {
        return usd(l.budgetMinusTotalSpendPicoUsd);
      }, num),
      col('budget − child_spend', function (l) {
        return usd(l.budgetMinusChildSpendPicoUsd);
      }, num),
    ], r.loops, 'every ledger agrees');
    fill('rootReconciliation', [
      col('root', function (x) {
        return x.rootLoopId;
      }),
      col('loops', function (x) {
        return String(x.loops);
      }, num),
      col('disagreeing', function (x) {
        return String(x.loopsDisagreeing);
      }, num),
      col('tree model cost', function (x) {
        return usd(x.treeModelCostPicoUsd);
      }, num),
      col('tree model budget', function (x) {
        return usd(x.treeModelBudgetPicoUsd);
      }, num),
      col('tree budget', function (x) {
        return usd(x.treeBudgetPicoUsd);
      }, num),
    ], r.roots, 'every tree agrees');
  }

  // ---- Polling ----------------------------------------------------------------

  var RANGE_S = { '24h': 86400, '7d': 7 * 86400, '30d': 30 * 86400, '90d': 90 * 86400 };
  var current = null;
  var timer = null;
  var treeController = null;

  function refreshTree() {
    if (selectedRoot === null) return Promise.resolve();
    if (treeController) treeController.abort();
    var controller = new AbortController();
    treeController = controller;
    return getJson('/api/tree', { root: selectedRoot }, controller.signal).then(renderTree, function (err) {
      if (err.name !== 'AbortError') showError(err);
    });
  }

  function showError(err) {
    document.querySelector('[data-testid="status-error"]').textContent = err ? String(err.message || err) : '';
  }

  /** One round: every panel's request, under one AbortController; the next round starts when this one ends. */
  function refresh() {
    if (timer) clearTimeout(timer);
    timer = null;
    if (current) current.abort();
    var controller = new AbortController();
    current = controller;
    var f = filters();
    var since = Math.floor(Date.now() / 1000) - RANGE_S[f.range];
    var spendFilters = { source: f.source === 'all' ? '' : f.source, model: f.model, name: f.name };
    var signal = controller.signal;
    var step = f.step === 'hour' && f.range === '90d' ? 'day' : f.step;
    var jobs = [
      getJson('/api/overview', spendFilters, signal).then(renderCards),
      getJson('/api/series', Object.assign({ step: step, by: f.by, since: f.range }, spendFilters), signal).then(renderSeries),
      getJson('/api/roots', Object.assign({ since: f.range }, spendFilters), signal).then(renderRoots),
      getJson('/api/names', Object.assign({ since: f.range }, spendFilters), signal).then(renderNames),
      getJson('/api/alerts', { state: 'all' }, signal).then(function (rows) {
        renderAlerts(rows, since);
      }),
      getJson('/api/sessions', { since: f.range, limit: '50' }, signal).then(function (rows) {
        renderSessions(rows, f);
      }),
      getJson('/api/violations', { since: f.range, limit: '100' }, signal).then(renderViolations),
      getJson('/api/reconciliation', { limit: '100' }, signal).then(renderReconciliation),
      refreshTree(),
    ];
    return Promise.all(jobs).then(
      function () {
        if (current !== controller) return;
        showError(null);
        document.querySelector('[data-testid="last-refreshed"]').textContent =
          'last refreshed ' + new Date().toISOString().slice(11, 19) + ' UTC';
      },
      function (err) {
        if (err.name !== 'AbortError' && current === controller) showError(err);
      },
    ).then(function () {
      if (current === controller) {
        current = null;
        timer = setTimeout(refresh, POLL_MS);
      }
    });
  }

  document.querySelector('form.filters').addEventListener('change', function () {
    refresh();
  });
  document.querySelector('form.filters').addEventListener('submit', function (e) {
    e.preventDefault();
    refresh();
  });
  renderTree(null);
  refresh();
})();
