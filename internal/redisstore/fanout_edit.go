package redisstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// editFanout runs an edit job (EditService.EditPost queues it): it tells
// the users an edit concerns, each step idempotent, so a job run twice
// changes nothing more.
//
//   - Tags: the post leaves the indexes of the tags it lost and enters
//     those it gained (PostService.ReindexPost).
//   - Mentions: the users mentioned before the edit (the job's list) and
//     after (the hash's) have their MENTION made to reflect the post as it
//     now is: a user newly mentioned who may see the post is told; one no
//     longer mentioned loses the notification (syncNote reads whether
//     each is still mentioned).
//   - Plain reposters get an EDIT notification, one for each edit,
//     a batch of PostPlainReposts at a time.
//   - Live subscribers get the post again: it is announced on the
//     channels its first delivery used (the author's and each follower's
//     LiveUser, or LivePulled for a pulled author); each subscriber's
//     gateway checks it at delivery, as any announcement.
type editFanout struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
	// fan runs note jobs and walks followers.
	fan *FanoutService
}

func newEditFanout(s *FanoutService) *editFanout {
	return &editFanout{rdb: s.rdb, keys: s.keys, set: s.set, fan: s}
}

// postEdited is what an edit job reads of the post: who to tell, and
// what its tag indexes need.
var postEdited = postRecord.view("author", "mentions", "content", "vis", "created")

// run carries out one edit job.
func (e *editFanout) run(ctx context.Context, job map[string]string) error {
	post, author, stamp := job[jobPost], job[jobAuthor], job[jobEdited]
	if !social.IsID(post) || !social.IsID(author) || stamp == "" {
		return fmt.Errorf("malformed edit job %v", job)
	}
	var hash *redis.SliceCmd
	if _, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		hash = postEdited.queue(ctx, p, e.keys.Post(post))
		return nil
	}); err != nil {
		return fmt.Errorf("load edited post %s: %w", post, err)
	}
	var row postRow
	postEdited.decode(&row, hash.Val())
	if row.post.AuthorID != author {
		return nil // deleted since: its delete job takes its notifications and tags
	}
	row.post.ID = post
	if was, ok := job[jobWas]; ok {
		// Out of the tags it lost, into those it gained (idempotent).
		if err := e.fan.posts.ReindexPost(ctx, &row.post, was); err != nil {
			return err
		}
	}
	to := unionIDs(splitIDs(job[jobMentions]), row.post.Mentions)
	if len(to) > 0 {
		err := e.fan.syncNote(ctx, map[string]string{noteKind: string(social.NoteMention), noteTarget: post, noteActor: author, noteTo: strings.Join(to, ",")})
		if err != nil {
			return err
		}
	}
	if err := e.notifyReposters(ctx, post, author, stamp); err != nil {
		return err
	}
	return e.announce(ctx, post, author)
}

// notifyReposters raises an EDIT notification for each plain reposter.
func (e *editFanout) notifyReposters(ctx context.Context, post, author, stamp string) error {
	key := e.keys.PostPlainReposts(post)
	var cursor uint64
	for {
		kv, next, err := e.rdb.HScan(ctx, key, cursor, "", plainRepostsBatch).Result()
		if err != nil {
			return fmt.Errorf("list plain reposts of post %s: %w", post, err)
		}
		var to []string
		for i := 0; i+1 < len(kv); i += 2 {
			to = append(to, kv[i])
		}
		if len(to) > 0 {
			err := e.fan.syncNote(ctx, map[string]string{noteKind: string(social.NoteEdit), noteTarget: post, noteActor: author,
				noteTo: strings.Join(to, ","), jobEdited: stamp})
			if err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// announce announces the edited post to live subscribers. Best effort,
// as every announcement: a subscriber that misses it sees the edit on
// its next read.
func (e *editFanout) announce(ctx context.Context, post, author string) error {
	entry := homeEntry(post, author)
	celeb, err := e.rdb.HGet(ctx, e.keys.Celebrities(), author).Result()
	if err != nil && !isNil(err) {
		return fmt.Errorf("announce edit of post %s: %w", post, err)
	}
	announce(ctx, e.set.publishCmd, e.rdb, e.keys.LiveUser(author), entry)
	if e.set.feed.Mode == Pull || (e.set.feed.Mode == Hybrid && celeb != "") {
		announce(ctx, e.set.publishCmd, e.rdb, e.keys.LivePulled(), entry)
		return nil
	}
	return e.fan.eachFollowers(ctx, author, true, func(batch []string) error {
		_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, f := range batch {
				announce(ctx, e.set.publishCmd, p, e.keys.LiveUser(f), entry)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("announce edit of post %s: %w", post, err)
		}
		return nil
	})
}
