package social

import (
	"strings"
	"time"
	"unicode/utf8"
)

// ReportKind is what a report is about.
type ReportKind string

// The kinds of reports.
const (
	ReportPost    ReportKind = "post"
	ReportComment ReportKind = "comment"
	ReportUser    ReportKind = "user"
)

// ReportStatus says whether a moderator acted on a report.
type ReportStatus string

// The statuses of reports.
const (
	ReportOpen     ReportStatus = "OPEN"
	ReportResolved ReportStatus = "RESOLVED"
)

// ModerationAction is what a moderator does with a report.
type ModerationAction string

// The moderation actions.
const (
	Dismiss       ModerationAction = "DISMISS"
	RemoveContent ModerationAction = "REMOVE_CONTENT"
	SuspendUser   ModerationAction = "SUSPEND_USER"
)

// MaxReasonLen is the longest reason a report may give, in characters.
const MaxReasonLen = 500

// NewReport is a report as a user files it: exactly one of PostID,
// CommentID and UserID, and a reason.
type NewReport struct {
	PostID, CommentID, UserID string
	Reason                    string
}

// ReportTarget is what a report names, once the store found it: its
// kind, its id, the post a comment belongs to, and its owner (the
// author of a post or comment, the user reported).
type ReportTarget struct {
	Kind   ReportKind
	ID     string
	PostID string
	Owner  string
}

// Report is a report as the store keeps it. Post, Comment and User are
// the reported object as a moderator sees it (nil once deleted), filled
// by the reads of the reports' queue.
type Report struct {
	ID         string
	Reporter   string
	Target     ReportTarget
	Reason     string
	CreatedAt  time.Time
	Status     ReportStatus
	Action     ModerationAction
	Moderator  string
	ResolvedAt *time.Time

	Post    *Post
	Comment *Comment
	User    *User
}

// CheckReport applies the rules of a new report: exactly one target, each
// a well-formed id, and a reason of 1 to MaxReasonLen characters. It
// returns the target's kind and id and the trimmed reason.
func CheckReport(in NewReport) (ReportKind, string, string, error) {
	var kind ReportKind
	var id string
	n := 0
	for _, t := range []struct {
		k  ReportKind
		id string
	}{{ReportPost, in.PostID}, {ReportComment, in.CommentID}, {ReportUser, in.UserID}} {
		if t.id != "" {
			kind, id, n = t.k, t.id, n+1
		}
	}
	if n != 1 {
		return "", "", "", Errorf(BadUserInput, "a report names exactly one of postId, commentId and userId")
	}
	if !IsID(id) {
		return "", "", "", Errorf(NotFound, "%s %s not found", kind, id)
	}
	reason := strings.TrimSpace(in.Reason)
	if reason == "" || !utf8.ValidString(reason) {
		return "", "", "", Errorf(BadUserInput, "a report needs a reason")
	}
	if utf8.RuneCountInString(reason) > MaxReasonLen {
		return "", "", "", Errorf(BadUserInput, "a reason is at most %d characters", MaxReasonLen)
	}
	return kind, id, reason, nil
}

// ErrSuspended is the answer to a login of a suspended account.
var ErrSuspended = Errorf(Forbidden, "this account is suspended")
