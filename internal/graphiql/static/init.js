// Starts GraphiQL with the gateway's example tabs. Loaded after React,
// ReactDOM and GraphiQL; the settings come from the JSON block
// #graphiql-config, which the server writes into the page.
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('graphiql-config').textContent);
  var endpoint = new URL(config.endpoint, location.href);
  var ws = new URL(endpoint.href);
  ws.protocol = endpoint.protocol === 'https:' ? 'wss:' : 'ws:';

  // A link may open the IDE with a prepared query (?query=…&variables=…).
  // Headers are never taken from, or written to, the URL: an access token
  // there would end up in the browser's history and in server logs. An old
  // link that carries them is cleaned.
  var params = new URLSearchParams(location.search);
  if (params.has('headers')) {
    params.delete('headers');
    var rest = params.toString();
    history.replaceState(null, '', location.pathname + (rest ? '?' + rest : '') + location.hash);
  }

  var props = {
    // The headers editor's contents go with every request, and in the
    // websocket's connection_init payload for subscriptions.
    fetcher: GraphiQL.createFetcher({ url: endpoint.href, subscriptionUrl: ws.href }),
    defaultTabs: config.tabs,
    defaultEditorToolsVisibility: true,
    isHeadersEditorEnabled: true,
    // Keep headers (the access token) in memory only, not in localStorage.
    shouldPersistHeaders: false,
    storage: new PrefixedStorage(config.storagePrefix),
    inputValueDeprecation: true
  };
  if (params.has('query')) {
    props.query = params.get('query');
    props.variables = params.get('variables') || undefined;
    props.operationName = params.get('operationName') || undefined;
  }
  ReactDOM.render(React.createElement(GraphiQL, props), document.getElementById('graphiql'));

  // PrefixedStorage keeps this page's state (tabs, queries) apart from other
  // pages of the same origin, and never stores headers: GraphiQL may keep
  // them in its saved tabs and query history even with shouldPersistHeaders
  // off (a browser test saw the token in storage now and then), so every
  // value written is stripped of them here, where all writes pass.
  function PrefixedStorage(prefix) {
    var strip = function (v) {
      if (Array.isArray(v)) {
        v.forEach(strip);
      } else if (v && typeof v === 'object') {
        Object.keys(v).forEach(function (k) {
          if (k === 'headers') v[k] = null;
          else strip(v[k]);
        });
      }
      return v;
    };
    var scrub = function (k, v) {
      // GraphiQL names its keys "graphiql:<name>".
      if (k.slice(k.lastIndexOf(':') + 1) === 'headers') return null;
      try {
        return JSON.stringify(strip(JSON.parse(v)));
      } catch (e) {
        return v; // not JSON: a query or a flag
      }
    };
    var keys = function () {
      var out = [];
      for (var i = 0; i < localStorage.length; i++) {
        var k = localStorage.key(i);
        if (k.indexOf(prefix) === 0) out.push(k.slice(prefix.length));
      }
      return out;
    };
    this.getItem = function (k) { return localStorage.getItem(prefix + k); };
    this.setItem = function (k, v) {
      v = scrub(k, v);
      if (v === null) localStorage.removeItem(prefix + k);
      else localStorage.setItem(prefix + k, v);
    };
    this.removeItem = function (k) { localStorage.removeItem(prefix + k); };
    this.clear = function () { keys().forEach(function (k) { localStorage.removeItem(prefix + k); }); };
    this.key = function (i) { var ks = keys(); return i >= 0 && i < ks.length ? ks[i] : null; };
    Object.defineProperty(this, 'length', { get: function () { return keys().length; } });
  }
})();
