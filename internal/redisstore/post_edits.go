package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// EditService edits posts and reads their earlier versions (graph.Edits,
// loader.Reader's PostEdits).
//
// An edit is one script in the post's slot (editPostScript): the version
// it replaces goes to the head of PostEdits, the new content, spoiler
// text, sensitive flag, mentions and edited time into the hash. Every
// field an edit writes is a mutable one of postRecord, which the post
// cache never keeps, so the next read of any gateway shows the edit. Then
// an edit job on the fan-out queue tells who must hear of it (fanout_edit.go):
// the users mentioned before or after, the plain reposters, and the live
// subscribers.
type EditService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
}

// Edit job fields (besides jobOp, jobPost, jobAuthor, jobMentions: the
// users mentioned before the edit).
const (
	opEdit    = "edit"
	jobEdited = "edited" // the edit's time (ms)
	jobWas    = "was"    // the content before the edit, when either has tags: the tag indexes move
)

// EditPost edits viewerID's post id and returns it as edited. Another
// user's post is FORBIDDEN, a post the viewer may not see (or deleted)
// NOT_FOUND, a plain repost and invalid input BAD_USER_INPUT; none of
// them changes anything.
func (s *EditService) EditPost(ctx context.Context, viewerID, id string, in social.EditPost) (*social.Post, error) {
	e, err := social.CheckEdit(in)
	if err != nil {
		return nil, err
	}
	if !social.IsID(id) {
		return nil, social.Errorf(social.NotFound, "post %s not found", id)
	}
	v := s.set.postReader(s.rdb, s.keys).newVisibility(viewerID, []string{id})
	if err := v.check(ctx); err != nil {
		return nil, fmt.Errorf("load post %s: %w", id, err)
	}
	if v.access(0) != social.Visible {
		return nil, social.Errorf(social.NotFound, "post %s not found", id)
	}
	p := *v.post(0)
	if err := social.MayEdit(viewerID, &p); err != nil {
		return nil, err
	}
	mentions, err := resolveMentions(ctx, s.rdb, s.keys, viewerID, e.Content)
	if err != nil {
		return nil, err
	}
	at := s.set.now().UTC().Truncate(time.Millisecond)
	old, at, err := s.write(ctx, viewerID, id, e, mentions, at)
	if err != nil {
		return nil, err
	}
	// The job after the write: run before it, it would find the old
	// version. A failure here fails the call, whose retry edits again.
	job := []any{jobOp, opEdit, jobPost, id, jobAuthor, viewerID, jobEdited, at.UnixMilli(),
		jobMentions, strings.Join(unionIDs(old, mentions), ",")}
	if len(social.Tags(p.Content))+len(social.Tags(e.Content)) > 0 {
		job = append(job, jobWas, p.Content)
	}
	if err := s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: fanoutStream(s.keys, s.set.feed.FanoutShards, id), Values: job}).Err(); err != nil {
		return nil, fmt.Errorf("queue the edit of post %s: %w", id, err)
	}
	p.Content, p.SpoilerText, p.Sensitive, p.Mentions, p.EditedAt = e.Content, e.Spoiler, e.Sensitive, mentions, &at
	return &p, nil
}

// write runs editPostScript and returns the mentions before the edit and
// the edited time it wrote (at, or just above the one before).
func (s *EditService) write(ctx context.Context, author, id string, e social.CheckedEdit, mentions []string, at time.Time) ([]string, time.Time, error) {
	spoiler, sensitive := "", ""
	if e.Spoiler != nil {
		spoiler = *e.Spoiler
	}
	if e.Sensitive {
		sensitive = "1"
	}
	res, err := editPostScript.Run(ctx, s.rdb, []string{s.keys.Post(id), s.keys.PostEdits(id)},
		author, msString(at), social.MaxEdits, e.Content, spoiler, sensitive, strings.Join(mentions, ",")).Result()
	if err != nil {
		return nil, at, fmt.Errorf("edit post %s: %w", id, err)
	}
	switch res {
	case "GONE":
		return nil, at, social.Errorf(social.NotFound, "post %s not found", id)
	case "FORBIDDEN":
		return nil, at, social.Errorf(social.Forbidden, "only its author may edit a post")
	case "PLAIN":
		return nil, at, social.Errorf(social.BadUserInput, "a plain repost has no content to edit")
	}
	arr, _ := res.([]any)
	if len(arr) != 3 {
		return nil, at, fmt.Errorf("edit post %s: reply %v", id, res)
	}
	old, _ := arr[1].(string)
	if stamp, _ := arr[2].(string); stamp != "" {
		at = msTime(stamp)
	}
	return splitIDs(old), at, nil
}

// PostEdits returns the earlier versions of each post, newest first
// (none for a post never edited, or missing): one round trip. The
// caller has checked the viewer may see the posts.
func (s *EditService) PostEdits(ctx context.Context, ids []string) ([][]social.PostEdit, error) {
	cmds := make([]*redis.StringSliceCmd, len(ids))
	sent, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			if social.IsID(id) {
				cmds[i] = p.LRange(ctx, s.keys.PostEdits(id), 0, -1)
			}
		}
		return nil
	})
	if err := pipelineErr(sent, err); err != nil {
		return nil, fmt.Errorf("load the edits of %d posts: %w", len(ids), err)
	}
	out := make([][]social.PostEdit, len(ids))
	for i, c := range cmds {
		if c == nil {
			continue
		}
		for _, v := range c.Val() {
			e, ok := decodeEdit(v)
			if ok {
				out[i] = append(out[i], e)
			}
		}
	}
	return out, nil
}

// storedEdit is an entry of PostEdits as editPostScript writes it (cjson).
type storedEdit struct {
	Content   string  `json:"c"`
	Spoiler   *string `json:"s"`
	Sensitive int     `json:"x"`
	Replaced  int64   `json:"t"`
}

func decodeEdit(v string) (social.PostEdit, bool) {
	var st storedEdit
	if err := json.Unmarshal([]byte(v), &st); err != nil {
		return social.PostEdit{}, false
	}
	return social.PostEdit{Content: st.Content, SpoilerText: st.Spoiler, Sensitive: st.Sensitive == 1,
		ReplacedAt: time.UnixMilli(st.Replaced).UTC()}, true
}

// unionIDs is a followed by the ids of b it lacks.
func unionIDs(a, b []string) []string {
	out := slices.Clip(a)
	for _, id := range b {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
