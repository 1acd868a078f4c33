package redisstore

import (
	"strconv"
	"strings"
)

// Keys builds every Redis key of the gateway; nothing else in the module
// spells a key (its methods are here, discovery's in keys_discovery.go,
// data exports' in keys_export.go and moderation's in
// keys_moderation.go). docs/data-model.md lists each one with its type,
// writer and bound.
//
// Hash tags: every key that belongs to one user carries {u<id>} and every
// key that belongs to one post carries {p<id>}, so the multi-key scripts
// and transactions that touch one user's or one post's keys stay within
// one Redis Cluster hash slot. Global indexes share the {acct} tag.
type Keys struct {
	prefix string
}

// NewKeys returns the key builder for a prefix (e.g. "sg:").
func NewKeys(prefix string) Keys { return Keys{prefix: prefix} }

// UserSeq is the INCR counter that hands out user ids.
func (k Keys) UserSeq() string { return k.prefix + "{acct}:seq:user" }

// Names maps lower-cased user names to user ids (hash).
func (k Keys) Names() string { return k.prefix + "{acct}:names" }

// Emails maps lower-cased e-mail addresses to user ids (hash).
func (k Keys) Emails() string { return k.prefix + "{acct}:emails" }

// RegPending maps the id of a registration whose name and e-mail claims
// are written but whose profile may not be yet to its start time (ms); the
// registration removes its entry when it is done (account.go).
func (k Keys) RegPending() string { return k.prefix + "{acct}:pending" }

// legacyLockedUsers is the set of locked accounts an earlier version
// kept; MigrateAuthorFlags moves it into AuthorFlags.
func (k Keys) legacyLockedUsers() string { return k.prefix + "{acct}:locked" }

// UserVoid marks a user id whose registration was abandoned and rolled
// back, so a late profile write of it is refused (account.go). Expires
// after a day.
func (k Keys) UserVoid(id string) string { return k.userKey(id, ":void") }

// GraphPending is u's hash of graph edits begun but not finished on both
// users' sides: other user id → "<op>:<start ms>" (graph.go).
func (k Keys) GraphPending(u string) string { return k.userKey(u, ":pending") }

// GraphPendingIndex is the zset of users who began a graph edit, scored by
// the start (ms), so SweepPending finds abandoned edits without scanning
// every user; entries go once their user has nothing pending.
func (k Keys) GraphPendingIndex() string { return k.prefix + "{gpending}:users" }

// User is the profile and credentials hash of one user. It has a prefix
// of its own (ProfilePrefix), in the user's slot: the gateways' profile
// cache asks Redis to announce every write of a key with that prefix, and
// no other key starts with it, so writes of home lists, follower sets and
// the rest of a user's keys cost no announcement. MigrateProfiles moves
// hashes from their earlier name (LegacyUser).
func (k Keys) User(id string) string { return k.ProfilePrefix() + "{u" + id + "}" }

// ProfilePrefix is what User keys, and only they, start with.
func (k Keys) ProfilePrefix() string { return k.prefix + "up:" }

// LegacyUser is the name a user's profile hash had before it got a prefix
// of its own (User): read only by MigrateProfiles.
func (k Keys) LegacyUser(id string) string { return k.userKey(id, "") }

// userKey and postKey are the keys of a user's and a post's slot: one
// concatenation, so one allocation (a page builds a dozen keys a post).
func (k Keys) userKey(id, suffix string) string { return k.prefix + "u:{u" + id + "}" + suffix }
func (k Keys) postKey(id, suffix string) string { return k.prefix + "p:{p" + id + "}" + suffix }

// Session is the refresh-token family hash (uid, current and earlier
// token hashes, successor key).
func (k Keys) Session(family string) string { return k.prefix + "sess:{" + family + "}" }

// Denied marks a revoked access token id until the token expires.
func (k Keys) Denied(jti string) string { return k.prefix + "deny:{" + jti + "}" }

// MailToken is the hash of u's pending e-mail token of a purpose
// ("verify": an address to confirm; "reset": a password reset): the
// token's SHA-256 (h), its expiry in ms (x) and the address it was mailed
// to (e). Only a hash is kept; a new token replaces the previous one.
// Expires with the token (mail.go).
func (k Keys) MailToken(u, purpose string) string { return k.userKey(u, ":mail:"+purpose) }

// EmailPending maps a user id to the address reserved for its pending
// e-mail change and the reservation's expiry (JSON [address, ms]); the
// address maps to "~<id>" in Emails meanwhile (mail.go).
func (k Keys) EmailPending() string { return k.prefix + "{acct}:emailpend" }

// UserSessions is the set of u's sessions (Session names), so a password
// change or reset ends them all; entries of sessions that expired are
// pruned as new ones are added (session_index.go).
func (k Keys) UserSessions(u string) string { return k.userKey(u, ":sessions") }

// MailQueue is the stream of account e-mails to send, read by the
// fan-out workers (internal/fanout) in a consumer group of its own; its
// dead-letter stream and its workers' liveness keys share its slot.
func (k Keys) MailQueue() string { return k.prefix + "{mail}:jobs" }

// MailDead is MailQueue's dead-letter stream.
func (k Keys) MailDead() string { return k.prefix + "{mail}:dead" }

// MailAlive prefixes the liveness keys of MailQueue's workers.
func (k Keys) MailAlive() string { return k.prefix + "{mail}:alive:" }

// Social graph (all in the owning user's slot).

// Following is the zset of users u follows, scored by follow time (ms).
func (k Keys) Following(u string) string { return k.userKey(u, ":following") }

// Followers is the zset of users following u, scored by follow time (ms).
func (k Keys) Followers(u string) string { return k.userKey(u, ":followers") }

// FollowRequests is the zset of users asking to follow u (a locked
// account), scored by when they asked (ms).
func (k Keys) FollowRequests(u string) string { return k.userKey(u, ":followreqs") }

// Blocks is the set of users u blocked.
func (k Keys) Blocks(u string) string { return k.userKey(u, ":blocks") }

// BlockedBy is the set of users who blocked u (the mirror of Blocks), so a
// reader's filters load with its own keys.
func (k Keys) BlockedBy(u string) string { return k.userKey(u, ":blockedby") }

// Mutes is the set of users u muted.
func (k Keys) Mutes(u string) string { return k.userKey(u, ":mutes") }

// MutedBy is the set of users who muted u (the mirror of Mutes), so
// fan-out leaves them out with the page of u's followers it reads, in u's
// slot, instead of looking at each reader's Mutes.
func (k Keys) MutedBy(u string) string { return k.userKey(u, ":mutedby") }

// Posts and timelines.

// PostSeq is the INCR counter that hands out post ids.
func (k Keys) PostSeq() string { return k.prefix + "{seq}:post" }

// Post is the hash of one post.
func (k Keys) Post(id string) string { return k.postKey(id, "") }

// PostOnlyTo is the set of users a post is restricted to.
func (k Keys) PostOnlyTo(id string) string { return k.postKey(id, ":only") }

// PostNotTo is the set of users a post is hidden from.
func (k Keys) PostNotTo(id string) string { return k.postKey(id, ":not") }

// PostReposts is the set of reposts of a post (ids).
func (k Keys) PostReposts(id string) string { return k.postKey(id, ":reposts") }

// PostPlainReposts is the hash of a post's plain reposts: reposter → the
// id of their one plain repost of it (viewerHasReposted).
func (k Keys) PostPlainReposts(id string) string { return k.postKey(id, ":plain") }

// PostViewers is the hash of what a post means to each viewer it has to
// do with: user id → flag letters, l (likes it: in Likers), r (has a
// plain repost of it: in PostPlainReposts) and a (in its audience set,
// PostOnlyTo or PostNotTo, as the post's vis says), so a page reads a
// viewer's marks and audience membership with one HGET. Written in the
// same script as what each letter mirrors; kept only for posts whose hash
// has layout (post_migrate.lua builds it for older posts).
func (k Keys) PostViewers(id string) string { return k.postKey(id, ":v") }

// UserPosts is u's own timeline: a zset of post ids scored by id.
func (k Keys) UserPosts(u string) string { return k.userKey(u, ":posts") }

// PublicPosts is the part of UserPosts that everyone may see (PUBLIC
// audience), scored by id: its ZCARD is postsCount for other viewers, so
// the count does not reveal posts hidden from them. Written and trimmed
// with UserPosts.
func (k Keys) PublicPosts(u string) string { return k.userKey(u, ":pubposts") }

// The reader's index of u's posts (postindex.go): PublicPosts, NotToPosts
// and OnlyToPosts split UserPosts by audience, so that a signed-in
// reader's scan of u's posts merges PublicPosts, NotToPosts and
// OnlyToPosts(u, reader) and never reads a post addressed only to others.
// All in u's slot, written with UserPosts in one script.

// NotToPosts is u's NOT_TO posts (visible to every signed-in reader their
// audience does not list), scored by id.
func (k Keys) NotToPosts(u string) string { return k.userKey(u, ":notposts") }

// OnlyToPosts is u's ONLY_TO posts whose audience lists reader, scored by
// id: one zset per (author, listed reader) pair.
func (k Keys) OnlyToPosts(u, reader string) string { return k.userKey(u, ":onlyto:"+reader) }

// NotToListed is u's NOT_TO posts whose audience lists reader (hidden
// from them), scored by id: one zset per (author, listed reader) pair, so
// that reader's scans of NotToPosts step over them inside Redis.
func (k Keys) NotToListed(u, reader string) string { return k.userKey(u, ":notto:"+reader) }

// Home is u's home timeline as filled by fan-out, capped; in hybrid mode
// it expires with HomeMark when u stops reading (timeline_homelist.go).
func (k Keys) Home(u string) string { return k.userKey(u, ":home") }

// HomeMark is u's home-timeline bookkeeping hash (floor, last pull mark,
// last activity); in hybrid mode it expires with Home.
func (k Keys) HomeMark(u string) string { return k.userKey(u, ":homemark") }

// recipientKeyParts are the parts of a fan-out recipient's keys around
// their id, for deliver_batch.lua, which builds the keys of a whole batch
// of recipients from their ids: what every user key starts with, then what
// Home, HomeMark, Following and LiveUser add after the id. They are
// read off the builders above, so the layout is still written only here.
func (k Keys) recipientKeyParts() []any {
	head, _ := aroundID(func(id string) string { return k.userKey(id, "") })
	parts := []any{head}
	for _, key := range []func(string) string{k.Home, k.HomeMark, k.Following, k.LiveUser} {
		h, tail := aroundID(key)
		if h != head {
			panic("redisstore: a recipient key does not start as userKey does: " + key("<id>"))
		}
		parts = append(parts, tail)
	}
	return parts
}

// aroundID splits key(id) around id.
func aroundID(key func(string) string) (head, tail string) {
	const id = "\x00"
	s := key(id)
	i := strings.Index(s, id)
	return s[:i], s[i+len(id):]
}

// Fan-out queue.

// FanoutStream is the stream of fan-out jobs of shard 0 (consumer group
// "fanout").
func (k Keys) FanoutStream() string { return k.FanoutShard(0) }

// FanoutDead is the dead-letter stream of shard 0's jobs that kept failing.
func (k Keys) FanoutDead() string { return k.FanoutDeadShard(0) }

// FanoutShard is the job stream of one shard of the fan-out queue. Each
// shard has its own hash tag, so on Redis Cluster the shards spread over
// the masters; shard 0 keeps the name of the unsharded queue, so jobs
// queued before sharding are still consumed.
func (k Keys) FanoutShard(i int) string { return k.prefix + fanoutTag(i) + ":jobs" }

// FanoutDeadShard is the dead-letter stream of one shard, in its slot.
func (k Keys) FanoutDeadShard(i int) string { return k.prefix + fanoutTag(i) + ":dead" }

// FanoutAliveShard prefixes the keys (a string each, with a TTL) by which
// the workers of one shard show they live: the prefix and the consumer's
// name, in the shard's slot.
func (k Keys) FanoutAliveShard(i int) string { return k.prefix + fanoutTag(i) + ":alive:" }

func fanoutTag(i int) string {
	if i == 0 {
		return "{fanout}"
	}
	return "{fanout" + strconv.Itoa(i) + "}"
}

// Likes and comments (in the post's slot).

// Likers is the zset of users who liked a post, scored by like time (ms).
func (k Keys) Likers(post string) string { return k.postKey(post, ":likers") }

// PostComments is the list of a post's comment ids, newest first.
func (k Keys) PostComments(post string) string { return k.postKey(post, ":comments") }

// CommentReplies is the list of the ids of a comment's answers, oldest
// first, in its post's slot: written with each answer by
// addCommentScript, an answer's id taken out when it is deleted and the
// list deleted with its comment (deleteCommentScript) or its post.
func (k Keys) CommentReplies(post, comment string) string { return k.postKey(post, ":cr:"+comment) }

// PostEdits is the list of a post's earlier versions, newest first, at
// most social.MaxEdits (editPostScript), in the post's slot; deleted
// with the post.
func (k Keys) PostEdits(post string) string { return k.postKey(post, ":edits") }

// CommentSeq is the INCR counter that hands out comment ids.
func (k Keys) CommentSeq() string { return k.prefix + "{seq}:comment" }

// PostComment is the hash of one comment (author, content, created ms), kept
// in its post's slot rather than under Comment's own tag: adding or deleting
// a comment and its entry in PostComments is then one atomic script, also
// under Redis Cluster, so commentsCount (LLEN) never drifts. One per comment
// (plus a deleted comment's tombstone for a minute); removed with the
// comment or its post.
func (k Keys) PostComment(post, id string) string { return k.postKey(post, ":c:"+id) }

// CommentRetry marks a comment whose notification job may not be queued
// yet: a string holding the comment's id, in its post's slot, written by
// addCommentScript with the comment and deleted once the job is queued.
// A retry of the same comment (same author, post and text digest) finds
// it and answers that comment instead of writing a second one.
func (k Keys) CommentRetry(post, author, digest string) string {
	return k.postKey(post, ":cq:"+author+":"+digest)
}

// CommentPost is the comment→post index that finds PostComment from a bare
// comment id: a hash whose field is the comment id and value its post id.
// Comment ids are bucketed by id/100, so a bucket holds at most 100 fields
// and stays a compact listpack.
func (k Keys) CommentPost(id string) string {
	bucket := "0"
	if len(id) > 2 {
		bucket = id[:len(id)-2]
	}
	return k.prefix + "ci:{ci" + bucket + "}"
}

// Celebrities and pulled authors (hybrid fan-out, docs/fanout.md).

// Celebrities is the hash of the authors hybrid fan-out no longer pushes
// (more followers than the threshold when they posted): author id →
// "pending" while the worker registers them with their followers, "done"
// after. One field per such author; a status is sticky.
func (k Keys) Celebrities() string { return k.prefix + "{celeb}:all" }

// FeedSettings is the hash of the timeline settings every gateway and
// worker of a deployment shares (ClaimFeed), by their variables' names.
func (k Keys) FeedSettings() string { return k.prefix + "{cfg}:feed" }

// Layout is the hash of the data layout changes made to the deployment's
// keys, by name ("profiles": MigrateProfiles moved every profile hash to
// its User name), so a later start skips the scan.
func (k Keys) Layout() string { return k.prefix + "{cfg}:layout" }

// CelebFollowing is the set of the Celebrities u follows, whose posts u's
// home pages merge in at read time. At most one member per user u follows;
// written by the fan-out worker (registration) and the follow hook, trimmed
// by the unfollow and block hooks.
func (k Keys) CelebFollowing(u string) string { return k.userKey(u, ":celebs") }

// Rate limits (internal/ratelimit).

// RateLimit is the GCRA state of one rate-limit rule for one subject (a
// hashed address, account or user): a string written by redis_rate, which
// puts "rate:" in front of this name, so the key in Redis is
// "rate:<prefix>rl:<rule>:<subject>". It expires when the budget is full
// again (at most the rule's period).
func (k Keys) RateLimit(rule, subject string) string { return k.prefix + "rl:" + rule + ":" + subject }

// Automatic persisted queries (apq.go), all in the {apq} slot.

// APQ is the document of one persisted query, by its SHA-256 hash (a
// string with the cache's TTL).
func (k Keys) APQ(hash string) string { return k.prefix + "{apq}:q:" + hash }

// APQIndex is the zset of cached query hashes by time added (ms), which
// bounds the cache's entry count.
func (k Keys) APQIndex() string { return k.prefix + "{apq}:index" }

// Idempotency keys (idempotency.go), in their user's slot.

// IdemRecord is the record of one idempotency key of user u: a hash of
// the request's hash, its state (pending, done), its claim token, its
// answer once done and when it ends; it expires with the pending lifetime
// while its execution runs, then with the TTL (24 h).
func (k Keys) IdemRecord(u, key string) string { return k.userKey(u, ":idem:k:"+key) }

// IdemIndex is the zset of u's live idempotency keys by claim time (ms),
// which bounds how many u has.
func (k Keys) IdemIndex(u string) string { return k.userKey(u, ":idem") }

// Prefix is the prefix every key of the store starts with (rate-limit
// keys carry it after redis_rate's own "rate:").
func (k Keys) Prefix() string { return k.prefix }

// Live timelines (sharded pub/sub channels, not keys: they hold nothing).
// A SPUBLISH from a script must name a channel in the script's slot, so a
// user's channel carries the user's tag: the delivery script publishes in
// the same atomic step that puts the post in the home list.

// LiveUser is the sharded channel of the posts landing in u's home
// timeline: a message "<post id>:<author id>" each time one does.
func (k Keys) LiveUser(u string) string { return k.userKey(u, ":live") }

// LivePulled is the sharded channel of the posts of pulled authors (pull
// mode, hybrid celebrities), which land in no home list: every gateway
// with live subscribers listens to it and checks each subscriber.
func (k Keys) LivePulled() string { return k.prefix + "{live}:pulled" }

// Notifications (notes.go), all in their recipient's slot.

// Notes is u's notifications: a zset of group ids scored by the activity
// number that last raised them (NoteMeta's act), which is also the
// notification's id.
func (k Keys) Notes(u string) string { return k.userKey(u, ":notes") }

// NoteData is the hash of u's notifications: group id →
// "kind|post|comment|updated ms|group key", and for one read from its
// source (likes, follows: notes_agg.go) "|lo|hi|hwm": its window of the
// source's scores and the highest score that raised it.
func (k Keys) NoteData(u string) string { return k.userKey(u, ":notedata") }

// NoteOpen is the hash of u's aggregation: group key → "group id|opened
// ms" for the group that takes new actors; "a|<group key>|<actor>" → the
// group id holding that actor, for the kinds that keep their actors
// (comments, mentions, reposts); "w|<group key>" → the group ids of the
// windows of a group read from its source, newest first.
func (k Keys) NoteOpen(u string) string { return k.userKey(u, ":noteopen") }

// NoteMeta is the hash of u's counters: seq (group ids), act (activity
// numbers), read (the activity number read up to).
func (k Keys) NoteMeta(u string) string { return k.userKey(u, ":notemeta") }

// NoteActors is the zset of the actors of one of u's notifications that
// keep them (comments, mentions, reposts), scored by when they acted (ms);
// with gid "" the prefix the scripts add ids to.
func (k Keys) NoteActors(u, gid string) string { return k.userKey(u, ":na:"+gid) }

// LiveNotes is the sharded channel announcing u's notifications (the
// activity number), in u's slot.
func (k Keys) LiveNotes(u string) string { return k.userKey(u, ":livenotes") }

// Curation (curation_*.go): bookmarks, pinned posts and lists.

// Bookmarks is the zset of the posts u bookmarked, scored by when (ms).
func (k Keys) Bookmarks(u string) string { return k.userKey(u, ":bookmarks") }

// PostBookmarkers is the set of the users who bookmarked a post: the
// delete job finds their Bookmarks through it.
func (k Keys) PostBookmarkers(id string) string { return k.postKey(id, ":bookmarkers") }

// Pins is the zset of the posts u pinned to their profile, scored by when
// (ms); at most social.MaxPins.
func (k Keys) Pins(u string) string { return k.userKey(u, ":pins") }

// FilterSeq is the INCR counter that hands out keyword filter ids.
func (k Keys) FilterSeq() string { return k.prefix + "{seq}:filter" }

// Filters is the hash of u's keyword filters: filter id → the filter
// packed (filterRecord); at most social.MaxFilters that have not expired.
func (k Keys) Filters(u string) string { return k.userKey(u, ":filters") }

// ListSeq is the INCR counter that hands out list ids.
func (k Keys) ListSeq() string { return k.prefix + "{seq}:list" }

// Lists is the hash of u's lists: list id → title.
func (k Keys) Lists(u string) string { return k.userKey(u, ":lists") }

// ListMembers is the zset of the members of u's list lid, scored by when
// they were added (ms); with lid "" the prefix the scripts add ids to.
func (k Keys) ListMembers(u, lid string) string { return k.userKey(u, ":lm:"+lid) }

// ListFeed is the timeline of u's list lid: a zset of "<post id>:<author
// id>" scored by the post id; with lid "" the prefix the scripts add ids
// to.
func (k Keys) ListFeed(u, lid string) string { return k.userKey(u, ":lf:"+lid) }

// ListedIn is the set of the lists u is a member of, "<owner>:<list id>",
// in u's slot: fan-out and the delete job find the lists' feeds through it.
func (k Keys) ListedIn(u string) string { return k.userKey(u, ":listedin") }

// Deleting is the set of deleted accounts being purged (purge.go), the
// purges' work list, which the workers' sweep reads; the same script sets
// the accounts' flag in AuthorFlags, which reads check. Gone is an
// account's purge record (its profile, renamed); PurgeLease its purge's
// lease.
func (k Keys) Deleting() string           { return k.prefix + "{hidden}:deleting" }
func (k Keys) Gone(u string) string       { return k.userKey(u, ":gone") }
func (k Keys) PurgeLease(u string) string { return k.userKey(u, ":purgelease") }

// UserLikes and UserComments index u's likes (post ids) and comments
// (comment ids), scored by when (ms): what its purge finds them by and its
// data export lists.
func (k Keys) UserLikes(u string) string    { return k.userKey(u, ":liked") }
func (k Keys) UserComments(u string) string { return k.userKey(u, ":commented") }
