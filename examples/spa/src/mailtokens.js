// The tokens of account e-mails in the reference app: the login page's
// "Forgot your password?" part (requestPasswordReset, then resetPassword
// with the mailed token, which logs in), the settings page's field that
// confirms an address (verifyEmail), and the e-mails' links (PUBLIC_URL),
// whose fragment (#reset=… or #verify=…) fills them in. A fragment never
// reaches a server, and the page clears it once read.
const VERIFY = `mutation VerifyEmail($token: String!) { verifyEmail(token: $token) { id email emailVerified } }`;
const REQUEST_RESET = `mutation RequestPasswordReset($email: String!) { requestPasswordReset(email: $email) }`;

export class MailTokens {
  // $: the page's elements by id; onVerified: called after an address is
  // confirmed (the settings page reads it again).
  constructor({ session, $, onVerified }) {
    Object.assign(this, { session, $, onVerified });
    $('reset-request-form').addEventListener('submit', (ev) => { ev.preventDefault(); this.requestReset(); });
    $('reset-form').addEventListener('submit', (ev) => { ev.preventDefault(); this.reset(); });
    $('verify-form').addEventListener('submit', (ev) => { ev.preventDefault(); this.verify($('verify-form').token.value.trim()); });
  }

  // fromLink reads an e-mail link's fragment: a reset token opens the
  // new-password form with it, a confirmation token is used at once.
  fromLink() {
    const m = /^#(reset|verify)=([A-Za-z0-9._~-]+)$/.exec(location.hash);
    if (!m) return;
    history.replaceState(null, '', location.pathname + location.search);
    if (m[1] === 'reset') {
      this.$('reset-part').open = true;
      this.$('reset-form').token.value = m[2];
      this.$('reset-form').newPassword.focus();
    } else {
      this.verify(m[2]);
    }
  }

  async requestReset() {
    const f = this.$('reset-request-form');
    this.say('reset', '', '');
    try {
      await this.session.post(REQUEST_RESET, { email: f.email.value.trim() });
      this.say('reset', 'If an account has this address, a token is on its way to it.', '');
    } catch (err) {
      this.say('reset', '', err.message);
    }
  }

  async reset() {
    const f = this.$('reset-form');
    this.say('reset', '', '');
    try {
      await this.session.resetPassword(f.token.value.trim(), f.newPassword.value);
      f.reset();
      this.$('reset-part').open = false;
    } catch (err) {
      this.say('reset', '', err.message);
    }
  }

  async verify(token) {
    this.say('verify', '', '');
    try {
      const data = await this.session.post(VERIFY, { token }, this.session.accessToken);
      this.say('verify', `${data.verifyEmail.email} is confirmed.`, '');
      this.$('verify-form').reset();
      this.onVerified?.();
    } catch (err) {
      this.say('verify', '', err.message);
    }
  }

  // say shows a part's status and error (both in the page: a confirmation
  // from a link shows whether or not one is logged in).
  say(part, status, error) {
    this.$(`${part}-status`).textContent = status;
    this.$(`${part}-error`).textContent = error;
  }
}
