/*
 * The page of `agentledger serve` (docs/dashboards.md "The page"): plain
 * scripts, no build step. This one reads the filters and polls the JSON API
 * every 5 s (one round at a time, each with its own AbortController); the
 * others render: dom.js (elements, UTC text, GET), tables.js (tables, their
 * columns and CSV), chart.js (the stacked chart), panels.js (each panel).
 * Every value is rendered with textContent and createElement, never
 * innerHTML: a LoopID like `<img src=x onerror=…>` is shown as those
 * characters. Money comes as picodollar strings and is shown exactly with
 * money.js; only the chart plots floats. Times are UTC.
 */
'use strict';
(function main() {
  var getJson = window.agentledgerDom.getJson;
  var panels = window.agentledgerPanels;
  var POLL_MS = 5000;

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

  window.agentledgerTables.build();

  // ---- Polling ----------------------------------------------------------------

  var selectedRoot = null;
  var RANGE_S = { '24h': 86400, '7d': 7 * 86400, '30d': 30 * 86400, '90d': 90 * 86400 };
  var current = null;
  var timer = null;
  var treeController = null;

  function refreshTree() {
    if (selectedRoot === null) return Promise.resolve();
    if (treeController) treeController.abort();
    var controller = new AbortController();
    treeController = controller;
    return getJson('/api/tree', { root: selectedRoot }, controller.signal).then(panels.renderTree, function (err) {
      if (err.name !== 'AbortError') showError(err);
    });
  }

  /** A click on a root: its tree now, and with every round after. */
  function pickRoot(id) {
    selectedRoot = id;
    refreshTree();
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
      getJson('/api/overview', spendFilters, signal).then(panels.renderCards),
      getJson('/api/series', Object.assign({ step: step, by: f.by, since: f.range }, spendFilters), signal).then(panels.renderSeries),
      getJson('/api/roots', Object.assign({ since: f.range }, spendFilters), signal).then(function (rows) {
        panels.renderRoots(rows, pickRoot);
      }),
      getJson('/api/names', Object.assign({ since: f.range }, spendFilters), signal).then(panels.renderNames),
      getJson('/api/alerts', { state: 'all' }, signal).then(function (rows) {
        panels.renderAlerts(rows, since);
      }),
      getJson('/api/sessions', { since: f.range, limit: '50' }, signal).then(function (rows) {
        panels.renderSessions(rows, f);
      }),
      getJson('/api/violations', { since: f.range, limit: '100' }, signal).then(panels.renderViolations),
      getJson('/api/reconciliation', { limit: '100' }, signal).then(panels.renderReconciliation),
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

  // The chart's scale lives in the URL (?scale=log), so a link or a reload keeps it.
  var logBox = document.querySelector('[data-testid="chart-log"]');
  logBox.checked = new URLSearchParams(location.search).get('scale') === 'log';
  window.agentledgerChart.setLogScale(logBox.checked);
  logBox.addEventListener('change', function () {
    var url = new URL(location.href);
    if (logBox.checked) url.searchParams.set('scale', 'log');
    else url.searchParams.delete('scale');
    history.replaceState(null, '', url);
    window.agentledgerChart.setLogScale(logBox.checked);
  });

  document.querySelector('form.filters').addEventListener('change', function () {
    refresh();
  });
  document.querySelector('form.filters').addEventListener('submit', function (e) {
    e.preventDefault();
    refresh();
  });
  panels.renderTree(null);
  refresh();
})();
