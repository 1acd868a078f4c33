package redisstore

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// Timeline cursors are the id of the last post shown; the next page is the
// posts with a smaller id. Ids only grow, so posts arriving while a reader
// pages land before the first page, never between pages: no duplicates and
// no skipped older posts.

// noCursor is the position before every post.
const noCursor = math.MaxInt64

// timelineCursor validates a page request and returns the id its cursor
// points at (noCursor for the first page).
func timelineCursor(p social.PageRequest) (int64, error) {
	if err := social.ValidateFirst(p.First); err != nil {
		return 0, err
	}
	if p.After == "" {
		return noCursor, nil
	}
	parts, err := social.DecodeCursor(p.After, 1)
	if err != nil {
		return 0, err
	}
	if !social.IsID(parts[0]) {
		return 0, social.Errorf(social.BadUserInput, "malformed cursor")
	}
	n, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return 0, social.Errorf(social.BadUserInput, "malformed cursor")
	}
	return n, nil
}

// postCursor is the cursor of a post in any timeline.
func postCursor(id string) string { return social.EncodeCursor(id) }

// Reading a page drops what the viewer may not see, so a page reads more
// candidates than it shows, and reads again (from where it stopped) until
// the page is full or the source runs out: pages are full and HasNext is
// exact. The rounds are bounded: a page whose candidates are nearly all
// hidden from the viewer ends early, with HasNext set and the cursor of its
// last post.
const (
	pageRounds   = 6
	maxCandidate = 1000
)

// candidates is how many entries a round reads for a page of first posts
// (one more than first tells HasNext), growing from round to round.
func candidates(first, round int) int {
	n := (first + 1 + first/4 + 2) << round
	return min(n, maxCandidate)
}

// readUserPosts reads one page of userID's own posts as viewerID may see
// them, newest first; f, when set, is what the page brings along
// (page.go), queued with the visibility check of the candidates.
//
// Each round costs two round trips: the page of UserPosts (ZREVRANGE BYSCORE
// below the cursor; on the first round with the viewer's block flags for
// userID, which end the page at once), then the visibility of those posts.
func (s *Store) readUserPosts(ctx context.Context, viewerID, userID string, p social.PageRequest, f *pageFetch) (social.Connection[*social.Post], error) {
	before, err := timelineCursor(p)
	if err != nil || !social.IsID(userID) {
		return social.Connection[*social.Post]{}, err
	}
	var out []*social.Post
	exhausted := false
	for round := 0; round < pageRounds && !exhausted && len(out) <= p.First; round++ {
		n := candidates(p.First, round)
		var ids *redis.StringSliceCmd
		var blocks, blockedBy *redis.BoolCmd
		_, err := s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
			ids = pl.ZRevRangeByScore(ctx, s.keys.UserPosts(userID), &redis.ZRangeBy{
				Max: "(" + strconv.FormatInt(before, 10), Min: "-inf", Count: int64(n),
			})
			if round == 0 && viewerID != "" && viewerID != userID {
				blocks = pl.SIsMember(ctx, s.keys.Blocks(viewerID), userID)
				blockedBy = pl.SIsMember(ctx, s.keys.BlockedBy(viewerID), userID)
			}
			return nil
		})
		if err != nil {
			return social.Connection[*social.Post]{}, fmt.Errorf("load posts of %s: %w", userID, err)
		}
		if blocks != nil && (blocks.Val() || blockedBy.Val()) {
			return social.Connection[*social.Post]{}, nil
		}
		page := ids.Val()
		exhausted = len(page) < n
		if len(page) == 0 {
			break
		}
		// Extras only for the first round's candidates: a page whose
		// candidates are mostly hidden must not pay them for every post it
		// reads; stage 3 fills in what later rounds' posts lack.
		extra := f
		if round > 0 {
			extra = nil
		}
		posts, err := s.visiblePosts(ctx, viewerID, page, repeat(userID, len(page)), extra)
		if err != nil {
			return social.Connection[*social.Post]{}, err
		}
		for _, post := range posts {
			if post != nil {
				out = append(out, post)
			}
		}
		before, _ = strconv.ParseInt(page[len(page)-1], 10, 64)
	}
	return postPage(out, p.First, !exhausted), nil
}

// postPage makes a page of up to first posts. HasNext is true when a
// further post was read, or when the source may hold more.
func postPage(posts []*social.Post, first int, more bool) social.Connection[*social.Post] {
	c := social.Connection[*social.Post]{HasNext: len(posts) > first || (more && len(posts) > 0)}
	posts = posts[:min(len(posts), first)]
	c.Items = posts
	c.Cursors = make([]string, len(posts))
	for i, p := range posts {
		c.Cursors[i] = postCursor(p.ID)
	}
	return c
}
