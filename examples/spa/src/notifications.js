// The notifications button (the bell): the unread count, the list (newest first),
// marking them read, and new ones arriving live through notificationAdded,
// resumed `since` the newest one shown (see live.js). An aggregated
// notification that grows arrives again with a new id: it replaces the
// one shown for the same post and kind.
import { gql } from '@urql/core';
import { print } from 'graphql';
import { LiveStream } from './live.js';
import { mutate } from './idempotency.js';

const FIELDS = gql`
  fragment NoteFields on Notification {
    id kind read actorsCount updatedAt
    actors(first: 3) { name }
    post { id content }
    comment { id content }
  }`;
const LIST = gql`
  query Notifications($first: Int!) {
    notifications(first: $first) { unreadCount edges { node { ...NoteFields } } }
  }
  ${FIELDS}`;
const UNREAD = gql`query Unread { notifications(first: 1) { unreadCount } }`;
const MARK = gql`mutation MarkRead($upTo: ID) { markNotificationsRead(upTo: $upTo) }`;
const LIVE = print(gql`subscription Notes($since: ID) { notificationAdded(since: $since) { ...NoteFields } } ${FIELDS}`);

const VERBS = {
  LIKE: 'liked your post',
  REPOST: 'reposted your post',
  COMMENT: 'commented on your post',
  FOLLOW: 'followed you',
  FOLLOW_REQUEST: 'asks to follow you (see Follow requests)',
  MENTION: 'mentioned you',
};

export class Notifications {
  // el: the bell button, its count and the panel with the list.
  constructor({ client, ws, session, bell, count, panel, list, markAll }) {
    Object.assign(this, { client, bell, count, panel, list });
    this.newestId = null;
    this.items = new Map(); // key (kind and post) → li
    this.live = new LiveStream({
      ws, session, query: LIVE, field: 'notificationAdded',
      since: () => this.newestId,
      onItem: (n) => this.arrived(n),
      catchUp: () => this.load(),
      status: (state) => { bell.dataset.live = state; },
    });
    bell.addEventListener('click', () => {
      panel.hidden = !panel.hidden;
      bell.setAttribute('aria-expanded', String(!panel.hidden));
    });
    markAll.addEventListener('click', () => this.markRead());
  }

  async start() {
    await this.load();
    this.live.start();
  }

  stop() {
    this.live.end();
    this.newestId = null;
    this.items.clear();
    this.list.replaceChildren();
    this.setUnread(0);
    this.panel.hidden = true;
  }

  // load shows the newest page; it resolves to whether it could.
  async load() {
    const res = await this.client.query(LIST, { first: 20 }).toPromise();
    if (res.error) return false;
    const c = res.data.notifications;
    this.items.clear();
    this.list.replaceChildren();
    for (const e of [...c.edges].reverse()) this.show(e.node);
    if (c.edges.length > 0) this.newestId = c.edges[0].node.id;
    this.setUnread(c.unreadCount);
    return true;
  }

  async arrived(n) {
    this.newestId = n.id;
    this.show(n);
    // An aggregated one may have been unread already: ask for the count.
    const res = await this.client.query(UNREAD, {}).toPromise();
    if (!res.error) this.setUnread(res.data.notifications.unreadCount);
  }

  async markRead() {
    const res = await mutate(this.client, MARK, { upTo: this.newestId });
    if (res.error) return;
    this.setUnread(res.data.markNotificationsRead);
    for (const li of this.items.values()) li.classList.remove('unread');
  }

  setUnread(n) {
    this.count.textContent = n > 0 ? String(n) : '';
    this.bell.dataset.unread = n;
    this.bell.title = `${n} unread notifications`;
  }

  // show puts n at the top, in place of the one of the same post and kind.
  show(n) {
    const key = n.kind === 'COMMENT' || n.kind === 'MENTION' ? n.id : `${n.kind}:${n.post?.id ?? ''}`;
    this.items.get(key)?.remove();
    const names = n.actors.map((a) => `@${a.name}`).join(', ');
    const others = n.actorsCount - n.actors.length;
    const who = others > 0 ? `${names} and ${others} other${others > 1 ? 's' : ''}` : names;
    const li = document.createElement('li');
    li.className = n.read ? 'note' : 'note unread';
    li.dataset.id = n.id;
    li.dataset.kind = n.kind;
    li.textContent = `${who} ${VERBS[n.kind] || n.kind.toLowerCase()}`;
    const quote = n.comment?.content || n.post?.content;
    if (quote) {
      const q = document.createElement('q');
      q.textContent = quote.length > 80 ? quote.slice(0, 79) + '…' : quote;
      li.append(': ', q);
    }
    this.items.set(key, li);
    this.list.prepend(li);
  }
}
