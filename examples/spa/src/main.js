// The reference single-page app: log in, the home timeline with infinite
// scroll, likes, comments, posting, and new posts arriving live through
// the timelineUpdated subscription.
import { gql } from '@urql/core';
import { Session } from './session.js';
import { newClient } from './client.js';

const PAGE = 10;

const POST_FIELDS = gql`
  fragment PostFields on Post {
    id content createdAt visibility
    author { id name }
    repostOf { id content author { name } }
    likesCount viewerHasLiked commentsCount
    comments(first: 3) { edges { node { id content createdAt author { name } } } }
  }`;
const HOME = gql`
  query Home($first: Int!, $after: String) {
    timeline(first: $first, after: $after) {
      edges { node { ...PostFields } }
      pageInfo { hasNextPage endCursor }
    }
  }
  ${POST_FIELDS}`;
const LIVE = gql`subscription Live { timelineUpdated { ...PostFields } } ${POST_FIELDS}`;
const LIKE = gql`mutation Like($id: ID!) { likePost(postId: $id) { id likesCount viewerHasLiked } }`;
const UNLIKE = gql`mutation Unlike($id: ID!) { unlikePost(postId: $id) { id likesCount viewerHasLiked } }`;
const COMMENT = gql`
  mutation Comment($id: ID!, $content: String!) {
    addComment(postId: $id, content: $content) { id content createdAt author { name } post { id commentsCount } }
  }`;
const CREATE = gql`mutation Create($content: String!) { createPost(input: {content: $content}) { ...PostFields } } ${POST_FIELDS}`;

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
let live = null;
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
session.addEventListener('change', render);

$('compose').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = ev.target;
  const res = await client.mutation(CREATE, { content: f.content.value }).toPromise();
  if (showError(res)) return;
  f.reset();
  addPost(res.data.createPost, 'top');
});

let started = false;
async function render() {
  const inside = session.loggedIn;
  $('login').hidden = inside;
  $('home').hidden = !inside;
  $('logout').hidden = !inside;
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
    subscribe();
  } else if (!inside && started) {
    started = false;
    live?.unsubscribe();
    live = null;
    ws.terminate();
    setLive('off', '');
    cursor = null;
    hasNext = true;
    shown.clear();
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

function subscribe() {
  setLive('connecting', 'connecting…');
  live = client.subscription(LIVE, {}).subscribe((res) => {
    if (res.error) {
      // The gateway may not offer live updates (an older version); the
      // timeline works without them.
      const msg = res.error.graphQLErrors[0]?.message || res.error.message;
      setLive('unavailable', `live updates unavailable: ${msg}`);
      return;
    }
    setLive('live', 'live');
    addPost(res.data.timelineUpdated, 'top', true);
  });
}
ws.on('connected', () => { if (live) setLive('live', 'live'); });
ws.on('closed', () => { if (live && $('live-status').dataset.state === 'live') setLive('connecting', 'reconnecting…'); });

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
    const res = await client.mutation(liked ? UNLIKE : LIKE, { id: p.id }).toPromise();
    if (showError(res)) return;
    const q = liked ? res.data.unlikePost : res.data.likePost;
    setLikes(q.likesCount, q.viewerHasLiked);
  });

  const count = el('span', { className: 'comment-count', textContent: `${p.commentsCount} comments` });
  const comments = el('ul', { className: 'comments' });
  for (const e of p.comments.edges) comments.append(renderComment(e.node));
  const form = el('form', {}, el('input', { name: 'content', placeholder: 'Comment…', maxLength: 1000, required: true }),
    el('button', { type: 'submit', textContent: 'Reply' }));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const res = await client.mutation(COMMENT, { id: p.id, content: form.content.value }).toPromise();
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
      el('span', { className: 'author', textContent: `@${p.author.name}` }),
      ` · ${new Date(p.createdAt).toLocaleString()}`,
      p.visibility === 'PUBLIC' ? null : ` · ${p.visibility === 'ONLY_TO' ? 'only for some' : 'hidden from some'}`),
    el('div', { className: 'content', textContent: p.content }),
    original,
    el('div', { className: 'actions' }, likeBtn, count),
    comments, form);
  a.dataset.id = p.id;
  a.dataset.author = p.author.name;
  return a;
}

function renderComment(c) {
  return el('li', {}, el('span', { className: 'author', textContent: `@${c.author.name}` }), ' ', c.content);
}

// showError shows an operation's error and reports whether there was one.
function showError(res) {
  if (!res.error) {
    $('home-error').textContent = '';
    return false;
  }
  $('home-error').textContent = res.error.graphQLErrors[0]?.message || res.error.message;
  return true;
}

render();
