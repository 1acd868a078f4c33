package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// PostSeqNow is the post sequence's current value (0 before the first
// post). A media file's key records it when the file is stored: the post
// made with the file then has a greater id (social.StoredFile).
func (s *PostService) PostSeqNow(ctx context.Context) (int64, error) {
	n, err := s.rdb.Get(ctx, s.keys.PostSeq()).Int64()
	if err == redis.Nil {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read post sequence: %w", err)
	}
	return n, nil
}

// ownerCandidates bounds the posts of one author looked at for a file:
// the post made with it is the author's first after its Seq, unless
// the author made others while the file was uploaded.
const ownerCandidates = 32

// MediaOwners tells, for each file, whether a post names it: among its
// author's own posts (UserPosts, which a post joins when it is published
// and leaves when it is deleted) with an id above the file's Seq, the
// first ownerCandidates are read. Two round trips whatever the number of
// files. A post whose hash was written but that was never published (its
// request failed before the fan-out job) does not count: no client got
// its id.
func (s *PostService) MediaOwners(ctx context.Context, files []social.StoredFile) ([]social.FileOwner, error) {
	lists := make([]*redis.StringSliceCmd, len(files))
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, f := range files {
			lists[i] = p.ZRangeByScore(ctx, s.keys.UserPosts(f.Author), &redis.ZRangeBy{
				Min: "(" + strconv.FormatInt(f.Seq, 10), Max: "+inf", Count: ownerCandidates})
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return nil, fmt.Errorf("media owners: list posts: %w", err)
	}
	posts := map[string]*redis.SliceCmd{}
	cmds, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, l := range lists {
			for _, id := range l.Val() {
				if posts[id] == nil {
					posts[id] = postFiles.queue(ctx, p, s.keys.Post(id))
				}
			}
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return nil, fmt.Errorf("media owners: read posts: %w", err)
	}
	out := make([]social.FileOwner, len(files))
	for i, f := range files {
		out[i] = social.FileOrphan
		if len(lists[i].Val()) == ownerCandidates {
			out[i] = social.FileUndecided
		}
		for _, id := range lists[i].Val() {
			if namesFile(posts[id].Val(), f) {
				out[i] = social.FileNamed
				break
			}
		}
	}
	return out, nil
}

// postFiles is what the media sweep reads of a post.
var postFiles = postRecord.view("author", "media")

// namesFile reports whether a post's postFiles fields name f.
func namesFile(fields []any, f social.StoredFile) bool {
	var r postRow
	postFiles.decode(&r, fields)
	if r.post.AuthorID != f.Author {
		return false
	}
	for _, m := range r.post.Media {
		if m.Key == f.Key {
			return true
		}
	}
	return false
}
