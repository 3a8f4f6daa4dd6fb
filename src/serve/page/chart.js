/*
 * The page's chart (docs/dashboards.md "The page"): spend over time as
 * stacked uPlot bars, one layer a key. Only the chart plots floats
 * (money.toFloatUsd); its legend shows each key's exact money.js text. A
 * plain script (no module), loaded after uPlot and money.js; panels.js finds
 * it at globalThis.agentledgerChart.
 */
'use strict';
(function attach(root) {
  var money = root.agentledgerMoney;
  var PALETTE = ['#2b6cb0', '#dd6b20', '#38a169', '#d53f8c', '#805ad5', '#d69e2e', '#319795', '#e53e3e', '#718096', '#4a5568', '#9c4221', '#2c7a7b'];

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

  root.agentledgerChart = Object.freeze({ renderChart: renderChart });
})(globalThis);
