// The settings page's profile part: the display name, the avatar, the
// header and the lock (a locked account approves each follower in the
// Follow requests view; unlocking approves everyone waiting). Text alone goes as an ordinary mutation; with a picture, as a
// GraphQL multipart request (one part a file, put at input.avatar or
// input.header by the map), which the gateway checks, crops, scales and
// stores: the answer brings the copies' addresses. The avatar is shown
// at 96 pixels here and at 48 beside each post (avatar(size:)), the
// header at 600.
import { gql } from '@urql/core';
import { print } from 'graphql';
import { mutate } from './idempotency.js';
import { sendForm } from './media.js';

const PROFILE_FIELDS = gql`
  fragment ProfileFields on User {
    id name displayName locked
    avatar(size: 96) { url width height }
    header(size: 600) { url width height }
  }`;
const ME = gql`query Me { me { ...ProfileFields } } ${PROFILE_FIELDS}`;
const UPDATE = gql`
  mutation UpdateProfile($input: UpdateProfileInput!) { updateProfile(input: $input) { ...ProfileFields } }
  ${PROFILE_FIELDS}`;

export class ProfileSettings {
  // form: the profile form; preview: where the pictures are shown;
  // status, error: what the last save did.
  constructor({ client, session, endpoint, form, preview, status, error, onSaved }) {
    Object.assign(this, { client, session, endpoint, form, preview, status, error, onSaved });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.save();
    });
  }

  // load fills the form with the viewer's profile; the form is disabled
  // until then, so that what the user types is not overwritten
  // (data-loaded tells tests).
  async load() {
    const fields = this.form.querySelector('fieldset');
    fields.disabled = true;
    this.form.dataset.loaded = 'false';
    const res = await this.client.query(ME, {}, { requestPolicy: 'network-only' }).toPromise();
    if (res.error) {
      this.error.textContent = res.error.graphQLErrors[0]?.message || res.error.message;
      return;
    }
    this.show(res.data.me);
    fields.disabled = false;
    this.form.dataset.loaded = 'true';
  }

  show(me) {
    this.form.displayName.value = me.displayName || '';
    this.form.locked.checked = me.locked;
    const img = (m, cls) => m
      ? Object.assign(document.createElement('img'), { className: cls, src: m.url, width: m.width, height: m.height, alt: '' })
      : null;
    this.preview.replaceChildren(...[img(me.header, 'header'), img(me.avatar, 'avatar')].filter(Boolean));
    this.preview.dataset.avatar = me.avatar ? me.avatar.url : '';
  }

  async save() {
    const f = this.form;
    const input = { displayName: f.displayName.value, locked: f.locked.checked };
    const files = {};
    for (const name of ['avatar', 'header']) {
      const file = f[name].files[0];
      if (file) files[name] = file;
      else if (f[`remove-${name}`].checked) input[name === 'avatar' ? 'removeAvatar' : 'removeHeader'] = true;
    }
    this.status.textContent = 'Saving…';
    this.error.textContent = '';
    f.querySelector('button[type=submit]').disabled = true;
    let body;
    if (Object.keys(files).length > 0) {
      body = await sendWithFiles(this.endpoint, await this.session.token(), print(UPDATE), input, files)
        .catch((err) => ({ errors: [{ message: `Could not reach the API at ${this.endpoint}: ${err.message}` }] }));
    } else {
      const res = await mutate(this.client, UPDATE, { input });
      body = res.error ? { errors: res.error.graphQLErrors.length ? res.error.graphQLErrors : [res.error] } : res;
    }
    f.querySelector('button[type=submit]').disabled = false;
    if (body.errors?.length) {
      this.status.textContent = '';
      this.error.textContent = body.errors[0].message;
      return;
    }
    f.reset();
    this.show(body.data.updateProfile);
    this.status.textContent = 'Saved.';
    this.onSaved?.(body.data.updateProfile);
  }
}

// sendWithFiles sends updateProfile(input) with files put at input's
// fields they are named by, as a multipart request (sendForm), and
// returns the GraphQL answer.
async function sendWithFiles(endpoint, token, query, input, files) {
  const names = Object.keys(files);
  const vars = { input: { ...input, ...Object.fromEntries(names.map((n) => [n, null])) } };
  const form = new FormData();
  form.append('operations', JSON.stringify({ query, variables: vars }));
  form.append('map', JSON.stringify(Object.fromEntries(names.map((n, i) => [String(i), [`variables.input.${n}`]]))));
  names.forEach((n, i) => form.append(String(i), files[n], files[n].name));
  return sendForm(endpoint, token, form);
}

const DELETE_ACCOUNT = gql`mutation DeleteAccount($password: String!) { deleteAccount(password: $password) }`;

// AccountDeletion is the settings page's last part: the account goes
// for good once its password is given and the box ticked. A wrong
// password answers BAD_USER_INPUT and nothing changes; on success every
// session of the account has ended on the server, so the app forgets
// its tokens and shows the login form.
export class AccountDeletion {
  constructor({ client, session, form, error }) {
    Object.assign(this, { client, session, form, error });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.remove();
    });
  }

  async remove() {
    const f = this.form;
    this.error.textContent = '';
    if (!f.confirm.checked) {
      this.error.textContent = 'Tick the box to confirm: this cannot be undone.';
      return;
    }
    f.querySelector('button[type=submit]').disabled = true;
    // No idempotency key: a retry after success would find the account
    // gone anyway.
    const res = await this.client.mutation(DELETE_ACCOUNT, { password: f.password.value }).toPromise();
    f.querySelector('button[type=submit]').disabled = false;
    if (res.error) {
      this.error.textContent = res.error.graphQLErrors[0]?.message || res.error.message;
      return;
    }
    f.reset();
    this.session.clear();
  }
}
