package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// maxResolvedReports bounds the resolved reports kept: the oldest go,
// hashes and all, when a report past it is resolved (a variable for the
// tests).
var maxResolvedReports = 10_000

// ModerationService keeps reports and suspensions (Keys.Report…, the s
// flag in Keys.AuthorFlags, the profile's susp field). Suspension here is
// only the marks; ending sessions, unindexing and the moderators' rules
// are internal/moderation's.
type ModerationService struct {
	rdb   redis.UniversalClient
	keys  Keys
	set   *settings
	posts postReader
	eng   *EngagementService
}

// NewModerationService returns the moderation store over db; eng reads
// reported comments.
func NewModerationService(db *DB, eng *EngagementService) *ModerationService {
	return &ModerationService{rdb: db.rdb, keys: db.keys, set: db.set,
		posts: db.set.postReader(db.rdb, db.keys), eng: eng}
}

// Target finds what a report names as reporterID may see it: a post the
// reporter may see, a comment of one, or a user who is not suspended;
// NOT_FOUND otherwise.
func (s *ModerationService) Target(ctx context.Context, reporterID string, kind social.ReportKind, id string) (social.ReportTarget, error) {
	t := social.ReportTarget{Kind: kind, ID: id}
	notFound := social.Errorf(social.NotFound, "%s %s not found", kind, id)
	switch kind {
	case social.ReportUser:
		var read userRead
		if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			read = userRead{id: id, cmd: profileRead.queue(ctx, p, s.keys.User(id))}
			return nil
		}); err != nil {
			return t, fmt.Errorf("load user %s: %w", id, err)
		}
		if read.user() == nil {
			return t, notFound
		}
		t.Owner = id
		return t, nil
	case social.ReportComment:
		cs, err := s.eng.Comments(ctx, []string{id})
		if err != nil {
			return t, err
		}
		if cs[0] == nil {
			return t, notFound
		}
		t.PostID, t.Owner = cs[0].PostID, cs[0].AuthorID
		if _, err := s.eng.engageable(ctx, reporterID, t.PostID); err != nil {
			if social.IsCode(err, social.NotFound) {
				return t, notFound
			}
			return t, err
		}
		return t, nil
	}
	posts, err := s.posts.visiblePosts(ctx, reporterID, []string{id}, nil, nil)
	if err != nil {
		return t, err
	}
	if posts[0] == nil {
		return t, notFound
	}
	t.Owner = posts[0].AuthorID
	return t, nil
}

// AddReport files a report of t by reporterID unless that reporter has an
// open report of t already, which it returns instead (created false); a
// reporter with maxOpen open reports gets RATE_LIMITED.
func (s *ModerationService) AddReport(ctx context.Context, reporterID string, t social.ReportTarget, reason string, maxOpen int) (*social.Report, bool, error) {
	r := &social.Report{Reporter: reporterID, Target: t, Reason: reason,
		CreatedAt: s.set.now().Truncate(1e6), Status: social.ReportOpen}
	k := s.keys
	args := append([]any{k.Report(""), reporterID + ":" + string(t.Kind) + ":" + t.ID, reporterID, maxOpen},
		reportRecord.encode(r)...)
	res, err := reportAddScript.Run(ctx, s.rdb, []string{k.ReportSeq(), k.ReportsOpen(), k.ReportDedupe(), k.ReportsOpenBy()}, args...).Result()
	if err != nil {
		return nil, false, fmt.Errorf("file report: %w", err)
	}
	if res == "CAP" {
		return nil, false, social.Errorf(social.RateLimited, "you have %d open reports: wait until moderators act on them", maxOpen)
	}
	out, _ := res.([]any)
	if len(out) != 2 {
		return nil, false, fmt.Errorf("file report: unexpected reply %v", res)
	}
	id, _ := out[0].(string)
	if created, _ := out[1].(int64); created == 1 {
		r.ID = id
		return r, true, nil
	}
	earlier, err := s.Report(ctx, id)
	return earlier, false, err
}

// Report returns one report, or NOT_FOUND.
func (s *ModerationService) Report(ctx context.Context, id string) (*social.Report, error) {
	rs, err := s.reports(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	if rs[0] == nil {
		return nil, social.Errorf(social.NotFound, "report %s not found", id)
	}
	return rs[0], nil
}

// reports reads reports' hashes with one pipeline; missing ones are nil.
func (s *ModerationService) reports(ctx context.Context, ids []string) ([]*social.Report, error) {
	cmds := make([]*redis.SliceCmd, len(ids))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			if social.IsID(id) {
				cmds[i] = hmget(ctx, p, s.keys.Report(id), reportRecord.all)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load %d reports: %w", len(ids), err)
	}
	out := make([]*social.Report, len(ids))
	for i, c := range cmds {
		if c == nil {
			continue
		}
		r := &social.Report{}
		reportRecord.decode(r, c.Val())
		if r.Reporter == "" {
			continue
		}
		r.ID = ids[i]
		out[i] = r
	}
	return out, nil
}

// Reports returns a page of the reports of a status, oldest first, each
// with what it names as a moderator sees it (Report.Post, Comment, User:
// as stored, whatever their audience or their author's suspension; nil
// once deleted). Three round trips: the ids, the hashes, the targets.
func (s *ModerationService) Reports(ctx context.Context, status social.ReportStatus, p social.PageRequest) (social.Connection[*social.Report], error) {
	var out social.Connection[*social.Report]
	if err := social.ValidateFirst(p.First); err != nil {
		return out, err
	}
	lo := "-inf"
	if p.After != "" {
		n, err := parseCursor(p.After)
		if err != nil {
			return out, err
		}
		lo = "(" + strconv.FormatInt(n, 10)
	}
	key := s.keys.ReportsOpen()
	if status == social.ReportResolved {
		key = s.keys.ReportsResolved()
	}
	ids, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: key, Start: lo, Stop: "+inf", ByScore: true, Count: int64(p.First + 1)}).Result()
	if err != nil {
		return out, fmt.Errorf("load reports: %w", err)
	}
	out.HasNext = len(ids) > p.First
	ids = ids[:min(len(ids), p.First)]
	rs, err := s.reports(ctx, ids)
	if err != nil {
		return out, err
	}
	for i, r := range rs {
		if r != nil {
			out.Items = append(out.Items, r)
			out.Cursors = append(out.Cursors, social.EncodeCursor(ids[i]))
		}
	}
	return out, s.fillTargets(ctx, out.Items)
}

// fillTargets reads what each report names, as stored, with one pipeline
// (and the comments' own two).
func (s *ModerationService) fillTargets(ctx context.Context, rs []*social.Report) error {
	var posts, comments []string
	users := map[string]userRead{}
	var refs []commentRef
	for _, r := range rs {
		switch r.Target.Kind {
		case social.ReportPost:
			posts = append(posts, r.Target.ID)
		case social.ReportComment:
			comments = append(comments, r.Target.ID)
			refs = append(refs, commentRef{ID: r.Target.ID, PostID: r.Target.PostID})
		}
	}
	v := s.posts.newVisibility("", posts)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		v.queue(ctx, p)
		for _, r := range rs {
			if r.Target.Kind == social.ReportUser {
				users[r.Target.ID] = userRead{id: r.Target.ID, cmd: profileRead.queue(ctx, p, s.keys.User(r.Target.ID))}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load reported objects: %w", err)
	}
	if err := v.settle(ctx); err != nil {
		return err
	}
	cs, err := s.eng.commentsOf(ctx, refs)
	if err != nil {
		return err
	}
	byPost, byComment := map[string]*social.Post{}, map[string]*social.Comment{}
	for i, id := range posts {
		byPost[id] = v.post(i)
	}
	for i, id := range comments {
		byComment[id] = cs[i]
	}
	for _, r := range rs {
		switch r.Target.Kind {
		case social.ReportPost:
			r.Post = byPost[r.Target.ID]
		case social.ReportComment:
			r.Comment = byComment[r.Target.ID]
		case social.ReportUser:
			r.User = users[r.Target.ID].stored()
		}
	}
	return nil
}

// CloseReport marks report id resolved by moderatorID with action: NOT_FOUND
// when there is no such report, CONFLICT when it was resolved already.
func (s *ModerationService) CloseReport(ctx context.Context, id string, action social.ModerationAction, moderatorID string) error {
	if !social.IsID(id) {
		return social.Errorf(social.NotFound, "report %s not found", id)
	}
	k := s.keys
	res, err := reportResolveScript.Run(ctx, s.rdb,
		[]string{k.Report(id), k.ReportsOpen(), k.ReportsResolved(), k.ReportDedupe(), k.ReportsOpenBy()},
		id, string(action), moderatorID, s.set.now().UnixMilli(), maxResolvedReports, k.Report("")).Text()
	if err != nil {
		return fmt.Errorf("resolve report %s: %w", id, err)
	}
	switch res {
	case "GONE":
		return social.Errorf(social.NotFound, "report %s not found", id)
	case "DONE":
		return social.Errorf(social.Conflict, "report %s is resolved already", id)
	}
	return nil
}

// SetSuspended suspends userID (on) or lifts its suspension: the author
// flag the visibility check reads, and the profile's flag the reads of
// users see. Two single-slot steps, each idempotent, in the order that
// never shows a suspended account's posts: suspending sets the author
// flag first, lifting clears the profile's first. NOT_FOUND for no such user.
func (s *ModerationService) SetSuspended(ctx context.Context, userID string, on bool) error {
	if !social.IsID(userID) {
		return social.Errorf(social.NotFound, "user %s not found", userID)
	}
	set := func() error {
		return setAuthorFlag(ctx, s.rdb, s.keys, userID, flagSuspended, on)
	}
	flag := func() error {
		if on {
			return updateIfExistsScript.Run(ctx, s.rdb, []string{s.keys.User(userID)}, profileRecord.name("susp"), "1").Err()
		}
		return s.rdb.HDel(ctx, s.keys.User(userID), profileRecord.name("susp")).Err()
	}
	steps := []func() error{set, flag}
	if !on {
		steps = []func() error{flag, set}
	}
	exists, err := s.rdb.Exists(ctx, s.keys.User(userID)).Result()
	if err != nil {
		return fmt.Errorf("load user %s: %w", userID, err)
	}
	if exists == 0 {
		return social.Errorf(social.NotFound, "user %s not found", userID)
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("suspension of %s: %w", userID, err)
		}
	}
	return nil
}
