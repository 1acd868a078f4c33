// Package moderation is reports and what moderators do with them: who may
// report what and how often, who the moderators are, and what each
// moderation action changes (a post or comment deleted as its author
// would delete it, an account suspended: its sessions ended, its content
// hidden, kept until the suspension is lifted). The store keeps the
// reports and the marks; this package decides and logs.
package moderation

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/socialgw/gateway/internal/social"
)

// RuleReport is the rate-limit rule of reports, per reporter
// (internal/ratelimit).
const RuleReport = "report"

// DefaultMaxOpen is how many open reports one reporter may have at once.
const DefaultMaxOpen = 20

// Store keeps reports and suspensions (redisstore.ModerationService).
type Store interface {
	Target(ctx context.Context, reporterID string, kind social.ReportKind, id string) (social.ReportTarget, error)
	AddReport(ctx context.Context, reporterID string, t social.ReportTarget, reason string, maxOpen int) (*social.Report, bool, error)
	Report(ctx context.Context, id string) (*social.Report, error)
	Reports(ctx context.Context, status social.ReportStatus, p social.PageRequest) (social.Connection[*social.Report], error)
	CloseReport(ctx context.Context, id string, action social.ModerationAction, moderatorID string) error
	SetSuspended(ctx context.Context, userID string, on bool) error
}

// Users reads accounts, suspended ones too (redisstore.AccountService).
type Users interface {
	User(ctx context.Context, id string) (*social.User, error)
	UserIDByName(ctx context.Context, name string) (string, error)
}

// PostDeleter and CommentDeleter are the deletions authors use
// (redisstore.PostService, EngagementService).
type PostDeleter interface {
	DeletePost(ctx context.Context, viewerID, postID string) error
}

// CommentDeleter deletes a comment as viewerID.
type CommentDeleter interface {
	DeleteComment(ctx context.Context, viewerID, commentID string) error
}

// Sessions ends every session of a user (redisstore.SessionService); its
// access tokens are refused from the next request on, and its open
// subscriptions end at their next revocation check.
type Sessions interface {
	ClearSessions(ctx context.Context, userID string) error
}

// Search is the user search index (redisstore.UserSearchService).
type Search interface {
	IndexUser(ctx context.Context, id, name, displayName string) error
	UnindexUser(ctx context.Context, id, name, displayName string) error
}

// Budget spends rate-limit budgets (ratelimit.Limiter).
type Budget interface {
	Allow(ctx context.Context, rule, subject string) error
}

// Service files reports and carries out moderators' actions. Every field
// but Budget (nil: no rate limit) and Log (nil: slog's default) is
// required.
type Service struct {
	Store    Store
	Users    Users
	Posts    PostDeleter
	Comments CommentDeleter
	Sessions Sessions
	Search   Search
	Budget   Budget
	// Moderators are the user names (any case) allowed to read and
	// resolve reports (MODERATORS).
	Moderators []string
	// MaxOpen bounds each reporter's open reports (0: DefaultMaxOpen).
	MaxOpen int
	Log     *slog.Logger
}

// Report files a report by the viewer. The same target reported again by
// the same viewer while the first report is open answers the first.
// Reporting oneself or one's own post or comment is BAD_USER_INPUT, an
// unknown target (or one hidden from the viewer) NOT_FOUND; each writes
// nothing.
func (s *Service) Report(ctx context.Context, v social.Viewer, in social.NewReport) (*social.Report, error) {
	kind, id, reason, err := social.CheckReport(in)
	if err != nil {
		return nil, err
	}
	t, err := s.Store.Target(ctx, v.UserID, kind, id)
	if err != nil {
		return nil, err
	}
	if t.Owner == v.UserID {
		return nil, social.Errorf(social.BadUserInput, "you cannot report yourself or what you wrote")
	}
	if s.Budget != nil {
		if err := s.Budget.Allow(ctx, RuleReport, v.UserID); err != nil {
			return nil, err
		}
	}
	max := s.MaxOpen
	if max <= 0 {
		max = DefaultMaxOpen
	}
	r, _, err := s.Store.AddReport(ctx, v.UserID, t, reason, max)
	return r, err
}

// Reports is the moderators' queue, oldest first; FORBIDDEN for anyone
// else.
func (s *Service) Reports(ctx context.Context, v social.Viewer, status social.ReportStatus, p social.PageRequest) (social.Connection[*social.Report], error) {
	if _, err := s.moderator(ctx, v); err != nil {
		return social.Connection[*social.Report]{}, err
	}
	return s.Store.Reports(ctx, status, p)
}

// Resolve carries out a moderator's action on a report and closes it:
// DISMISS changes nothing else; REMOVE_CONTENT deletes the reported post
// or comment as its author would (BAD_USER_INPUT for a reported user);
// SUSPEND_USER suspends the reported user or the reported content's
// author. The action runs before the report closes, and each is
// idempotent, so a resolve cut short is finished by resolving again.
func (s *Service) Resolve(ctx context.Context, v social.Viewer, id string, action social.ModerationAction) (*social.Report, error) {
	mod, err := s.moderator(ctx, v)
	if err != nil {
		return nil, err
	}
	r, err := s.Store.Report(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.Status == social.ReportResolved {
		return nil, social.Errorf(social.Conflict, "report %s is resolved already", id)
	}
	switch action {
	case social.Dismiss:
	case social.RemoveContent:
		err = s.remove(ctx, r.Target)
	case social.SuspendUser:
		err = s.Suspend(ctx, r.Target.Owner)
	default:
		err = social.Errorf(social.BadUserInput, "unknown moderation action %q", action)
	}
	if err != nil {
		return nil, err
	}
	if err := s.Store.CloseReport(ctx, id, action, v.UserID); err != nil {
		return nil, err
	}
	s.log().InfoContext(ctx, "moderation", "moderator", mod.Name, "moderator_id", v.UserID, "action", string(action),
		"report", id, "target_kind", string(r.Target.Kind), "target", r.Target.ID, "target_user", r.Target.Owner)
	return s.Store.Report(ctx, id)
}

// remove deletes a reported post or comment as its author's deletion
// would; one already gone is done.
func (s *Service) remove(ctx context.Context, t social.ReportTarget) error {
	var err error
	switch t.Kind {
	case social.ReportPost:
		err = s.Posts.DeletePost(ctx, t.Owner, t.ID)
	case social.ReportComment:
		err = s.Comments.DeleteComment(ctx, t.Owner, t.ID)
	default:
		return social.Errorf(social.BadUserInput, "REMOVE_CONTENT removes a post or a comment; suspend a user with SUSPEND_USER")
	}
	if social.IsCode(err, social.NotFound) {
		return nil
	}
	return err
}

// Suspend suspends userID: its content hidden everywhere (kept), its
// sessions ended, its names out of user search. Idempotent.
func (s *Service) Suspend(ctx context.Context, userID string) error {
	u, err := s.Users.User(ctx, userID)
	if err != nil {
		return err
	}
	if err := s.Store.SetSuspended(ctx, userID, true); err != nil {
		return err
	}
	if err := s.Sessions.ClearSessions(ctx, userID); err != nil {
		return fmt.Errorf("end sessions of %s: %w", userID, err)
	}
	return s.Search.UnindexUser(ctx, userID, u.Name, u.DisplayName)
}

// Unsuspend lifts the suspension of the user named name (the operators'
// command, cmd/gateway unsuspend), logged as a moderation action of
// operator. Idempotent.
func (s *Service) Unsuspend(ctx context.Context, operator, name string) (*social.User, error) {
	id, err := s.Users.UserIDByName(ctx, name)
	if err != nil {
		return nil, err
	}
	u, err := s.Users.User(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.Store.SetSuspended(ctx, id, false); err != nil {
		return nil, err
	}
	if err := s.Search.IndexUser(ctx, id, u.Name, u.DisplayName); err != nil {
		return nil, err
	}
	s.log().InfoContext(ctx, "moderation", "moderator", operator, "action", "UNSUSPEND", "target_kind", "user",
		"target", id, "target_user", id, "target_name", u.Name, "was_suspended", u.Suspended)
	u.Suspended = false
	return u, nil
}

// moderator returns the viewer's account when it is a moderator's:
// UNAUTHENTICATED with no viewer, FORBIDDEN for anyone else.
func (s *Service) moderator(ctx context.Context, v social.Viewer) (*social.User, error) {
	if v.UserID == "" {
		return nil, social.Errorf(social.Unauthenticated, "authentication required")
	}
	forbidden := social.Errorf(social.Forbidden, "only moderators may read and resolve reports")
	if len(s.Moderators) == 0 {
		return nil, forbidden
	}
	u, err := s.Users.User(ctx, v.UserID)
	if social.IsCode(err, social.NotFound) {
		return nil, forbidden
	}
	if err != nil {
		return nil, err
	}
	for _, m := range s.Moderators {
		if strings.EqualFold(strings.TrimSpace(m), u.Name) && !u.Suspended {
			return u, nil
		}
	}
	return nil, forbidden
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
