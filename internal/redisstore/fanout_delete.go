package redisstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The delete job of a post, as the fan-out worker runs it: the post out
// of the timelines, its engagement and its files gone.

// deletePost runs a post's delete job; homes false leaves the entries in
// the home lists of the author's followers to the caller (the purge of
// the author's account takes all of them from each list at once).
func (s *FanoutService) deletePost(ctx context.Context, job map[string]string, homes bool) error {
	post, author, repost := job[jobPost], job[jobAuthor], job[jobRepost]
	// The notifications the post made go with it.
	if err := s.notifyPost(ctx, post, author, repost, job[jobRepostAuthor], splitIDs(job[jobMentions]), true); err != nil {
		return err
	}
	if err := s.unindexDeleted(ctx, post, author, job); err != nil {
		return err
	}
	return s.fanOutDelete(ctx, post, author, repost, job[jobMedia], homes)
}

// fanOutDelete finishes a deletion: everything the post owned, the link
// from its original, and its entries in the home lists of the author's
// followers, and its media files (keys, from the job). Its plain reposts
// go with it (deletePlainReposts); its quotes stay, their repostOf reads
// null.
func (s *FanoutService) fanOutDelete(ctx context.Context, post, author, repost, keys string, homes bool) error {
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
	if !homes {
		return nil
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

// deletePostEngagement removes a post's likes and comments, and their
// entries in their users' indexes (UserLikes, UserComments). DeletePost
// calls it after the post hash is gone, when no new like or comment can
// arrive (their scripts check the post exists in the same step). The
// lists go last, so a run cut short is finished by running it again.
func (s *FanoutService) deletePostEngagement(ctx context.Context, postID string) error {
	list := s.keys.PostComments(postID)
	const batch = 500
	for start := int64(0); ; start += batch {
		ids, err := s.rdb.LRange(ctx, list, start, start+batch-1).Result()
		if err != nil {
			return fmt.Errorf("list comments of post %s: %w", postID, err)
		}
		if len(ids) == 0 {
			break
		}
		authors := make([]*redis.StringCmd, len(ids))
		if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range ids {
				authors[i] = p.HGet(ctx, s.keys.PostComment(postID, id), commentRecord.name("author"))
			}
			return nil
		}); err != nil && !isNil(err) {
			return fmt.Errorf("load comments of post %s: %w", postID, err)
		}
		keys := make([]string, 0, 2*len(ids))
		for _, id := range ids {
			keys = append(keys, s.keys.PostComment(postID, id), s.keys.CommentReplies(postID, id))
		}
		_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range ids {
				if a := authors[i].Val(); a != "" {
					p.ZRem(ctx, s.keys.UserComments(a), id)
				}
			}
			p.Del(ctx, keys...)
			for _, id := range ids {
				p.HDel(ctx, s.keys.CommentPost(id), id)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("delete comments of post %s: %w", postID, err)
		}
	}
	for start := int64(0); ; start += batch {
		likers, err := s.rdb.ZRange(ctx, s.keys.Likers(postID), start, start+batch-1).Result()
		if err != nil {
			return fmt.Errorf("list likers of post %s: %w", postID, err)
		}
		if len(likers) == 0 {
			break
		}
		if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, u := range likers {
				p.ZRem(ctx, s.keys.UserLikes(u), postID)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("unindex likes of post %s: %w", postID, err)
		}
	}
	if err := s.rdb.Unlink(ctx, s.keys.Likers(postID), list).Err(); err != nil {
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
