package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// LiveService names the channels live posts are announced on and checks
// announced posts at delivery (live.Store).
type LiveService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
}

// Live timelines: where posts are announced, and the check a live
// subscriber's gateway makes before sending one.
//
// A post is announced when it lands in a home timeline: by the delivery
// script (pushed followers) and the author-post script (the author's own
// list) on LiveUser of the reader, in the step that inserts it; for pulled
// authors, which land in no list, once on LivePulled (createPost, or the
// worker for the post that made an author pulled). The message is the
// home entry "<post id>:<author id>". Pub/sub keeps nothing: a reader's
// gateway that was not listening catches up from the home timeline itself
// (internal/live).

// LiveChannels are the channels a live subscriber of viewerID's home
// timeline listens to.
func (s *LiveService) LiveChannels(viewerID string) []string {
	return []string{s.keys.LiveUser(viewerID), s.keys.LivePulled()}
}

// UseClassicPubSub makes the store announce with PUBLISH instead of
// SPUBLISH: for the embedded development Redis, which has only classic
// pub/sub (the hub then subscribes with SUBSCRIBE, live.HubConfig.Classic).
// One server only: classic channels are not sharded under Cluster.
func (s *DB) UseClassicPubSub() { s.set.publishCmd = "PUBLISH" }

// announce queues or sends one announcement with cmd (settings.publishCmd).
func announce(ctx context.Context, cmd string, c redis.Cmdable, channel, msg string) {
	if cmd == "PUBLISH" {
		c.Publish(ctx, channel, msg)
		return
	}
	c.SPublish(ctx, channel, msg)
}

// publishCommand is the command the scripts announce with, by cmd
// (settings.publishCmd).
func publishCommand(cmd string) string {
	if cmd == "" {
		return "SPUBLISH"
	}
	return cmd
}

// announcePulled announces a pulled author's post. It is best effort, as
// every announcement: a job retried for it would find the author
// registered and not announce again, and a live subscriber that resumes
// finds the post in its timeline.
func (s *FanoutService) announcePulled(ctx context.Context, post, author string) {
	announce(ctx, s.set.publishCmd, s.rdb, s.keys.LivePulled(), homeEntry(post, author))
}

// LivePosts checks announced posts (messages of LiveChannels) for viewerID
// at delivery time: a post is returned when viewerID's home timeline would
// show it now — its author is the viewer or someone they follow and have
// not muted (the page script's rule, lua/lib/allow.lua), and the read-time
// visibility check passes (deleted, audience, blocks either way), and
// the viewer's keyword filters do not hide it in HOME. The result is
// aligned with messages; nil for a post not to send (and for a message
// that is no home entry). One pipeline (and, as a page, one more for
// reposts' originals' text when a filter applies).
func (s *LiveService) LivePosts(ctx context.Context, viewerID string, messages []string) ([]*social.Post, error) {
	out := make([]*social.Post, len(messages))
	if !social.IsID(viewerID) || len(messages) == 0 {
		return out, nil
	}
	ids := make([]string, 0, len(messages))
	authors := make([]any, 1, len(messages)+1)
	authors[0] = viewerID
	at := make([]int, 0, len(messages)) // index in messages of ids[i]
	for i, m := range messages {
		e, ok := parseEntry(m)
		if !ok || !social.IsID(e.author) {
			continue
		}
		ids = append(ids, strconv.FormatInt(e.id, 10))
		authors = append(authors, e.author)
		at = append(at, i)
	}
	if len(ids) == 0 {
		return out, nil
	}
	r := s.set.postReader(s.rdb, s.keys)
	v := r.newVisibility(viewerID, ids).withAuthors(strs(authors[1:]))
	// The viewer's keyword filters, as the home page applies them.
	filters := newViewerFilters(ctx, viewerID, true)
	var allow *redis.Cmd
	cmds, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		allow = liveAllowScript.EvalSha(ctx, p, homeKeys(s.keys, viewerID), authors...)
		v.queue(ctx, p)
		filters.queue(ctx, p, s.keys)
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return nil, fmt.Errorf("check %d live posts for %s: %w", len(ids), viewerID, err)
	}
	if err := v.settle(ctx); err != nil {
		return nil, err
	}
	flags, err := allow.Int64Slice()
	if err != nil || len(flags) != len(ids) {
		return nil, fmt.Errorf("check live posts for %s: allow reply %v: %w", viewerID, allow.Val(), err)
	}
	posts := v.posts()
	if m := filters.matcher(ctx, s.set.now()); m.Applies(social.FilterHome) {
		if posts, err = r.dropFiltered(ctx, m, social.FilterHome, viewerID, posts, nil); err != nil {
			return nil, err
		}
	}
	for i, p := range posts {
		if p != nil && flags[i] == 1 && p.AuthorID == authors[i+1] {
			out[at[i]] = p
		}
	}
	return out, nil
}
