/*
 * The page's tables, each with a CSV button (docs/dashboards.md "The page"):
 * every `[data-table]` holder gets a title, a button and a table once
 * (build), and fill replaces a table's rows from column declarations. The
 * CSV is exactly the header and cell texts shown. Money cells are
 * money.js's exact text. A plain script (no module), loaded after money.js
 * and dom.js; panels.js and app.js find it at globalThis.agentledgerTables.
 */
'use strict';
(function attach(root) {
  var money = root.agentledgerMoney;
  var dom = root.agentledgerDom;
  var el = dom.el;

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

  var tables = {};

  /** Builds each `[data-table]` holder once: a title, a CSV button, an empty table. */
  function build() {
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
  }

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
        else if (c.className === 'payload' || c.className === 'detail') td.appendChild(el('div', { className: 'clip', text: v === undefined || v === null ? '' : String(v) }));
        else td.textContent = v === undefined || v === null ? '' : String(v);
        return td;
      })));
    });
    table.appendChild(body);
    if (rows.length === 0) table.appendChild(el('caption', { text: empty || 'nothing in this range' }));
  }

  /** Picodollars as exact USD text; none as ''. */
  function usd(pico) {
    return pico === null || pico === undefined ? '' : money.formatUsd(pico);
  }

  // A column's class: numbers right-aligned, hashes in monospace, payloads
  // clipped, prose details clipped but given the width, ids broken anywhere
  // (a long LoopID cannot starve its neighbours), times on one line.
  var NUM = { className: 'num' };
  var HASH = { className: 'hash' };
  var PAYLOAD = { className: 'payload' };
  var DETAIL = { className: 'detail' };
  var ID = { className: 'id' };
  var TIME = { className: 'time' };

  /** A column: its title, its cell of a row, and its class (NUM, HASH, PAYLOAD or none). */
  function col(title, cell, cls) {
    return { title: title, cell: cell, className: cls ? cls.className : '' };
  }

  /** A column of a row's field as it is (null and undefined shown as ''). */
  function textCol(title, field, cls) {
    return col(title, function (r) {
      return r[field];
    }, cls);
  }

  /** A number column of a row's count field, as String() writes it. */
  function countCol(title, field) {
    return col(title, function (r) {
      return String(r[field]);
    }, NUM);
  }

  /** A number column of a row's picodollar field, as exact USD text. */
  function usdCol(title, field) {
    return col(title, function (r) {
      return usd(r[field]);
    }, NUM);
  }

  /** A column of a row's time field as UTC text, to the minute (or the second). */
  function utcCol(title, field, seconds) {
    return col(title, function (r) {
      return dom.utc(r[field], seconds);
    }, TIME);
  }

  root.agentledgerTables = Object.freeze({
    build: build, fill: fill, usd: usd, NUM: NUM, HASH: HASH, PAYLOAD: PAYLOAD, DETAIL: DETAIL, ID: ID, TIME: TIME,
    col: col, textCol: textCol, countCol: countCol, usdCol: usdCol, utcCol: utcCol,
  });
})(globalThis);
