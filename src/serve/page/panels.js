/*
 * The page's panels (docs/dashboards.md "The page"): the cards, the spend
 * series (chart and tables), the top roots and names, the loop tree, alerts,
 * craze sessions, chain violations and the reconciliation, each rendered
 * from its API answer with tables.js's column declarations. A plain script
 * (no module), loaded after dom.js, tables.js and chart.js; app.js finds it
 * at globalThis.agentledgerPanels.
 */
'use strict';
(function attach(root) {
  var el = root.agentledgerDom.el;
  var utc = root.agentledgerDom.utc;
  var t = root.agentledgerTables;
  var fill = t.fill;
  var usd = t.usd;
  var col = t.col;
  var textCol = t.textCol;
  var countCol = t.countCol;
  var usdCol = t.usdCol;
  var utcCol = t.utcCol;
  var renderChart = root.agentledgerChart.renderChart;

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

  // ---- Spend -----------------------------------------------------------------

  function renderSeries(s) {
    document.querySelector('[data-testid="series-caption"]').textContent =
      '(per ' + s.step + ', by ' + s.by + ', ' + utc(s.since) + ' to ' + utc(s.until) + ' UTC)';
    var total = document.querySelector('[data-testid="series-total"]');
    total.textContent = usd(s.totalCostPicoUsd);
    total.setAttribute('data-pico', s.totalCostPicoUsd);
    document.querySelector('[data-testid="series-calls"]').textContent = String(s.totalCalls);
    renderChart(s);
    fill('series', [textCol(s.by, 'key'), countCol('calls', 'totalCalls'), usdCol('USD', 'totalCostPicoUsd')], s.series);
    var rows = s.buckets.map(function (b, i) {
      return { bucket: b, calls: s.totals.calls[i], cost: s.totals.costPicoUsd[i] };
    }).filter(function (r) {
      return r.calls !== 0 || r.cost !== '0';
    });
    fill('buckets', [
      col(s.step === 'day' ? 'day (UTC)' : 'hour (UTC)', function (r) {
        return s.step === 'day' ? r.bucket.slice(0, 10) : utc(r.bucket);
      }),
      countCol('calls', 'calls'),
      usdCol('USD', 'cost'),
    ], rows);
  }

  /** The top roots; a click on a runtime root calls onPick with its LoopID. */
  function renderRoots(rows, onPick) {
    fill('roots', [
      col('root', function (r) {
        if (r.source !== 'runtime') return r.rootLoopId;
        var b = el('button', { type: 'button', className: 'link', 'data-testid': 'root-link', 'data-root': r.rootLoopId, text: r.rootLoopId });
        b.addEventListener('click', function () {
          onPick(r.rootLoopId);
        });
        return b;
      }),
      textCol('source', 'source'),
      textCol('name', 'name'),
      countCol('calls', 'calls'),
      usdCol('USD', 'costPicoUsd'),
      utcCol('last hour (UTC)', 'lastHour'),
    ], rows);
  }

  function renderNames(rows) {
    fill('names', [textCol('loop name', 'name'), countCol('calls', 'calls'), usdCol('USD', 'costPicoUsd')], rows);
  }

  // ---- Loop tree -------------------------------------------------------------

  function verdictText(v) {
    return Object.keys(v).sort().map(function (k) {
      return k + ' ' + v[k];
    }).join(', ');
  }

  /** The loop tree of the picked root; null before one is picked. */
  function renderTree(tree) {
    document.querySelector('[data-testid="tree-root"]').textContent = tree ? tree.root : 'pick a root above';
    var cost = document.querySelector('[data-testid="tree-subtree-cost"]');
    cost.textContent = tree ? usd(tree.subtreeModelCostPicoUsd) : '–';
    cost.setAttribute('data-pico', tree ? tree.subtreeModelCostPicoUsd : '');
    fill('tree', [
      col('loop', function (l) {
        var span = el('span', { className: 'indent', text: l.loopId });
        span.style.paddingLeft = l.depth * 1.2 + 'em';
        return span;
      }),
      textCol('name', 'name'),
      countCol('depth', 'depth'),
      col('outcome', function (l) {
        return l.outcome || 'running';
      }),
      countCol('calls', 'modelCalls'),
      usdCol('own USD', 'modelCostPicoUsd'),
      usdCol('subtree USD', 'subtreeModelCostPicoUsd'),
      countCol('warnings', 'convergenceWarnings'),
      col('envelopes by verdict', function (l) {
        return verdictText(l.verdicts);
      }),
    ], tree ? tree.loops : [], 'pick a root above');
  }

  // ---- Alerts and sessions ---------------------------------------------------

  /** The firing alerts and those notified since `since` (epoch seconds). */
  function renderAlerts(rows, since) {
    var shown = rows.filter(function (a) {
      return a.state === 'firing' || Date.parse(a.lastNotifiedAt) / 1000 >= since;
    });
    fill('alerts', [
      textCol('state', 'state'),
      textCol('severity', 'severity'),
      textCol('rule', 'rule'),
      textCol('subject', 'subject', t.ID),
      utcCol('fired (UTC)', 'firedAt', true),
      utcCol('resolved (UTC)', 'resolvedAt', true),
      textCol('detail', 'detail', t.DETAIL),
    ], shown, 'no alert');
  }

  /** The craze sessions the filters f let through (no loop name; the model among the session's). */
  function renderSessions(rows, f) {
    var shown = rows.filter(function (s) {
      return (f.source === 'all' || f.source === 'craze') && f.name === '' && (f.model === '' || s.models.indexOf(f.model) >= 0);
    });
    fill('sessions', [
      textCol('session', 'sessionId', t.ID),
      col('models', function (s) {
        return s.models.join(' ');
      }),
      usdCol('USD', 'costPicoUsd'),
      col('turns done/failed', function (s) {
        return s.turnsDone + '/' + s.turnsFailed;
      }),
      col('sub-agents ok/failed', function (s) {
        return s.subagentsCompleted + '/' + s.subagentsFailed;
      }),
      utcCol('last seen (UTC)', 'lastSeen', true),
      textCol('cwd', 'cwd'),
    ], shown, 'no craze session in this range');
  }

  // ---- Chain violations and reconciliation -----------------------------------

  function evidenceText(v) {
    if (v.verdict === 'fork' && v.evidence && typeof v.evidence === 'object' && v.evidence.stored) {
      var s = v.evidence.stored;
      return 'stored first: hash ' + s.hash + ', ' + s.kind + ' at ' + s.time + ', payload ' + s.payload;
    }
    return v.evidence === null ? '' : typeof v.evidence === 'string' ? v.evidence : JSON.stringify(v.evidence);
  }

  function renderViolations(shown) {
    fill('violations', [
      textCol('loop', 'loopId'),
      textCol('seq', 'seq', t.NUM),
      textCol('verdict', 'verdict'),
      textCol('kind', 'kind'),
      textCol('time (as sent)', 'time'),
      textCol('carried hash', 'carriedHash', t.HASH),
      textCol('recomputed hash', 'expectedHash', t.HASH),
      col('this version', function (v) {
        return v.verdict === 'fork' ? v.payload : '';
      }, t.PAYLOAD),
      col('evidence', evidenceText, t.PAYLOAD),
      textCol('detail', 'detail', t.PAYLOAD),
    ], shown, 'no chain violation');
  }

  function renderReconciliation(r) {
    fill('reconciliation', [
      textCol('loop', 'loopId'),
      textCol('root', 'rootLoopId'),
      usdCol('model cost', 'modelCostPicoUsd'),
      usdCol('model budget', 'modelBudgetPicoUsd'),
      usdCol('model − budget', 'modelMinusModelBudgetPicoUsd'),
      usdCol('budget − total_spend', 'budgetMinusTotalSpendPicoUsd'),
      usdCol('budget − child_spend', 'budgetMinusChildSpendPicoUsd'),
    ], r.loops, 'every ledger agrees');
    fill('rootReconciliation', [
      textCol('root', 'rootLoopId'),
      countCol('loops', 'loops'),
      countCol('disagreeing', 'loopsDisagreeing'),
      usdCol('tree model cost', 'treeModelCostPicoUsd'),
      usdCol('tree model budget', 'treeModelBudgetPicoUsd'),
      usdCol('tree budget', 'treeBudgetPicoUsd'),
    ], r.roots, 'every tree agrees');
  }

  root.agentledgerPanels = Object.freeze({
    renderCards: renderCards, renderSeries: renderSeries, renderRoots: renderRoots, renderNames: renderNames,
    renderTree: renderTree, renderAlerts: renderAlerts, renderSessions: renderSessions,
    renderViolations: renderViolations, renderReconciliation: renderReconciliation,
  });
})(globalThis);
