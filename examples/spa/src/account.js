// The settings page's account parts: the password (changePassword, whose
// answer is a new token pair for this session: the old refresh token
// stops working), the e-mail address (changeEmail, confirmed by the token
// mailed to the new address; resendVerification mails it again), and
// "download my data" (requestDataExport, then dataExport read every few
// seconds until the archive is READY and its signed address is shown).
import { gql } from '@urql/core';
import { mutate } from './idempotency.js';

const ME = gql`query AccountMe { me { id email emailVerified } dataExport { id status url bytes } }`;
const CHANGE_PASSWORD = gql`
  mutation ChangePassword($current: String!, $next: String!) {
    changePassword(currentPassword: $current, newPassword: $next) { accessToken expiresAt refreshToken user { id name } }
  }`;
const CHANGE_EMAIL = gql`
  mutation ChangeEmail($email: String!, $password: String!) { changeEmail(newEmail: $email, password: $password) }`;
const RESEND = gql`mutation ResendVerification { resendVerification }`;
const REQUEST_EXPORT = gql`mutation RequestDataExport { requestDataExport { id status url bytes } }`;
const EXPORT = gql`query DataExport { dataExport { id status url bytes } }`;

// How often a PENDING export is read again.
const EXPORT_POLL_MS = 2000;

// errorOf is the message of a failed urql answer, or "".
const errorOf = (res) => (res.error ? res.error.graphQLErrors[0]?.message || res.error.message : '');

export class AccountSettings {
  // $: the page's elements by id; endpoint: the API, against which the
  // archive's address (a path) is resolved.
  constructor({ client, session, endpoint, $ }) {
    Object.assign(this, { client, session, endpoint, $ });
    this.polling = null;
    $('password-form').addEventListener('submit', (ev) => { ev.preventDefault(); this.changePassword(); });
    $('email-form').addEventListener('submit', (ev) => { ev.preventDefault(); this.changeEmail(); });
    $('resend-verification').addEventListener('click', () => this.resend());
    $('export-request').addEventListener('click', () => this.requestExport());
  }

  async load() {
    const res = await this.client.query(ME, {}, { requestPolicy: 'network-only' }).toPromise();
    if (res.error) {
      this.$('email-error').textContent = errorOf(res);
      return;
    }
    const me = res.data.me;
    this.$('email-current').textContent = `${me.email} (${me.emailVerified ? 'confirmed' : 'not confirmed yet'})`;
    this.$('resend-verification').hidden = me.emailVerified;
    this.showExport(res.data.dataExport);
  }

  async changePassword() {
    const f = this.$('password-form');
    this.say('password', '', '');
    const res = await mutate(this.client, CHANGE_PASSWORD, { current: f.currentPassword.value, next: f.newPassword.value });
    if (res.error) return this.say('password', '', errorOf(res));
    // The new pair: this session's old refresh token no longer works.
    this.session.store(res.data.changePassword);
    f.reset();
    this.say('password', 'Password changed. Other sessions were logged out.', '');
  }

  async changeEmail() {
    const f = this.$('email-form');
    this.say('email', '', '');
    const email = f.newEmail.value.trim();
    const res = await mutate(this.client, CHANGE_EMAIL, { email, password: f.password.value });
    if (res.error) return this.say('email', '', errorOf(res));
    f.reset();
    this.say('email', `A confirmation was sent to ${email}; the address changes once it is confirmed.`, '');
  }

  async resend() {
    this.say('email', '', '');
    const res = await mutate(this.client, RESEND, {});
    if (res.error) return this.say('email', '', errorOf(res));
    this.say('email', 'The confirmation was sent again.', '');
  }

  async requestExport() {
    this.say('export', '', '');
    this.$('export-request').disabled = true;
    const res = await mutate(this.client, REQUEST_EXPORT, {});
    this.$('export-request').disabled = false;
    if (res.error) return this.say('export', '', errorOf(res));
    this.showExport(res.data.requestDataExport);
  }

  // showExport shows where the latest export stands, and reads it again
  // while it is being prepared.
  showExport(x) {
    clearTimeout(this.polling);
    const link = this.$('export-link');
    link.hidden = true;
    this.$('export-part').dataset.status = x ? x.status : 'NONE';
    if (!x) return this.say('export', 'No export yet.', '');
    switch (x.status) {
      case 'PENDING':
        this.say('export', 'Preparing your archive…', '');
        this.polling = setTimeout(() => this.poll(), EXPORT_POLL_MS);
        return;
      case 'FAILED':
        return this.say('export', '', 'The archive could not be prepared; ask again.');
    }
    link.href = new URL(x.url, this.endpoint).href;
    link.textContent = `Download the archive (${Math.ceil(x.bytes / 1024)} KiB)`;
    link.hidden = false;
    this.say('export', 'Your archive is ready; the link works for an hour.', '');
  }

  async poll() {
    const res = await this.client.query(EXPORT, {}, { requestPolicy: 'network-only' }).toPromise();
    if (res.error) return this.say('export', '', errorOf(res));
    this.showExport(res.data.dataExport);
  }

  // say sets a part's status and error lines.
  say(part, status, error) {
    this.$(`${part}-status`).textContent = status;
    this.$(`${part}-error`).textContent = error;
  }
}
