// The reference single-page app: log in, the home timeline with infinite
// scroll, likes, comments, posting, and new posts arriving live through
// the timelineUpdated subscription, which survives what production does
// to it: a gateway restarting (the server completes the stream), access
// tokens expiring (UNAUTHENTICATED: refresh, then subscribe again), and
// the network going away (resume with since, or load the newer pages with
// timeline(before:) when too far behind): no post missed, none twice.
import { gql } from '@urql/core';
import { print } from 'graphql';
import { Session } from './session.js';
import { newClient } from './client.js';
import { LiveStream } from './live.js';
import { Notifications } from './notifications.js';
import { renderMedia, postWithMedia } from './media.js';
import { mutate } from './idempotency.js';
import { renderBody, editedMark, editButton, renderComment as commentItem } from './conversation.js';
import { linkTags, tagFromHash, loadTrends, mentionAutocomplete } from './discovery.js';
import { AccountDeletion, ProfileSettings } from './settings.js';
import { MailTokens } from './mailtokens.js';
import { AccountSettings } from './account.js';
import { FilterSettings } from './filters.js';
import { Curation } from './curation.js';

const PAGE = 10;

const POST_FIELDS = gql`
  fragment PostFields on Post {
    id content createdAt visibility spoilerText sensitive editedAt
    author { id name displayName avatar(size: 48) { url } }
    media { id kind url mimeType width height duration alt }
    location { name }
    repostOf { id content author { name } }
    likesCount viewerHasLiked commentsCount viewerHasBookmarked pinned
    comments(first: 3) { edges { node { id content createdAt author { name } inReplyTo { id author { name } } } } }
  }`;
const HOME = gql`
  query Home($first: Int!, $after: String) {
    timeline(first: $first, after: $after) {
      edges { cursor node { ...PostFields } }
      pageInfo { hasNextPage endCursor }
    }
  }
  ${POST_FIELDS}`;
const NEWER = gql`
  query Newer($first: Int!, $before: String) {
    timeline(first: $first, before: $before) {
      edges { cursor node { ...PostFields } }
      pageInfo { hasPreviousPage startCursor }
    }
  }
  ${POST_FIELDS}`;
const BOOKMARKS = gql`
  query Bookmarks($first: Int!, $after: String) {
    bookmarks(first: $first, after: $after) { edges { node { ...PostFields } } pageInfo { hasNextPage endCursor } }
  }
  ${POST_FIELDS}`;
const LIST_TIMELINE = gql`
  query ListTimeline($id: ID!, $first: Int!, $after: String) {
    listTimeline(listId: $id, first: $first, after: $after) { edges { node { ...PostFields } } pageInfo { hasNextPage endCursor } }
  }
  ${POST_FIELDS}`;
const TAG_PAGE = gql`
  query TagPage($tag: String!, $first: Int!) {
    tagTimeline(tag: $tag, first: $first) { edges { cursor node { ...PostFields } } }
  }
  ${POST_FIELDS}`;
const LIVE = print(gql`subscription Live($since: ID) { timelineUpdated(since: $since) { ...PostFields } } ${POST_FIELDS}`);
const LIKE = gql`mutation Like($id: ID!) { likePost(postId: $id) { id likesCount viewerHasLiked } }`;
const UNLIKE = gql`mutation Unlike($id: ID!) { unlikePost(postId: $id) { id likesCount viewerHasLiked } }`;
const COMMENT = gql`
  mutation Comment($id: ID!, $content: String!) {
    addComment(postId: $id, content: $content) { id content createdAt author { name } inReplyTo { id author { name } } post { id commentsCount } }
  }`;
const CREATE = gql`mutation Create($input: CreatePostInput!) { createPost(input: $input) { ...PostFields } } ${POST_FIELDS}`;

// The endpoint: ?api=URL, else the page's meta tag, relative to the page.
const params = new URLSearchParams(location.search);
const endpoint = new URL(params.get('api') || document.querySelector('meta[name=graphql-endpoint]').content, location.href).href;
const session = new Session(endpoint);
const { client, ws } = newClient(endpoint, session);

const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
};

// Timeline state.
let cursor = null;
let hasNext = true;
let loading = false;
let newestId = null; // the newest post shown: where a resume starts
let newestCursor = null; // its cursor, when a page brought it
const shown = new Map(); // post id → article

$('login').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = ev.target;
  $('login-error').textContent = '';
  try {
    await session.login(f.login.value.trim(), f.password.value);
    f.reset();
  } catch (err) {
    $('login-error').textContent = err.message;
  }
});
$('logout').addEventListener('click', () => session.logout());

const profileSettings = new ProfileSettings({
  client, session, endpoint,
  form: $('profile-form'), preview: $('profile-preview'), status: $('profile-status'), error: $('profile-error'),
});
const accountSettings = new AccountSettings({ client, session, endpoint, $ });
const mailTokens = new MailTokens({ session, $, onVerified: () => session.loggedIn && accountSettings.load() });
mailTokens.fromLink();
const filterSettings = new FilterSettings({ client, form: $('filter-form'), list: $('filter-list'), error: $('filter-error') });
new AccountDeletion({ client, session, form: $('delete-account-form'), error: $('delete-account-error') });
$('settings-open').addEventListener('click', () => {
  const open = $('settings').hidden;
  $('settings').hidden = !open;
  if (open) {
    profileSettings.load();
    accountSettings.load();
    filterSettings.load();
  }
});
session.addEventListener('change', render);

$('compose').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = ev.target;
  const input = { content: f.content.value, source: 'web', spoilerText: f.spoiler.value, sensitive: f.sensitive.checked };
  const files = [...f.files.files];
  let post;
  if (files.length > 0) {
    // Files go as a multipart request, outside urql: take a fresh token.
    f.querySelector('button').disabled = true;
    const body = await postWithMedia(endpoint, await session.token(), print(CREATE), input, files, f.alt.value.trim())
      .catch((err) => ({ errors: [{ message: `Could not reach the API at ${endpoint}: ${err.message}` }] }));
    f.querySelector('button').disabled = false;
    if (body.errors?.length) {
      $('home-error').textContent = body.errors[0].message;
      return;
    }
    post = body.data.createPost;
  } else {
    const res = await mutate(client, CREATE, { input });
    if (showError(res)) return;
    post = res.data.createPost;
  }
  $('home-error').textContent = '';
  f.reset();
  addPost(post, 'top');
});

let started = false;
async function render() {
  const inside = session.loggedIn;
  $('login').hidden = inside;
  $('reset-part').hidden = inside;
  $('home').hidden = !inside;
  $('logout').hidden = !inside;
  $('bell').hidden = !inside;
  $('settings-open').hidden = !inside;
  if (!inside) $('settings').hidden = true;
  $('who').textContent = session.user ? `@${session.user.name}` : '';
  if (inside && !started) {
    started = true;
    if (!session.user) {
      // A reload: only the refresh token survived.
      try {
        await session.refresh();
      } catch (err) {
        // UNAUTHENTICATED has logged out already; anything else (the
        // gateway is unreachable) is shown, and a reload tries again.
        $('home-error').textContent = `Could not resume the session: ${err.message}`;
        return;
      }
    }
    await loadMore();
    timelineLive.start();
    notifications.start();
    loadTrends(client, $('trend-list'), el);
    showTag();
  } else if (!inside && started) {
    started = false;
    timelineLive.end();
    notifications.stop();
    ws.terminate();
    newestId = newestCursor = null;
    setLive('off', '');
    cursor = null;
    hasNext = true;
    shown.clear();
    curation.show('home');
    $('posts').replaceChildren();
    $('more').textContent = '';
  }
}

async function loadMore() {
  if (loading || !hasNext || !session.loggedIn) return;
  setLoading(true);
  $('more').textContent = 'Loading…';
  const res = await client.query(HOME, { first: PAGE, after: cursor }).toPromise();
  setLoading(false);
  if (showError(res)) {
    $('more').textContent = '';
    return;
  }
  const t = res.data.timeline;
  if (newestId === null && t.edges.length > 0) {
    newestId = t.edges[0].node.id;
    newestCursor = t.edges[0].cursor;
  }
  for (const e of t.edges) addPost(e.node, 'bottom');
  cursor = t.pageInfo.endCursor;
  hasNext = t.pageInfo.hasNextPage;
  $('more').textContent = hasNext ? '' : shown.size ? 'You are all caught up.' : 'Nothing here yet: follow someone, or post.';
  // A short first page may not fill the screen: keep going.
  if (hasNext && document.documentElement.scrollHeight <= innerHeight) loadMore();
}

// setLoading also tells tests (data-loading on <body>) when a page is in
// flight.
function setLoading(on) {
  loading = on;
  document.body.dataset.loading = on;
}

// Infinite scroll: the next page loads when the bottom comes into view.
new IntersectionObserver((entries) => {
  if (entries.some((e) => e.isIntersecting)) loadMore();
}, { rootMargin: '400px' }).observe($('more'));

// The live timeline: new posts at the top, resumed after the newest shown.
const timelineLive = new LiveStream({
  ws, session, query: LIVE, field: 'timelineUpdated',
  since: () => newestId,
  onItem: (p) => {
    if (shown.has(p.id)) {
      // Sent again: the post was edited.
      replacePost(p);
      return;
    }
    newestId = p.id;
    newestCursor = null;
    addPost(p, 'top', true);
  },
  catchUp,
  status: setLive,
});

const curation = new Curation({
  client, el, showError, renderPost, bookmarks: BOOKMARKS, listTimeline: LIST_TIMELINE, me: () => session.user,
  panel: $('curation'), nav: $('views'), home: [$('compose'), $('posts'), $('more')],
});

const notifications = new Notifications({
  client, ws, session,
  bell: $('bell'), count: $('unread'), panel: $('notifications'), list: $('notification-list'), markAll: $('mark-read'),
});

// catchUp loads the posts newer than the newest shown, page by page,
// nearest first (timeline with before), and puts them on top in order.
async function catchUp() {
  if (!newestCursor) {
    // The newest came live, without a cursor: start over from the top.
    const res = await client.query(HOME, { first: PAGE, after: null }).toPromise();
    if (showError(res)) return false;
    const edges = res.data.timeline.edges;
    for (const e of [...edges].reverse()) addPost(e.node, 'top', true);
    if (edges.length > 0) {
      newestId = edges[0].node.id;
      newestCursor = edges[0].cursor;
    }
    return true;
  }
  for (;;) {
    const res = await client.query(NEWER, { first: PAGE, before: newestCursor }).toPromise();
    if (showError(res)) return false;
    const t = res.data.timeline;
    for (const e of [...t.edges].reverse()) addPost(e.node, 'top', true);
    if (t.edges.length > 0) {
      newestId = t.edges[0].node.id;
      newestCursor = t.edges[0].cursor;
    }
    if (!t.pageInfo.hasPreviousPage) return true;
    if (t.pageInfo.startCursor) newestCursor = t.pageInfo.startCursor;
  }
}

// For the browser tests and for debugging from the console: the socket.
globalThis.socialgw = { ws };

ws.on('closed', () => { if (timelineLive.running && $('live-status').dataset.state === 'live') setLive('connecting', 'reconnecting…'); });

function setLive(state, text) {
  const s = $('live-status');
  if (s.dataset.state === 'unavailable' && state === 'live') return;
  s.dataset.state = state;
  s.textContent = text;
}

function addPost(p, where, isNew = false) {
  if (shown.has(p.id)) return;
  const a = renderPost(p);
  if (isNew) a.classList.add('new');
  shown.set(p.id, a);
  if (where === 'top') $('posts').prepend(a);
  else $('posts').append(a);
}

// replacePost shows p (edited) in place of the article showing it.
function replacePost(p) {
  const old = shown.get(p.id);
  const a = renderPost(p);
  a.classList.add('edited');
  shown.set(p.id, a);
  old.replaceWith(a);
}

function renderPost(p) {
  const likeBtn = el('button', { className: 'like', type: 'button' });
  const setLikes = (n, liked) => {
    likeBtn.textContent = `${liked ? '♥' : '♡'} ${n}`;
    likeBtn.classList.toggle('liked', liked);
    likeBtn.dataset.liked = liked;
  };
  setLikes(p.likesCount, p.viewerHasLiked);
  likeBtn.addEventListener('click', async () => {
    const liked = likeBtn.dataset.liked === 'true';
    const res = await mutate(client, liked ? UNLIKE : LIKE, { id: p.id });
    if (showError(res)) return;
    const q = liked ? res.data.unlikePost : res.data.likePost;
    setLikes(q.likesCount, q.viewerHasLiked);
  });

  const count = el('span', { className: 'comment-count', textContent: `${p.commentsCount} comments` });
  const comments = el('ul', { className: 'comments' });
  const setCount = (n) => { count.textContent = `${n} comments`; };
  const renderComment = (c) => commentItem({ client, el, c, postId: p.id, showError, onCount: setCount });
  for (const e of p.comments.edges) comments.append(renderComment(e.node));
  const form = el('form', {}, el('input', { name: 'content', placeholder: 'Comment…', maxLength: 1000, required: true }),
    el('button', { type: 'submit', textContent: 'Reply' }));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const res = await mutate(client, COMMENT, { id: p.id, content: form.content.value });
    if (showError(res)) return;
    const c = res.data.addComment;
    comments.prepend(renderComment(c));
    count.textContent = `${c.post.commentsCount} comments`;
    form.reset();
  });

  const original = p.repostOf &&
    el('blockquote', {}, el('span', { className: 'author', textContent: `@${p.repostOf.author.name}` }), ' ', p.repostOf.content);
  const a = el('article', { className: 'post' },
    el('div', { className: 'meta' },
      p.author.avatar ? el('img', { className: 'avatar', src: p.author.avatar.url, alt: '', width: 24, height: 24 }) : null,
      p.author.displayName ? el('span', { className: 'display-name', textContent: `${p.author.displayName} ` }) : null,
      el('span', { className: 'author', textContent: `@${p.author.name}` }),
      ` · ${new Date(p.createdAt).toLocaleString()}`,
      el('span', { className: 'edited-at', textContent: editedMark(p) }),
      p.visibility === 'PUBLIC' ? null : ` · ${p.visibility === 'ONLY_TO' ? 'only for some' : 'hidden from some'}`),
    p.location?.name ? el('div', { className: 'location', textContent: `at ${p.location.name}` }) : null,
    renderBody(p, el, renderMedia(p.media, el), linkTags(p.content, el)),
    original,
    el('div', { className: 'actions' }, likeBtn, count, ...curation.buttons(p)),
    comments, form);
  if (session.user && p.author.name === session.user.name && !(p.repostOf && !p.content)) {
    a.querySelector('.actions').append(editButton({ client, el, p, a, showError,
      done: (e) => replacePost({ ...p, ...e }) }));
  }
  a.dataset.id = p.id;
  a.dataset.author = p.author.name;
  return a;
}

// showError shows an operation's error and reports whether there was one.
function showError(res) {
  if (!res.error) {
    $('home-error').textContent = '';
    return false;
  }
  const gql = res.error.graphQLErrors[0]?.message;
  // A fetch the browser refused (the gateway is down, or does not allow
  // this page's origin) says only "Failed to fetch".
  $('home-error').textContent = gql || (res.error.networkError
    ? `Could not reach the API at ${endpoint}: is the gateway running, and does its CORS_ORIGINS allow ${location.origin}?`
    : res.error.message);
  return true;
}

// The tag page (#tag/<tag>): the tag's posts in place of the home timeline.
async function showTag() {
  const tag = tagFromHash(location.hash);
  for (const id of ['posts', 'more', 'compose']) $(id).hidden = tag !== null;
  $('tag-view').hidden = tag === null;
  if (tag === null || !session.loggedIn) return;
  $('tag-title').textContent = `#${tag}`;
  $('tag-posts').replaceChildren();
  const res = await client.query(TAG_PAGE, { tag, first: 20 }, { requestPolicy: 'network-only' }).toPromise();
  if (showError(res)) return;
  $('tag-posts').replaceChildren(...res.data.tagTimeline.edges.map((e) => renderPost(e.node)));
  $('tag-empty').hidden = res.data.tagTimeline.edges.length > 0;
}
addEventListener('hashchange', showTag);
$('tag-back').addEventListener('click', (ev) => {
  ev.preventDefault();
  history.pushState(null, '', location.pathname + location.search);
  showTag();
});
mentionAutocomplete(client, $('compose').content, $('mention-list'), el);

render();
