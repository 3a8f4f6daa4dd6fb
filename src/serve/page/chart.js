/*
 * The page's chart (docs/dashboards.md "The page"): spend over time as
 * stacked uPlot bars, one layer a key, or, on the log scale, each key's own
 * bar (a stack means nothing on a log scale), so a $10 model stays readable
 * beside a $26M one. Only the chart plots floats (money.toFloatUsd); its
 * legend shows each key's exact money.js text. A plain script (no module),
 * loaded after uPlot and money.js; panels.js and app.js find it at
 * globalThis.agentledgerChart.
 */
'use strict';
(function attach(root) {
  var money = root.agentledgerMoney;
  var PALETTE = ['#2b6cb0', '#dd6b20', '#38a169', '#d53f8c', '#805ad5', '#d69e2e', '#319795', '#e53e3e', '#718096', '#4a5568', '#9c4221', '#2c7a7b'];

  var chart = null;
  var chartKeys = '';
  var chartSeries = null;
  var logScale = false;

  /** An axis label: $1.5k, $25M (the exact figures are in the legend and the tables). */
  function compactUsd(v) {
    var abs = Math.abs(v);
    var units = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'k']];
    for (var i = 0; i < units.length; i++) {
      if (abs >= units[i][0]) return '$' + +(v / units[i][0]).toPrecision(3) + units[i][1];
    }
    // Below a tenth of a cent (the log scale goes down to picodollars): plain decimals, not 1e-7.
    if (abs > 0 && abs < 1e-3) return '$' + v.toFixed(12).replace(/0+$/, '');
    return '$' + +v.toPrecision(3);
  }

  /**
   * What each line plots: stacked, each the sum of those below it; on the log
   * scale each key's own value, a zero as no bar (log 0 has no place).
   */
  function plotted(s, xs) {
    if (logScale) {
      return s.series.map(function (line) {
        return xs.map(function (_, i) {
          var v = money.toFloatUsd(line.costPicoUsd[i]);
          return v > 0 ? v : null;
        });
      });
    }
    var running = xs.map(function () {
      return 0;
    });
    return s.series.map(function (line) {
      running = running.map(function (v, i) {
        return v + money.toFloatUsd(line.costPicoUsd[i]);
      });
      return running.slice();
    });
  }

  /**
   * The log scale's range: whole decades, one below the smallest bar, so
   * that bar still has a decade of height (uPlot's own range would start at
   * its value when it is a power of ten, drawing it flat).
   */
  function logRange(u, min, max) {
    if (min === null || max === null || !(min > 0)) return [0.01, 1];
    return [Math.pow(10, Math.floor(Math.log10(min)) - 1), Math.pow(10, Math.max(Math.ceil(Math.log10(max)), Math.floor(Math.log10(min)) + 1))];
  }

  /** A bar chart of the series s; the legend shows each key's own exact text. */
  function renderChart(s) {
    var holder = document.querySelector('[data-testid="spend-chart"]');
    chartSeries = s;
    var xs = s.buckets.map(function (b) {
      return Date.parse(b) / 1000;
    });
    var lines = plotted(s, xs);
    // Stacked: the top layer (the whole stack) drawn first, so each smaller
    // stack paints over the larger. Log: the costliest key first, so the
    // cheaper bars paint in front of it.
    var order = s.series.map(function (_, i) {
      return logScale ? i : s.series.length - 1 - i;
    });
    var data = [xs].concat(order.map(function (i) {
      return lines[i];
    }));
    var keys = JSON.stringify([s.step, logScale, order.map(function (i) {
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
          // On the log scale uPlot leaves only the powers of ten (null for the rest).
          return splits.map(function (v) {
            return v === null || v === undefined ? '' : compactUsd(v);
          });
        }, size: 64 },
      ],
      scales: { x: { time: true, range: function (u, min, max) {
        var pad = s.step === 'day' ? 86400 : 3600;
        return [min, max + pad];
      } }, y: logScale ? { distr: 3, log: 10, range: logRange } : {} },
      tzDate: function (ts) {
        return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');
      },
      cursor: { drag: { x: false, y: false } },
    }, data, holder);
  }

  /** Switches between the stacked linear chart and the log scale, redrawing the last series. */
  function setLogScale(on) {
    if (logScale === on) return;
    logScale = on;
    if (chartSeries) renderChart(chartSeries);
  }

  /**
   * Each key's tallest bar as drawn, in CSS pixels (its own layer of the
   * stack, or its own bar on the log scale): how readable a small key is
   * beside a huge one. The browser test measures the log scale with it.
   */
  function barHeights() {
    var out = {};
    if (!chart || !chartSeries) return out;
    var y = chart.scales.y;
    for (var si = 1; si < chart.series.length; si++) {
      var values = chart.data[si];
      // Stacked: the layer below is the next series drawn (the order is top first).
      var below = !logScale && si + 1 < chart.series.length ? chart.data[si + 1] : null;
      var tallest = 0;
      for (var i = 0; i < values.length; i++) {
        if (values[i] === null || values[i] === undefined) continue;
        var base = logScale ? y.min : below ? below[i] : 0;
        tallest = Math.max(tallest, chart.valToPos(base, 'y') - chart.valToPos(values[i], 'y'));
      }
      out[chart.series[si].label] = tallest;
    }
    return out;
  }

  /** The uPlot instance drawn (null before the first series), for the browser test. */
  function plot() {
    return chart;
  }

  root.agentledgerChart = Object.freeze({ renderChart: renderChart, setLogScale: setLogScale, barHeights: barHeights, plot: plot });
})(globalThis);
