package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// The reads an export's worker pages through (export.Source): each a
// bounded batch, so an account of any size is read in constant memory.

// exportPart is where a part is kept: a zset scored by time (ms) or a
// set.
func (s *ExportService) exportPart(userID string, part social.ExportPart) (key string, zset bool, err error) {
	k := s.keys
	switch part {
	case social.PartPosts:
		return k.UserPosts(userID), true, nil
	case social.PartLikes:
		return k.UserLikes(userID), true, nil
	case social.PartComments:
		return k.UserComments(userID), true, nil
	case social.PartFollowing:
		return k.Following(userID), true, nil
	case social.PartFollowers:
		return k.Followers(userID), true, nil
	case social.PartBookmarks:
		return k.Bookmarks(userID), true, nil
	case social.PartBlocks:
		return k.Blocks(userID), false, nil
	case social.PartMutes:
		return k.Mutes(userID), false, nil
	}
	return "", false, fmt.Errorf("no export part %q", part)
}

// ExportEntries reads up to about n entries of a part of userID's data
// from cursor ("" to start), newest first where the part keeps times, and
// the cursor of the next batch ("" after the last).
func (s *ExportService) ExportEntries(ctx context.Context, userID string, part social.ExportPart, cursor string, n int) ([]social.ExportEntry, string, error) {
	key, zset, err := s.exportPart(userID, part)
	if err != nil {
		return nil, "", err
	}
	at, _ := strconv.ParseInt(cursor, 10, 64)
	if !zset {
		ids, next, err := s.rdb.SScan(ctx, key, uint64(at), "", int64(n)).Result()
		if err != nil {
			return nil, "", fmt.Errorf("read %s of %s: %w", part, userID, err)
		}
		out := make([]social.ExportEntry, len(ids))
		for i, id := range ids {
			out[i].ID = id
		}
		if next == 0 {
			return out, "", nil
		}
		return out, strconv.FormatUint(next, 10), nil
	}
	zs, err := s.rdb.ZRevRangeWithScores(ctx, key, at, at+int64(n)-1).Result()
	if err != nil {
		return nil, "", fmt.Errorf("read %s of %s: %w", part, userID, err)
	}
	out := make([]social.ExportEntry, len(zs))
	for i, z := range zs {
		out[i] = social.ExportEntry{ID: fmt.Sprint(z.Member), At: msTime(strconv.FormatInt(int64(z.Score), 10))}
	}
	if len(zs) < n {
		return out, "", nil
	}
	return out, strconv.FormatInt(at+int64(n), 10), nil
}

// ExportProfile is userID's profile: NOT_FOUND for an account that is
// gone.
func (s *ExportService) ExportProfile(ctx context.Context, userID string) (*social.User, error) {
	return s.accounts.User(ctx, userID)
}

// ExportUsers are users' profiles (nil for one that is gone).
func (s *ExportService) ExportUsers(ctx context.Context, ids []string) ([]*social.User, error) {
	return s.accounts.Users(ctx, ids)
}

// ExportPosts are userID's posts of ids as their author sees them (nil
// for one deleted since).
func (s *ExportService) ExportPosts(ctx context.Context, userID string, ids []string) ([]*social.Post, error) {
	return s.posts.VisiblePosts(ctx, userID, ids)
}

// ExportComments are comments (nil for one deleted since).
func (s *ExportService) ExportComments(ctx context.Context, ids []string) ([]*social.Comment, error) {
	return s.eng.Comments(ctx, ids)
}

// ExportLikes keeps, of entries of userID's likes, those that stand: the
// post still exists and userID is among its likers (one pipeline).
func (s *ExportService) ExportLikes(ctx context.Context, userID string, entries []social.ExportEntry) ([]social.ExportEntry, error) {
	cmds := make([]*redis.FloatCmd, len(entries))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, e := range entries {
			cmds[i] = p.ZScore(ctx, s.keys.Likers(e.ID), userID)
		}
		return nil
	})
	if err != nil && !isNil(err) {
		return nil, fmt.Errorf("check the likes of %s: %w", userID, err)
	}
	out := entries[:0]
	for i, e := range entries {
		if cmds[i].Err() == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// ExportLists are userID's lists (at most social.MaxLists) with their
// members (at most social.MaxListMembers each), in one pipeline.
func (s *ExportService) ExportLists(ctx context.Context, userID string) ([]social.ExportList, error) {
	lists, err := s.cur.Lists(ctx, userID)
	if err != nil {
		return nil, err
	}
	cmds := make([]*redis.ZSliceCmd, len(lists))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, l := range lists {
			cmds[i] = p.ZRangeWithScores(ctx, s.keys.ListMembers(userID, l.ID), 0, -1)
		}
		return nil
	})
	if err != nil && !isNil(err) {
		return nil, fmt.Errorf("read the lists' members of %s: %w", userID, err)
	}
	out := make([]social.ExportList, len(lists))
	for i, l := range lists {
		out[i].List = *l
		for _, z := range cmds[i].Val() {
			out[i].Members = append(out[i].Members, social.ExportEntry{ID: fmt.Sprint(z.Member), At: msTime(strconv.FormatInt(int64(z.Score), 10))})
		}
	}
	return out, nil
}

// ExportNotifications reads a page of n of userID's notifications after
// the cursor ("" to start), most recently active first, and the next
// page's cursor ("" after the last).
func (s *ExportService) ExportNotifications(ctx context.Context, userID, after string, n int) ([]*social.Notification, string, error) {
	page, err := s.notes.Notifications(ctx, userID, social.PageRequest{First: n, After: after}, social.DefaultActors)
	if err != nil {
		return nil, "", err
	}
	if !page.HasNext || len(page.Cursors) == 0 {
		return page.Items, "", nil
	}
	return page.Items, page.Cursors[len(page.Cursors)-1], nil
}
