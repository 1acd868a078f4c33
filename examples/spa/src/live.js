// A live subscription that survives what production does to it: the
// gateway completing the stream (a restart or deploy), the socket dropping
// (backoff, or at once when the browser is back online), and
// UNAUTHENTICATED (the access token expired or was revoked: refresh, then
// subscribe again). Every attempt starts `since` the newest item the page
// has, so the gateway replays what arrived meanwhile, in order, once; when
// it is too far behind for a replay (BAD_USER_INPUT), catchUp loads the
// gap by queries first. The timeline and the notifications use one each.

export class LiveStream {
  // opts: ws (graphql-ws client), session, query (a printed document with
  // a $since variable), field (the subscription field), since() (the
  // newest id the page has, or null), onItem(item), catchUp() (resolves to
  // whether the gap is filled), status(state, text).
  constructor(opts) {
    Object.assign(this, opts);
    this.stop = null; // ends the current attempt
    this.retry = null; // the timer of the next attempt
    this.backoff = 1000;
    // Back online: resume at once rather than at the socket's next retry.
    addEventListener('online', () => { if (this.stop) this.again(0); });
    // graphql-transport-ws confirms no subscription: a connected socket
    // is as live as it gets.
    this.ws.on('connected', () => { if (this.stop) this.status('live', 'live'); });
  }

  get running() { return this.stop !== null; }

  start() {
    clearTimeout(this.retry);
    if (!this.session.loggedIn) return;
    this.status('connecting', 'connecting…');
    const since = this.since();
    let done = false;
    const stop = this.ws.subscribe({ query: this.query, variables: since ? { since } : {} }, {
      next: (res) => {
        if (res.errors?.length) {
          done = true;
          this.failed(res.errors);
          return;
        }
        this.backoff = 1000;
        this.status('live', 'live');
        this.onItem(res.data[this.field]);
      },
      error: (err) => { done = true; this.failed(err); },
      // The gateway completes streams when it shuts down (a deploy): the
      // next attempt reaches another instance, or this one restarted.
      complete: () => { if (!done && this.stop === stop) this.again(500); },
    });
    this.stop = stop;
  }

  end() {
    clearTimeout(this.retry);
    const stop = this.stop;
    this.stop = null;
    stop?.();
  }

  // again subscribes anew after delay ms.
  again(delay) {
    this.end();
    this.stop = () => {}; // running: 'online' and a reconnect may hurry it
    this.status('connecting', 'reconnecting…');
    this.retry = setTimeout(() => this.start(), delay);
  }

  // failed decides what a failed subscription does next: errors is the
  // gateway's GraphQL errors, or the close event of a socket that gave up.
  async failed(errors) {
    const list = Array.isArray(errors) ? errors : [errors];
    const first = list[0] || {};
    const code = first.extensions?.code || (first.code === 4401 || first.code === 4403 ? 'UNAUTHENTICATED' : '');
    if (!this.session.loggedIn) return;
    switch (code) {
      case 'UNAUTHENTICATED':
        try {
          await this.session.refresh();
        } catch {
          return; // logged out (the refresh token is gone too)
        }
        // The socket's operations run with the token of its
        // connection_init: only a new socket takes the fresh one. Other
        // streams on it resume as after a drop.
        this.ws.terminate();
        this.again(0);
        return;
      case 'BAD_USER_INPUT':
        // Too far behind to replay: load the gap first.
        this.again(await this.catchUp() ? 0 : this.backoff);
        return;
    }
    const retryAfter = first.extensions?.retryAfter;
    const delay = retryAfter ? retryAfter * 1000 : this.backoff;
    this.backoff = Math.min(this.backoff * 2, 30000);
    this.again(delay);
    this.status('connecting', `reconnecting… (${first.message || first.reason || 'connection lost'})`);
  }
}
