// The GraphQL client: urql with its auth exchange (adds the access token,
// refreshes it before it expires or when the gateway answers
// UNAUTHENTICATED, then retries) and subscriptions over graphql-ws
// (graphql-transport-ws), authenticated by the connection_init payload.
import { Client, fetchExchange, subscriptionExchange } from '@urql/core';
import { authExchange } from '@urql/exchange-auth';
import { createClient as createWSClient } from 'graphql-ws';

export function newClient(endpoint, session) {
  const wsURL = new URL(endpoint);
  wsURL.protocol = wsURL.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = createWSClient({
    url: wsURL.href,
    lazy: true,
    // Evaluated on every (re)connection, so a reconnect after the access
    // token expired presents a fresh one.
    connectionParams: async () => ({ Authorization: `Bearer ${await session.token()}` }),
    retryAttempts: 10,
    shouldRetry: () => session.loggedIn,
  });

  const client = new Client({
    url: endpoint,
    // Every page is fetched once and kept by the app: no document cache.
    requestPolicy: 'network-only',
    preferGetMethod: false,

    exchanges: [
      authExchange(async (utils) => ({
        addAuthToOperation(op) {
          return session.accessToken ? utils.appendHeaders(op, { Authorization: `Bearer ${session.accessToken}` }) : op;
        },
        willAuthError: () => session.loggedIn && session.expiresSoon(),
        didAuthError: (error) => error.graphQLErrors.some((e) => e.extensions?.code === 'UNAUTHENTICATED'),
        refreshAuth: () => session.refresh().catch(() => {}),
      })),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || '' };
          return { subscribe: (sink) => ({ unsubscribe: ws.subscribe(input, sink) }) };
        },
      }),
    ],
  });
  return { client, ws };
}

// urql aborts the request of an operation nobody listens to any more (a
// page whose promise was answered); the AbortError that this leaves
// unawaited inside urql is expected, not a failure. Anything else still
// surfaces.
addEventListener('unhandledrejection', (ev) => {
  if (ev.reason?.name === 'AbortError') ev.preventDefault();
});
