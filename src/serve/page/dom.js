/*
 * The page's small DOM and fetch helpers (docs/dashboards.md "The page"):
 * elements built with createElement and textContent, never innerHTML, the
 * UTC text of a time, and the JSON API's GET. A plain script (no module),
 * loaded before tables.js, chart.js, panels.js and app.js, which find it at
 * globalThis.agentledgerDom.
 */
'use strict';
(function attach(root) {
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

  root.agentledgerDom = Object.freeze({ getJson: getJson, el: el, utc: utc });
})(globalThis);
