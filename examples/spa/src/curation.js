// Curation in the reference app: bookmark and pin buttons on each post,
// and the Bookmarks, Lists (lists of users you follow, each with its own
// timeline) and Follow requests views (who waits for a locked account to
// approve their follow: Approve makes the follow, Reject drops it). A view's posts are rendered by the home timeline's
// renderPost, so they like, comment, bookmark and pin the same way.
import { gql } from '@urql/core';
import { mutate } from './idempotency.js';

const BOOKMARK = gql`mutation Bookmark($id: ID!) { bookmark(postId: $id) { id viewerHasBookmarked } }`;
const UNBOOKMARK = gql`mutation Unbookmark($id: ID!) { unbookmark(postId: $id) { id viewerHasBookmarked } }`;
const PIN = gql`mutation Pin($id: ID!) { pinPost(id: $id) { id pinned } }`;
const UNPIN = gql`mutation Unpin($id: ID!) { unpinPost(id: $id) { id pinned } }`;
// Up to 100 lists of up to 500 members: the view shows each list's 30
// newest members and how many more it has, which keeps the query within
// the gateway's default complexity limit.
const LISTS = gql`query Lists { lists { id title members(first: 30) { totalCount edges { node { id name } } } } }`;
const CREATE_LIST = gql`mutation CreateList($title: String!) { createList(title: $title) { id title } }`;
const DELETE_LIST = gql`mutation DeleteList($id: ID!) { deleteList(id: $id) }`;
const ADD = gql`mutation AddToList($id: ID!, $users: [ID!]!) { addToList(listId: $id, userIds: $users) { id } }`;
const REMOVE = gql`mutation RemoveFromList($id: ID!, $users: [ID!]!) { removeFromList(listId: $id, userIds: $users) { id } }`;
const USER = gql`query UserByName($name: String!) { user(name: $name) { id name } }`;
const REPORT = gql`mutation ReportPost($id: ID!, $reason: String!) { report(input: {postId: $id, reason: $reason}) { id status } }`;
const REQUESTS = gql`query FollowRequests { followRequests(first: 100) { edges { node { id name displayName } } } }`;
const APPROVE = gql`mutation ApproveFollowRequest($id: ID!) { approveFollowRequest(userId: $id) { id followsViewer } }`;
const REJECT = gql`mutation RejectFollowRequest($id: ID!) { rejectFollowRequest(userId: $id) { id } }`;

// Curation wires the buttons and views; bookmarks and listTimeline are
// the pages' queries (with the home timeline's post fields), renderPost
// draws one post.
export class Curation {
  constructor({ client, el, panel, nav, home, showError, renderPost, bookmarks, listTimeline, me }) {
    Object.assign(this, { client, el, panel, nav, home, showError, renderPost, me });
    this.BOOKMARKS = bookmarks;
    this.LIST_TIMELINE = listTimeline;
    for (const b of nav.querySelectorAll('button[data-view]')) {
      b.addEventListener('click', () => this.show(b.dataset.view));
    }
  }

  // buttons returns a post's bookmark button, and its pin button when the
  // viewer wrote it, else its report button.
  buttons(p) {
    const { el } = this;
    const mark = el('button', { className: 'bookmark', type: 'button' });
    const setMark = (on) => {
      mark.textContent = on ? 'Bookmarked' : 'Bookmark';
      mark.dataset.bookmarked = on;
    };
    setMark(p.viewerHasBookmarked);
    mark.addEventListener('click', async () => {
      const on = mark.dataset.bookmarked === 'true';
      const res = await mutate(this.client, on ? UNBOOKMARK : BOOKMARK, { id: p.id });
      if (this.showError(res)) return;
      setMark((on ? res.data.unbookmark : res.data.bookmark).viewerHasBookmarked);
    });
    if (p.author.id !== this.me()?.id) return [mark, this.reportButton(p)];
    const pin = el('button', { className: 'pin', type: 'button' });
    const setPin = (on) => {
      pin.textContent = on ? 'Pinned' : 'Pin';
      pin.dataset.pinned = on;
    };
    setPin(p.pinned);
    pin.addEventListener('click', async () => {
      const on = pin.dataset.pinned === 'true';
      const res = await mutate(this.client, on ? UNPIN : PIN, { id: p.id });
      if (this.showError(res)) return;
      setPin((on ? res.data.unpinPost : res.data.pinPost).pinned);
    });
    return [mark, pin];
  }

  // reportButton reports a post to the moderators with a reason the
  // viewer types; reporting it again is the same report.
  reportButton(p) {
    const b = this.el('button', { className: 'report', type: 'button', textContent: 'Report' });
    b.addEventListener('click', async () => {
      const reason = window.prompt('Why report this post to the moderators?');
      if (!reason || !reason.trim()) return;
      const res = await mutate(this.client, REPORT, { id: p.id, reason });
      if (this.showError(res)) return;
      b.textContent = 'Reported';
      b.disabled = true;
    });
    return b;
  }

  // show switches to a view: home, bookmarks, lists or requests.
  async show(view) {
    document.body.dataset.view = view;
    for (const b of this.nav.querySelectorAll('button[data-view]')) b.setAttribute('aria-pressed', b.dataset.view === view);
    for (const e of this.home) e.hidden = view !== 'home';
    this.panel.hidden = view === 'home';
    if (view === 'bookmarks') await this.showPosts('Bookmarks', this.BOOKMARKS, {}, 'bookmarks');
    if (view === 'lists') await this.showLists();
    if (view === 'requests') await this.showRequests();
  }

  // showRequests lists the users waiting for the viewer's approval, each
  // with Approve and Reject; the list is read again after each.
  async showRequests() {
    const { el } = this;
    const res = await this.client.query(REQUESTS, {}, { requestPolicy: 'network-only' }).toPromise();
    if (this.showError(res)) return;
    const act = (text, cls, op, id) => {
      const b = el('button', { type: 'button', className: cls, textContent: text });
      b.addEventListener('click', async () => {
        b.disabled = true;
        if (!this.showError(await mutate(this.client, op, { id }))) this.showRequests();
      });
      return b;
    };
    const items = res.data.followRequests.edges.map(({ node }) => {
      const li = el('li', { className: 'request' }, `${node.displayName || node.name} @${node.name} `,
        act('Approve', 'approve', APPROVE, node.id), ' ', act('Reject', 'reject', REJECT, node.id));
      li.dataset.name = node.name;
      return li;
    });
    this.panel.replaceChildren(el('h2', { textContent: 'Follow requests' }),
      items.length ? el('ul', { className: 'requests' }, ...items)
        : el('p', { className: 'empty', textContent: 'No one is waiting for your approval.' }));
  }

  // showPosts shows the first page of a view's posts, with a More
  // button while the view has older ones: each click appends the next
  // page, read from the last page's endCursor.
  async showPosts(title, query, vars, field) {
    const { el } = this;
    const posts = el('div', { className: 'view-posts' });
    const more = el('button', { type: 'button', className: 'more', textContent: 'More', hidden: true });
    const empty = el('p', { className: 'empty', textContent: 'Nothing here yet.', hidden: true });
    let after = null;
    const page = async () => {
      more.disabled = true;
      const res = await this.client.query(query, { first: 20, after, ...vars }, { requestPolicy: 'network-only' }).toPromise();
      more.disabled = false;
      if (this.showError(res)) return;
      const { edges, pageInfo } = res.data[field];
      posts.append(...edges.map((e) => this.renderPost(e.node)));
      after = pageInfo.endCursor;
      more.hidden = !pageInfo.hasNextPage;
      empty.hidden = posts.childElementCount > 0;
    };
    more.addEventListener('click', page);
    this.panel.replaceChildren(el('h2', { textContent: title }), posts, empty, more);
    await page();
  }

  async showLists() {
    const { el } = this;
    const res = await this.client.query(LISTS, {}, { requestPolicy: 'network-only' }).toPromise();
    if (this.showError(res)) return;
    const create = el('form', { className: 'create-list' },
      el('input', { name: 'listTitle', placeholder: 'New list', maxLength: 100, required: true }),
      el('button', { type: 'submit', textContent: 'Create' }));
    create.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (this.showError(await mutate(this.client, CREATE_LIST, { title: create.elements.listTitle.value }))) return;
      this.showLists();
    });
    const items = res.data.lists.map((l) => this.renderList(l));
    this.panel.replaceChildren(el('h2', { textContent: 'Lists' }), create, el('ul', { className: 'lists' }, ...items));
  }

  renderList(l) {
    const { el } = this;
    const act = (text, cls, fn) => {
      const b = el('button', { type: 'button', className: cls, textContent: text });
      b.addEventListener('click', fn);
      return b;
    };
    const members = l.members.edges.map((e) => el('li', {}, `@${e.node.name} `,
      act('Remove', 'remove-member', async () => {
        if (!this.showError(await mutate(this.client, REMOVE, { id: l.id, users: [e.node.id] }))) this.showLists();
      })));
    const add = el('form', { className: 'add-member' },
      el('input', { name: 'member', placeholder: 'Add someone you follow', required: true }),
      el('button', { type: 'submit', textContent: 'Add' }));
    add.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      // Not form.name or form.title: those are the form's own properties.
      const name = add.elements.member.value.trim().replace(/^@/, '');
      const u = await this.client.query(USER, { name }).toPromise();
      if (this.showError(u)) return;
      if (!u.data.user) {
        this.showError({ error: { graphQLErrors: [{ message: `No user ${name}` }] } });
        return;
      }
      if (!this.showError(await mutate(this.client, ADD, { id: l.id, users: [u.data.user.id] }))) this.showLists();
    });
    const li = el('li', { className: 'list' }, el('b', { textContent: l.title }), ' ',
      act('Open', 'open-list', () => this.showPosts(l.title, this.LIST_TIMELINE, { id: l.id }, 'listTimeline')),
      act('Delete', 'delete-list', async () => {
        if (!this.showError(await mutate(this.client, DELETE_LIST, { id: l.id }))) this.showLists();
      }),
      el('ul', { className: 'members' }, ...members,
        l.members.totalCount > members.length ? el('li', { className: 'more-members', textContent: `and ${l.members.totalCount - members.length} more` }) : null),
      add);
    li.dataset.id = l.id;
    li.dataset.title = l.title;
    return li;
  }
}
