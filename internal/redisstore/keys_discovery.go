package redisstore

import "strconv"

// The keys of discovery: hashtags, trends and user search (Keys, keys.go).

// Hashtags (tags.go, timeline_tag.go), each tag's shared keys in its own
// {t<tag>} slot; a tag holds only letters, digits and _ (social.Tags).

// TagPosts is the zset of the posts carrying tag whose audience is not a
// list of readers: PUBLIC and NOT_TO posts, member "<post id>:<author
// id>" (NOT_TO ones "<post id>:<author id>:n", so a reader screens only
// those), scored by post id; trimmed to the TagCap newest.
func (k Keys) TagPosts(tag string) string { return k.tagKey(tag, ":posts") }

// TagOnlyTo is u's zset of the ONLY_TO posts carrying tag that u may see
// (u is listed, or wrote it), members and scores as TagPosts's, trimmed
// alike. In u's slot: u's tag page reads it with u's keys, and no reader
// scans another reader's restricted posts.
func (k Keys) TagOnlyTo(u, tag string) string { return k.userKey(u, ":tagonly:"+tag) }

// TagOnlyToIndex is the set of the tags u has a TagOnlyTo of, so that the
// cleanup of u (DropUserTags) finds them.
func (k Keys) TagOnlyToIndex(u string) string { return k.userKey(u, ":tagonly") }

// TagUsers is the HyperLogLog of the users who posted tag publicly in one
// hour (hour: Unix time / 3600), expiring when the hour leaves the trend
// window (trends.go).
func (k Keys) TagUsers(tag string, hour int64) string {
	return k.tagKey(tag, ":h:"+strconv.FormatInt(hour, 10)+":users")
}

// TagUses counts the public posts carrying tag made in one hour (a
// string), expiring with TagUsers.
func (k Keys) TagUses(tag string, hour int64) string {
	return k.tagKey(tag, ":h:"+strconv.FormatInt(hour, 10)+":uses")
}

func (k Keys) tagKey(tag, suffix string) string { return k.prefix + "t:{t" + tag + "}" + suffix }

// TrendTags is the zset of the tags used in public posts within the trend
// window, scored by their last use (ms): what a refresh of the ranking
// counts. Entries older than the window go with each refresh; capped at
// TrendConfig.MaxTags.
func (k Keys) TrendTags() string { return k.prefix + "{trend}:tags" }

// TrendRanking is the cached ranking trendingTags answers from: a string,
// JSON [[tag, uses, accounts], …], most accounts first, written by the
// workers' refresh, with a TTL so that a ranking no worker refreshes
// goes.
func (k Keys) TrendRanking() string { return k.prefix + "{trend}:ranking" }

// TrendLock is held (SET NX PX) by the worker refreshing the ranking, so
// that several workers do not all count.
func (k Keys) TrendLock() string { return k.prefix + "{trend}:lock" }

// User search (search.go).

// UserSearch is the zset (all scores 0) that finds users by a prefix of
// their name or display name: member "<search key>\x00<user id>"
// (social.SearchKey), one per name and one per display name, read with
// ZRANGE BYLEX.
func (k Keys) UserSearch() string { return k.prefix + "{acct}:search" }
