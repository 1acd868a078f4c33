// subscribe.mjs runs one timelineUpdated subscription with a real client
// from npm and writes what happens to stdout, one JSON object a line:
//   {"type":"next","data":...,"errors":...}   an event
//   {"type":"error","errors":[...]} or {"type":"error","code":4403,"reason":"..."}
//   {"type":"complete"}                        the server completed it
// The Go test (live_test.go) reads the lines. Usage:
//   node subscribe.mjs <transport> <base URL> <token or ""> [since]
// transport: transport-ws (graphql-ws, the graphql-transport-ws
// subprotocol), legacy-ws (the graphql-ws subprotocol of
// subscriptions-transport-ws, spoken with the ws package) or sse
// (graphql-sse in distinct-connections mode).
import { createClient as createWSClient } from 'graphql-ws';
import { createClient as createSSEClient } from 'graphql-sse';
import WebSocket from 'ws';

const [transport, base, token, since] = process.argv.slice(2);
const query = `subscription ($since: ID) { timelineUpdated(since: $since) { id content author { name } } }`;
const variables = since ? { since } : {};
const auth = token ? `Bearer ${token}` : undefined;

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const errorOf = (e) => {
  if (Array.isArray(e)) return { type: 'error', errors: e };
  if (e && typeof e.code === 'number') return { type: 'error', code: e.code, reason: e.reason };
  return { type: 'error', message: String(e && e.message ? e.message : e) };
};
const sink = {
  next: (v) => out({ type: 'next', ...v }),
  error: (e) => { out(errorOf(e)); process.exit(0); },
  complete: () => { out({ type: 'complete' }); process.exit(0); },
};

switch (transport) {
  case 'transport-ws': {
    const client = createWSClient({
      url: base.replace(/^http/, 'ws') + '/query',
      webSocketImpl: WebSocket,
      connectionParams: auth ? { Authorization: auth } : {},
      retryAttempts: 0,
      lazy: false,
      on: { closed: (e) => { if (e && e.code !== 1000) { out(errorOf(e)); process.exit(0); } } },
    });
    client.subscribe({ query, variables }, sink);
    break;
  }
  case 'sse': {
    const client = createSSEClient({
      url: base + '/query',
      singleConnection: false,
      headers: auth ? { Authorization: auth } : {},
      retryAttempts: 0,
    });
    client.subscribe({ query, variables }, sink);
    break;
  }
  case 'legacy-ws': {
    const ws = new WebSocket(base.replace(/^http/, 'ws') + '/query', 'graphql-ws');
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: auth ? { Authorization: auth } : {} })));
    ws.on('message', (raw) => {
      const m = JSON.parse(raw.toString());
      switch (m.type) {
        case 'connection_ack':
          ws.send(JSON.stringify({ id: '1', type: 'start', payload: { query, variables } }));
          break;
        case 'data': sink.next(m.payload); break;
        case 'error': sink.error(Array.isArray(m.payload) ? m.payload : [m.payload]); break;
        case 'connection_error': sink.error([m.payload]); break;
        case 'complete': sink.complete(); break;
        case 'ka': break;
      }
    });
    ws.on('close', (code, reason) => { out({ type: 'error', code, reason: reason.toString() }); process.exit(0); });
    ws.on('error', (e) => { out(errorOf(e)); process.exit(0); });
    break;
  }
  default:
    console.error(`unknown transport ${transport}`);
    process.exit(2);
}
