package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// Hashtag indexes: which posts carry a tag, kept by the fan-out worker.
//
// A post's tags are social.Tags of its content, read whenever the post
// is (Post.tags); the indexes only find the posts of a tag. Where a post
// goes depends on its audience, so that a reader's scan of a tag never
// passes over posts that reader may not see:
//
//   - PUBLIC and NOT_TO posts: TagPosts(tag), in the tag's slot. NOT_TO
//     members are marked, so a reader screens only those
//     (timeline_tag.go), and an anonymous reader skips them unread.
//   - ONLY_TO posts: TagOnlyTo(reader, tag) of each listed reader and of
//     the author, in that reader's slot.
//
// The fan-out job of a new post writes them (indexPost, idempotent: ZADD
// of a fixed member and score), its delete job takes them out
// (removePost), and an edit moves the post between tags (ReindexPost).
// Each index holds its TagCap newest posts.

// TagCap is how many posts one tag index keeps, newest first: a tag page
// reads back that far.
const TagCap = 10000

// tagIndex writes and cleans the tag indexes. Its fields are what it uses
// of the store: the client, the keys and the clock (the hour a post
// counts in is its creation's; the clock says how long that hour counts).
type tagIndex struct {
	rdb    redis.UniversalClient
	keys   Keys
	now    func() time.Time
	trends TrendConfig
}

func newTagIndex(rdb redis.UniversalClient, keys Keys, set *settings) tagIndex {
	return tagIndex{rdb: rdb, keys: keys, now: func() time.Time { return set.now() }, trends: DefaultTrends()}
}

// tagMember is a post's member in a tag index.
func tagMember(post, author string, vis social.Visibility) string {
	if vis == social.NotTo {
		return post + ":" + author + ":n"
	}
	return post + ":" + author
}

// taggedPost is what indexing a post needs of it.
type taggedPost struct {
	id, author string
	vis        social.Visibility
	created    time.Time
	tags       []string
	// audience is an ONLY_TO post's readers (the author is added).
	audience []string
}

// index adds p to the indexes of its tags: one pipeline. A PUBLIC post
// counts for trends in the hour it was made (trends.go), unless its
// author is a locked account then: such a post is indexed as a NOT_TO
// one (screened by readers, counted by nothing), and its author's
// followers find it on the tag's page, the others do not (the read's
// visibility check).
func (t tagIndex) index(ctx context.Context, p taggedPost) error {
	if len(p.tags) == 0 {
		return nil
	}
	vis := p.vis
	if vis == social.Public {
		flags, err := readAuthorFlags(ctx, t.rdb, t.keys, p.author)
		if err != nil {
			return fmt.Errorf("index post %s: %w", p.id, err)
		}
		if flags.locked() {
			vis = social.NotTo
		}
	}
	member := tagMember(p.id, p.author, vis)
	hour := p.created.Unix() / 3600
	ttl := t.trends.counterTTL(p.created, t.now()).Milliseconds()
	if ttl <= 0 {
		ttl = 1 // an hour already out of the window: expires at once
	}
	_, err := pipelined(ctx, t.rdb, func(pl redis.Pipeliner) error {
		for _, tag := range p.tags {
			switch p.vis {
			case social.OnlyTo:
				for _, u := range readersOf(p) {
					tagAddScript.EvalSha(ctx, pl, []string{t.keys.TagOnlyTo(u, tag)}, member, p.id, TagCap, "0", p.author, ttl)
					pl.SAdd(ctx, t.keys.TagOnlyToIndex(u), tag)
				}
			default:
				count := "0"
				if vis == social.Public {
					count = "1"
				}
				tagAddScript.EvalSha(ctx, pl, []string{t.keys.TagPosts(tag), t.keys.TagUsers(tag, hour), t.keys.TagUses(tag, hour)},
					member, p.id, TagCap, count, p.author, ttl)
				if count == "1" {
					pl.ZAdd(ctx, t.keys.TrendTags(), redis.Z{Score: float64(p.created.UnixMilli()), Member: tag})
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index post %s under %d tags: %w", p.id, len(p.tags), err)
	}
	return nil
}

// readersOf is who sees an ONLY_TO post: its audience and its author.
func readersOf(p taggedPost) []string {
	out := append([]string{p.author}, p.audience...)
	return out
}

// remove takes p out of the indexes of its tags: one pipeline; idempotent.
func (t tagIndex) remove(ctx context.Context, p taggedPost) error {
	if len(p.tags) == 0 {
		return nil
	}
	hour := p.created.Unix() / 3600
	public, notTo := tagMember(p.id, p.author, social.Public), tagMember(p.id, p.author, social.NotTo)
	_, err := pipelined(ctx, t.rdb, func(pl redis.Pipeliner) error {
		for _, tag := range p.tags {
			tagRemoveScript.EvalSha(ctx, pl, []string{t.keys.TagPosts(tag), t.keys.TagUses(tag, hour)}, public, notTo)
			for _, u := range readersOf(p) {
				pl.ZRem(ctx, t.keys.TagOnlyTo(u, tag), public)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("take post %s out of %d tags: %w", p.id, len(p.tags), err)
	}
	return nil
}

// onlyToAudience reads an ONLY_TO post's audience for its index writes
// (nil for any other audience).
func (t tagIndex) onlyToAudience(ctx context.Context, post string, vis social.Visibility) ([]string, error) {
	if vis != social.OnlyTo {
		return nil, nil
	}
	only, err := t.rdb.SMembers(ctx, t.keys.PostOnlyTo(post)).Result()
	if err != nil {
		return nil, fmt.Errorf("load audience of post %s: %w", post, err)
	}
	return only, nil
}

// indexNewPost is the fan-out job's step for a new post's tags.
func (s *FanoutService) indexNewPost(ctx context.Context, post string, p *social.Post) error {
	tags := social.Tags(p.Content)
	if len(tags) == 0 {
		return nil
	}
	t := newTagIndex(s.rdb, s.keys, s.set)
	audience, err := t.onlyToAudience(ctx, post, p.Visibility)
	if err != nil {
		return err
	}
	return t.index(ctx, taggedPost{id: post, author: p.AuthorID, vis: p.Visibility, created: p.CreatedAt, tags: tags, audience: audience})
}

// Delete jobs carry the tags of the post (the hash is gone when the job
// runs) and the hour it was made, for its use counters.
const (
	jobTags    = "tags" // space-separated
	jobCreated = "created"
)

// tagJobFields are the fields a delete job of p carries for its tags.
func tagJobFields(p *social.Post) []any {
	tags := social.Tags(p.Content)
	if len(tags) == 0 {
		return nil
	}
	return []any{jobTags, strings.Join(tags, " "), jobCreated, strconv.FormatInt(p.CreatedAt.UnixMilli(), 10)}
}

// unindexDeleted is the delete job's step for the post's tags, run while
// its audience set still exists.
func (s *FanoutService) unindexDeleted(ctx context.Context, post, author string, job map[string]string) error {
	tags := strings.Fields(job[jobTags])
	if len(tags) == 0 {
		return nil
	}
	ms, _ := strconv.ParseInt(job[jobCreated], 10, 64)
	t := newTagIndex(s.rdb, s.keys, s.set)
	// The audience set is read whatever the post's audience was: it is
	// empty for any but ONLY_TO.
	audience, err := t.onlyToAudience(ctx, post, social.OnlyTo)
	if err != nil {
		return err
	}
	return t.remove(ctx, taggedPost{id: post, author: author, created: time.UnixMilli(ms), tags: tags, audience: audience})
}

// ReindexPost moves post p between tag indexes after an edit of its
// content from old to p.Content: out of the tags it lost, into those it
// gained (which count for trends as new uses). Idempotent.
func (s *PostService) ReindexPost(ctx context.Context, p *social.Post, old string) error {
	before, after := social.Tags(old), social.Tags(p.Content)
	var lost, gained []string
	for _, tag := range before {
		if !slices.Contains(after, tag) {
			lost = append(lost, tag)
		}
	}
	for _, tag := range after {
		if !slices.Contains(before, tag) {
			gained = append(gained, tag)
		}
	}
	if len(lost) == 0 && len(gained) == 0 {
		return nil
	}
	t := newTagIndex(s.rdb, s.keys, s.set)
	audience, err := t.onlyToAudience(ctx, p.ID, p.Visibility)
	if err != nil {
		return err
	}
	tp := taggedPost{id: p.ID, author: p.AuthorID, vis: p.Visibility, created: p.CreatedAt, audience: audience}
	tp.tags = lost
	if err := t.remove(ctx, tp); err != nil {
		return err
	}
	tp.tags = gained
	return t.index(ctx, tp)
}

// DropPostTags takes post p (as it was last written: content, author,
// audience, creation) out of every tag index, for code that removes a
// post by other means than its delete job. Idempotent.
func (s *PostService) DropPostTags(ctx context.Context, p *social.Post) error {
	t := newTagIndex(s.rdb, s.keys, s.set)
	audience, err := t.onlyToAudience(ctx, p.ID, social.OnlyTo)
	if err != nil {
		return err
	}
	return t.remove(ctx, taggedPost{id: p.ID, author: p.AuthorID, created: p.CreatedAt, tags: social.Tags(p.Content), audience: audience})
}

// DropUserTags deletes user u's own tag indexes (the ONLY_TO posts u was
// shown under each tag), for the removal of an account; u's own posts
// leave the shared indexes with their deletion. Idempotent.
func (s *PostService) DropUserTags(ctx context.Context, u string) error {
	tags, err := s.rdb.SMembers(ctx, s.keys.TagOnlyToIndex(u)).Result()
	if err != nil {
		return fmt.Errorf("list tag indexes of user %s: %w", u, err)
	}
	keys := make([]string, 0, len(tags)+1)
	for _, tag := range tags {
		keys = append(keys, s.keys.TagOnlyTo(u, tag))
	}
	// The index goes last, so a run cut short finds the keys again.
	for start := 0; start < len(keys); start += 500 {
		if err := s.rdb.Del(ctx, keys[start:min(start+500, len(keys))]...).Err(); err != nil {
			return fmt.Errorf("delete tag indexes of user %s: %w", u, err)
		}
	}
	if err := s.rdb.Del(ctx, s.keys.TagOnlyToIndex(u)).Err(); err != nil {
		return fmt.Errorf("delete tag indexes of user %s: %w", u, err)
	}
	return nil
}

// notifyAndIndex is the fan-out job's step that tells the users a new
// post names (notifyPost) and puts it in its tags' indexes.
func (s *FanoutService) notifyAndIndex(ctx context.Context, post, author, repost string, p *social.Post) error {
	if err := s.notifyPost(ctx, post, author, repost, p.RepostOfAuthorID, p.Mentions, false); err != nil {
		return err
	}
	return s.indexNewPost(ctx, post, p)
}
