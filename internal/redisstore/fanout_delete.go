package redisstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The delete job of a post, as the fan-out worker runs it: the post out
// of the timelines, its engagement and its files gone.

// fanOutDelete finishes a deletion: everything the post owned, the link
// from its original, and its entries in the home lists of the author's
// followers, and its media files (keys, from the job). Its plain reposts
// go with it (deletePlainReposts); its quotes stay, their repostOf reads
// null.
func (s *FanoutService) fanOutDelete(ctx context.Context, post, author, repost, keys string) error {
	k := s.keys
	entry := homeEntry(post, author)
	// Before the hash that lists them goes.
	if err := s.deletePlainReposts(ctx, post); err != nil {
		return err
	}
	// The reader's index before the audience that names its sets.
	if err := s.unindexListed(ctx, post, author); err != nil {
		return err
	}
	_, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		p.Del(ctx, k.Post(post), k.PostOnlyTo(post), k.PostNotTo(post), k.PostReposts(post), k.PostPlainReposts(post), k.PostViewers(post), k.PostEdits(post))
		queueUnindex(ctx, p, k, author, post, nil)
		p.LRem(ctx, k.Home(author), 0, entry)
		if repost != "" {
			queueUnlinkRepost(ctx, p, s.keys, post, author, repost)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete post %s: %w", post, err)
	}
	if err := s.deletePostEngagement(ctx, post); err != nil {
		return err
	}
	if err := deletePostCuration(ctx, s.rdb, s.keys, post, author); err != nil {
		return err
	}
	// The author's notifications about the post go: they would count as
	// unread with nothing to show.
	if err := notePostPurge.Run(ctx, s.rdb, []string{k.Notes(author), k.NoteData(author), k.NoteOpen(author)}, k.NoteActors(author, ""), post).Err(); err != nil {
		return fmt.Errorf("take post %s out of the notifications of %s: %w", post, author, err)
	}
	if err := s.deleteFiles(ctx, keys); err != nil {
		return err
	}
	return s.eachFollowers(ctx, author, false, func(batch []string) error {
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, f := range batch {
				p.LRem(ctx, k.Home(f), 0, entry)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("remove post %s from home timelines: %w", post, err)
		}
		return nil
	})
}

// deletePostEngagement removes a post's likes and comments. DeletePost
// calls it after the post hash is gone, when no new like or comment can
// arrive (their scripts check the post exists in the same step). The list
// goes last, so a run cut short is finished by running it again.
func (s *FanoutService) deletePostEngagement(ctx context.Context, postID string) error {
	list := s.keys.PostComments(postID)
	ids, err := s.rdb.LRange(ctx, list, 0, -1).Result()
	if err != nil {
		return fmt.Errorf("list comments of post %s: %w", postID, err)
	}
	const batch = 1000
	for start := 0; start < len(ids); start += batch {
		part := ids[start:min(start+batch, len(ids))]
		keys := make([]string, 0, 2*len(part))
		for _, id := range part {
			keys = append(keys, s.keys.PostComment(postID, id), s.keys.CommentReplies(postID, id))
		}
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, keys...)
			for _, id := range part {
				p.HDel(ctx, s.keys.CommentPost(id), id)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("delete comments of post %s: %w", postID, err)
		}
	}
	if err := s.rdb.Del(ctx, s.keys.Likers(postID), list).Err(); err != nil {
		return fmt.Errorf("delete likes and comments of post %s: %w", postID, err)
	}
	return nil
}

// deleteFiles removes the files a delete job names; idempotent.
func (s *FanoutService) deleteFiles(ctx context.Context, keys string) error {
	if keys == "" || s.set.files == nil {
		return nil
	}
	return s.set.files.Delete(ctx, strings.Fields(keys))
}
