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

  // The Headers tab is shared by all tabs of the page: headers typed or
  // pasted into one tab are shown in, and sent by, every tab, and running
  // Login, Register or RefreshToken puts the new access token there. They
  // stay in this page's memory (see PrefixedStorage).
  var shared = { headers: null, editor: null };
  var inner = GraphiQL.createFetcher({ url: endpoint.href, subscriptionUrl: ws.href });
  var props = {
    // The headers editor's contents go with every request, and in the
    // websocket's connection_init payload for subscriptions.
    fetcher: function (params, opts) {
      return inner(params, opts).then(function (result) {
        // A stream (multipart answers, subscriptions): each part.
        if (result && typeof result[Symbol.asyncIterator] === 'function') {
          return (async function* () {
            for await (var part of result) {
              adoptToken(part);
              yield part;
            }
          })();
        }
        adoptToken(result);
        return result;
      });
    },
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
  ReactDOM.render(React.createElement(GraphiQL, props, React.createElement(SharedHeaders)),
    document.getElementById('graphiql'));

  // SharedHeaders, rendered inside GraphiQL, keeps the headers editor of
  // the active tab showing the shared headers. A change the user makes
  // (typing, pasting) becomes the shared headers; GraphiQL's own changes
  // (origin "setValue": a tab switch loading the tab's saved headers) do
  // not, and are replaced by the shared headers.
  function SharedHeaders() {
    var ctx = GraphiQL.React.useEditorContext({ nonNull: true });
    var editor = ctx.headerEditor;
    React.useEffect(function () {
      if (!editor) return undefined;
      shared.editor = editor;
      var onChange = function (cm, change) {
        if (change.origin !== 'setValue') shared.headers = cm.getValue();
      };
      editor.on('change', onChange);
      return function () { editor.off('change', onChange); };
    }, [editor]);
    React.useEffect(function () {
      if (editor && shared.headers !== null && editor.getValue() !== shared.headers) {
        editor.setValue(shared.headers);
      }
    }, [editor, ctx.activeTabIndex]);
    return null;
  }

  // adoptToken makes the access token of a Login, Register or RefreshToken
  // answer the shared headers.
  function adoptToken(result) {
    var data = result && result.data;
    if (!data) return;
    var auth = data.login || data.register || data.refreshToken;
    if (!auth || typeof auth.accessToken !== 'string') return;
    shared.headers = '{"Authorization": "Bearer ' + auth.accessToken + '"}';
    if (shared.editor) shared.editor.setValue(shared.headers);
  }

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
    // Only the values that may hold headers are rewritten: the saved tabs
    // and the history. Others (the active tab's query and variables) are
    // kept byte for byte, since GraphiQL finds the active tab again after
    // a reload by comparing them with the saved tabs' text.
    var scrub = function (k, v) {
      // GraphiQL names its keys "graphiql:<name>".
      var name = k.slice(k.lastIndexOf(':') + 1);
      if (name === 'headers') return null;
      if (name !== 'tabState' && name !== 'queries' && name !== 'favorites') return v;
      try {
        return JSON.stringify(strip(JSON.parse(v)));
      } catch (e) {
        return v;
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
