/*
 * The page's panels (docs/dashboards.md "The page"): the cards, the spend
 * series (chart and tables), the top roots and names, the loop tree, alerts,
 * craze sessions, chain violations and the reconciliation, each rendered
 * from its API answer into tables.js's tables. A plain script
 * (no module), loaded after dom.js, tables.js and chart.js; app.js finds it
 * at globalThis.agentledgerPanels.
 */
'use strict';
(function attach(root) {
  var el = root.agentledgerDom.el;
  var utc = root.agentledgerDom.utc;
  var fill = root.agentledgerTables.fill;
  var usd = root.agentledgerTables.usd;
  var col = root.agentledgerTables.col;
  var num = root.agentledgerTables.NUM;
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

  root.agentledgerPanels = Object.freeze({
    renderCards: renderCards, renderSeries: renderSeries, renderRoots: renderRoots, renderNames: renderNames,
    renderTree: renderTree, renderAlerts: renderAlerts, renderSessions: renderSessions,
    renderViolations: renderViolations, renderReconciliation: renderReconciliation,
  });
})(globalThis);
