// Discovery: hashtags as links to a tag page (tagTimeline), the trends box
// (trendingTags) and @mention autocomplete in the compose box
// (searchUsers). The tag page lives at #tag/<tag> in the address, so the
// browser's back button leaves it.
import { gql } from '@urql/core';

const TRENDS = gql`query Trends($first: Int!) { trendingTags(first: $first) { tag uses accounts } }`;
const SEARCH = gql`query Search($prefix: String!) { searchUsers(prefix: $prefix, first: 5) { id name } }`;

// A hashtag as the gateway reads one (social.Tags): # not after a tag
// character, #, / or ), then letters (with their marks), digits and _.
const TAG = /(^|[^\p{L}\p{M}\p{N}_#/)])#([\p{L}\p{M}\p{N}_]+)/gu;

// linkTags returns text as nodes, each hashtag a link to its tag page.
export function linkTags(text, el) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(TAG)) {
    const word = m[2];
    if (/^\p{N}+$/u.test(word)) continue; // digits alone are no tag
    const start = m.index + m[1].length;
    out.push(text.slice(last, start));
    const tag = word.normalize('NFC').toLowerCase();
    out.push(el('a', { className: 'tag', href: `#tag/${encodeURIComponent(tag)}`, textContent: `#${word}` }));
    last = start + 1 + word.length;
  }
  out.push(text.slice(last));
  return out;
}

// tagFromHash is the tag of a #tag/<tag> address, or null.
export function tagFromHash(hash) {
  const m = /^#tag\/(.+)$/.exec(hash);
  return m ? decodeURIComponent(m[1]) : null;
}

// Trends fills the trends box with the first tags of the ranking.
export async function loadTrends(client, list, el) {
  const res = await client.query(TRENDS, { first: 5 }, { requestPolicy: 'network-only' }).toPromise();
  if (res.error) return;
  list.replaceChildren(...res.data.trendingTags.map((t) => el('li', {},
    el('a', { className: 'tag', href: `#tag/${encodeURIComponent(t.tag)}`, textContent: `#${t.tag}` }),
    ` · ${t.accounts} ${t.accounts === 1 ? 'person' : 'people'}`)));
  list.closest('aside').hidden = res.data.trendingTags.length === 0;
}

// mentionAutocomplete offers, under a textarea, the users whose name
// starts with the @word being typed, most followed first; a click puts
// the name in.
export function mentionAutocomplete(client, textarea, list, el) {
  let timer = null;
  let asked = '';
  const word = () => {
    const before = textarea.value.slice(0, textarea.selectionStart);
    const m = /(^|\s)@([A-Za-z0-9_]{1,30})$/.exec(before);
    return m ? m[2] : null;
  };
  const hide = () => { list.hidden = true; list.replaceChildren(); };
  textarea.addEventListener('input', () => {
    clearTimeout(timer);
    const prefix = word();
    if (!prefix) return hide();
    timer = setTimeout(async () => {
      asked = prefix;
      const res = await client.query(SEARCH, { prefix }).toPromise();
      if (res.error || asked !== prefix || word() !== prefix) return;
      list.replaceChildren(...res.data.searchUsers.map((u) => {
        const b = el('button', { type: 'button', textContent: `@${u.name}` });
        b.addEventListener('click', () => {
          const at = textarea.selectionStart;
          const start = at - prefix.length;
          textarea.value = `${textarea.value.slice(0, start)}${u.name} ${textarea.value.slice(at)}`;
          textarea.selectionStart = textarea.selectionEnd = start + u.name.length + 1;
          textarea.focus();
          hide();
        });
        return el('li', {}, b);
      }));
      list.hidden = res.data.searchUsers.length === 0;
    }, 150);
  });
  textarea.addEventListener('blur', () => setTimeout(hide, 200));
}
