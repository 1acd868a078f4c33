// The settings page's keyword filters: the list of the viewer's filters
// (filters), a form that adds one (addFilter: a phrase, whole words or
// not, where it applies, an expiry) and a Remove button on each
// (removeFilter). The gateway hides what they match from the viewer's
// pages; a refused filter (an empty phrase, no context, the 101st) shows
// its message and adds nothing.
import { gql } from '@urql/core';
import { mutate } from './idempotency.js';

const FILTER_FIELDS = gql`fragment FilterFields on Filter { id phrase wholeWord context expiresAt }`;
const FILTERS = gql`query Filters { filters { ...FilterFields } } ${FILTER_FIELDS}`;
const ADD = gql`mutation AddFilter($input: FilterInput!) { addFilter(input: $input) { ...FilterFields } } ${FILTER_FIELDS}`;
const REMOVE = gql`mutation RemoveFilter($id: ID!) { removeFilter(id: $id) }`;

const CONTEXT_NAMES = { HOME: 'home', LISTS: 'lists', NOTIFICATIONS: 'notifications', PUBLIC: 'profiles and tags', COMMENTS: 'comments' };

export class FilterSettings {
  // form: the add form; list: the <ul> of filters; error: the last
  // refusal.
  constructor({ client, form, list, error }) {
    Object.assign(this, { client, form, list, error });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.add();
    });
  }

  // load lists the viewer's filters (data-loaded tells tests).
  async load() {
    this.list.dataset.loaded = 'false';
    const res = await this.client.query(FILTERS, {}, { requestPolicy: 'network-only' }).toPromise();
    if (res.error) {
      this.error.textContent = message(res.error);
      return;
    }
    this.show(res.data.filters);
    this.list.dataset.loaded = 'true';
  }

  show(filters) {
    this.list.replaceChildren(...filters.map((f) => this.item(f)));
  }

  item(f) {
    const li = document.createElement('li');
    li.dataset.id = f.id;
    const where = f.context.map((c) => CONTEXT_NAMES[c] || c).join(', ');
    const until = f.expiresAt ? ` until ${new Date(f.expiresAt).toLocaleString()}` : '';
    const text = document.createElement('span');
    text.className = 'filter-phrase';
    text.textContent = `“${f.phrase}”${f.wholeWord ? '' : ' (inside words too)'}: ${where}${until}`;
    const remove = Object.assign(document.createElement('button'), { type: 'button', textContent: 'Remove', className: 'filter-remove' });
    remove.addEventListener('click', () => this.remove(f.id, li));
    li.append(text, ' ', remove);
    return li;
  }

  async add() {
    const f = this.form;
    const context = [...f.querySelectorAll('input[name=context]:checked')].map((c) => c.value);
    const expiresIn = f.expiresIn.value ? Number(f.expiresIn.value) : null;
    const input = { phrase: f.phrase.value, wholeWord: f.wholeWord.checked, context, expiresIn };
    this.error.textContent = '';
    const res = await mutate(this.client, ADD, { input });
    if (res.error) {
      this.error.textContent = message(res.error);
      return;
    }
    f.phrase.value = '';
    this.list.append(this.item(res.data.addFilter));
  }

  async remove(id, li) {
    this.error.textContent = '';
    const res = await mutate(this.client, REMOVE, { id });
    if (res.error) {
      this.error.textContent = message(res.error);
      return;
    }
    li.remove();
  }
}

function message(err) {
  return err.graphQLErrors?.[0]?.message || err.message;
}
