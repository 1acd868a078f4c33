// The login session: a short-lived access token kept in memory and a
// refresh token kept in sessionStorage (it survives a reload of this tab,
// not the closing of the browser). Each refresh token works once: the
// gateway answers a refresh with a new pair, and presenting an old token
// again revokes the session, so refreshes run one at a time.

const REFRESH_KEY = 'socialgw.refreshToken';
// Refresh this long before the access token expires, so that a request
// in flight does not arrive with an expired token.
const EARLY_MS = 60_000;

const AUTH_FIELDS = 'accessToken expiresAt refreshToken user { id name }';

export class Session extends EventTarget {
  constructor(endpoint) {
    super();
    this.endpoint = endpoint;
    this.accessToken = null;
    this.expiresAt = 0;
    this.user = null;
    this.refreshing = null;
  }

  get refreshToken() { return sessionStorage.getItem(REFRESH_KEY); }
  get loggedIn() { return this.refreshToken !== null; }

  // expiresSoon reports whether the access token is missing or about to
  // expire.
  expiresSoon() { return !this.accessToken || Date.now() > this.expiresAt - EARLY_MS; }

  async login(login, password) {
    const data = await this.post(
      `mutation Login($login: String!, $password: String!) { login(input: {login: $login, password: $password}) { ${AUTH_FIELDS} } }`,
      { login, password });
    this.store(data.login);
  }

  // resetPassword sets a new password with a mailed reset token: every
  // session of the account ends, and this one starts with the new pair.
  async resetPassword(token, newPassword) {
    const data = await this.post(
      `mutation ResetPassword($token: String!, $password: String!) { resetPassword(token: $token, newPassword: $password) { ${AUTH_FIELDS} } }`,
      { token, password: newPassword });
    this.store(data.resetPassword);
  }

  // refresh exchanges the refresh token for a new pair; concurrent callers
  // share one exchange. It logs out when the gateway refuses the token.
  refresh() {
    if (!this.refreshing) {
      this.refreshing = (async () => {
        const token = this.refreshToken;
        if (!token) throw new Error('not logged in');
        try {
          const data = await this.post(
            `mutation Refresh($token: String!) { refreshToken(refreshToken: $token) { ${AUTH_FIELDS} } }`,
            { token });
          this.store(data.refreshToken);
        } catch (err) {
          if (err.code === 'UNAUTHENTICATED') this.clear();
          throw err;
        }
      })().finally(() => { this.refreshing = null; });
    }
    return this.refreshing;
  }

  // token returns a fresh access token, refreshing first if needed.
  async token() {
    if (this.expiresSoon()) await this.refresh();
    return this.accessToken;
  }

  async logout() {
    if (this.accessToken) {
      // Revokes the refresh-token family on the server; the local state
      // goes whatever the answer.
      await this.post('mutation { logout }', {}, this.accessToken).catch(() => {});
    }
    this.clear();
  }

  store(p) {
    this.accessToken = p.accessToken;
    this.expiresAt = Date.parse(p.expiresAt);
    this.user = p.user;
    sessionStorage.setItem(REFRESH_KEY, p.refreshToken);
    this.dispatchEvent(new Event('change'));
  }

  clear() {
    this.accessToken = null;
    this.expiresAt = 0;
    this.user = null;
    sessionStorage.removeItem(REFRESH_KEY);
    this.dispatchEvent(new Event('change'));
  }

  // post sends one GraphQL operation with fetch: the session's own
  // requests do not go through the client, whose requests wait for them.
  async post(query, variables, token) {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    const res = await fetch(this.endpoint, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
    let body;
    try {
      body = await res.json();
    } catch {
      throw Object.assign(new Error(`HTTP ${res.status}`), { code: 'HTTP_' + res.status });
    }
    if (body.errors?.length) {
      const e = body.errors[0];
      throw Object.assign(new Error(e.message), { code: e.extensions?.code });
    }
    return body.data;
  }
}
