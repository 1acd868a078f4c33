package redisstore

import (
	"strconv"
	"strings"
	"time"

	"github.com/socialgw/gateway/internal/social"
)

// The store's records (record.go), each the table of one hash: its
// fields in the order an HMGET of all reads them. docs/data-model.md
// lists the same fields.

// postRow is a post hash (Keys.Post) as the store reads and writes it.
type postRow struct {
	post social.Post
	// counts are the sizes of Likers, PostComments and PostReposts, which
	// the scripts that change those set (lua/lib/counts.lua);
	// countsMissing has the bit of each counter missing (a post written
	// before the hash held them: post_counters.lua sets them on its first
	// read, the writers on their first change).
	counts        social.PostCounts
	countsMissing countBit
	// packed are the newest comments (lua/lib/packed.lua), hasPacked
	// false when cm is missing.
	packed    string
	hasPacked bool
	// viewers: PostViewers is kept for the post (pv). post.lua writes it
	// with every new post; post_migrate.lua builds PostViewers for an
	// older one and sets it.
	viewers bool
}

// postRecord is the post hash. Its fixed fields are written once, by
// post.lua, so the post cache keeps them (postcache.go); the counters,
// cm and pv change with the post's likes, comments and reposts; spoiler,
// sensitive and edited with an edit, and content and mentions, versioned
// by edited, which the cache keeps with the edited time they belong to.
var postRecord = newRecord("post",
	field[postRow]{"author", fixed, text(func(r *postRow) *string { return &r.post.AuthorID })},
	// content and mentions change with an edit, which writes edited anew
	// (post_edits.go).
	field[postRow]{"content", versioned, text(func(r *postRow) *string { return &r.post.Content })},
	field[postRow]{"created", fixed, millis(func(r *postRow) *time.Time { return &r.post.CreatedAt })},
	field[postRow]{"vis", fixed, codec[postRow]{
		get: func(r *postRow) (string, bool) { return string(r.post.Visibility), true },
		set: func(r *postRow, v string, _ bool) { r.post.Visibility = social.Visibility(v) }}},
	field[postRow]{"repost", fixed, optText(func(r *postRow) *string { return &r.post.RepostOfID })},
	field[postRow]{"rauthor", fixed, optText(func(r *postRow) *string { return &r.post.RepostOfAuthorID })},
	field[postRow]{"src", fixed, optText(func(r *postRow) *string { return &r.post.Source })},
	field[postRow]{"lat", fixed, location(func(l *social.Location) *float64 { return &l.Latitude }, true)},
	field[postRow]{"lng", fixed, location(func(l *social.Location) *float64 { return &l.Longitude }, false)},
	field[postRow]{"place", fixed, codec[postRow]{
		get: func(r *postRow) (string, bool) {
			if l := r.post.Location; l != nil {
				return l.Name, l.Name != ""
			}
			return "", false
		},
		set: func(r *postRow, v string, _ bool) {
			if r.post.Location != nil {
				r.post.Location.Name = v
			}
		}}},
	field[postRow]{"mentions", versioned, ids(func(r *postRow) *[]string { return &r.post.Mentions }, false)},
	field[postRow]{"media", fixed, codec[postRow]{
		get: func(r *postRow) (string, bool) { return encodeMedia(r.post.Media), len(r.post.Media) > 0 },
		set: func(r *postRow, v string, _ bool) {
			if v != "" {
				r.post.Media = decodeMedia(v)
			}
		}}},
	field[postRow]{"nlikes", mutable, counter(func(c *social.PostCounts) *int { return &c.Likes }, countLikes)},
	field[postRow]{"ncomments", mutable, counter(func(c *social.PostCounts) *int { return &c.Comments }, countComments)},
	field[postRow]{"nreposts", mutable, counter(func(c *social.PostCounts) *int { return &c.Reposts }, countReposts)},
	field[postRow]{"cm", mutable, codec[postRow]{
		get: func(*postRow) (string, bool) { return "", false },
		set: func(r *postRow, v string, ok bool) { r.packed, r.hasPacked = v, ok }}},
	field[postRow]{"pv", mutable, codec[postRow]{
		get: func(r *postRow) (string, bool) { return "1", r.viewers },
		set: func(r *postRow, v string, _ bool) { r.viewers = v != "" }}},
	field[postRow]{"spoiler", mutable, optPtr(func(r *postRow) **string { return &r.post.SpoilerText })},
	field[postRow]{"sensitive", mutable, flag(func(r *postRow) *bool { return &r.post.Sensitive })},
	field[postRow]{"edited", mutable, optMillis(func(r *postRow) **time.Time { return &r.post.EditedAt })},
	field[postRow]{"pinned", mutable, flag(func(r *postRow) *bool { return &r.post.Pinned })},
)

// userRow is a profile hash (Keys.User) as the store reads and writes it.
type userRow struct {
	user social.User
	pw   string // the password's hash
}

// profileRecord is the profile hash. The profile cache may keep every
// field it reads, mutable ones too, for ProfileCache.MaxAge at most:
// Redis announces each write of a profile and the cache drops it
// (profilecache.go). pw is read only by Credentials (profileRead leaves
// it out). dname, avatar and header are written by ProfileService.
var profileRecord = newRecord("profile",
	field[userRow]{"name", fixed, text(func(r *userRow) *string { return &r.user.Name })},
	field[userRow]{"email", mutable, text(func(r *userRow) *string { return &r.user.Email })},
	field[userRow]{"bio", mutable, text(func(r *userRow) *string { return &r.user.Bio })},
	field[userRow]{"created", fixed, millis(func(r *userRow) *time.Time { return &r.user.CreatedAt })},
	field[userRow]{"pw", mutable, text(func(r *userRow) *string { return &r.pw })},
	field[userRow]{"dname", mutable, optText(func(r *userRow) *string { return &r.user.DisplayName })},
	field[userRow]{"avatar", mutable, profileImage(func(r *userRow) **social.ProfileImage { return &r.user.Avatar })},
	field[userRow]{"header", mutable, profileImage(func(r *userRow) **social.ProfileImage { return &r.user.Header })},
	field[userRow]{"ev", mutable, flag(func(r *userRow) *bool { return &r.user.EmailVerified })},
	// susp is set while a moderator's suspension holds (moderation.go).
	field[userRow]{"susp", mutable, flag(func(r *userRow) *bool { return &r.user.Suspended })},
	field[userRow]{"locked", mutable, flag(func(r *userRow) *bool { return &r.user.Locked })},
)

// profileRead is what a page reads of a profile: all but the password.
var profileRead = profileRecord.view("name", "email", "bio", "created", "dname", "avatar", "header", "ev", "susp", "locked")

// commentRow is a comment hash (Keys.PostComment) as the store reads and
// writes it.
type commentRow struct {
	comment  social.Comment
	mentions []string // the users it mentions, told by notifications
	// replyTo is the author of the comment it answers (reply), told of
	// the answer by a notification.
	replyTo string
	// deletedBy is a deleted comment's tombstone: who deleted it, which
	// lets a retried delete recognise its own earlier run.
	deletedBy string
}

// commentRecord is the comment hash; a deleted comment's is replaced by
// its tombstone (deleted alone) for deletedCommentTTL.
var commentRecord = newRecord("comment",
	field[commentRow]{"author", fixed, text(func(r *commentRow) *string { return &r.comment.AuthorID })},
	field[commentRow]{"content", fixed, text(func(r *commentRow) *string { return &r.comment.Content })},
	field[commentRow]{"created", fixed, millis(func(r *commentRow) *time.Time { return &r.comment.CreatedAt })},
	field[commentRow]{"mentions", fixed, ids(func(r *commentRow) *[]string { return &r.mentions }, true)},
	field[commentRow]{"reply", fixed, optText(func(r *commentRow) *string { return &r.comment.InReplyToID })},
	field[commentRow]{"rto", fixed, optText(func(r *commentRow) *string { return &r.replyTo })},
	field[commentRow]{"deleted", mutable, optText(func(r *commentRow) *string { return &r.deletedBy })},
)

// noteRow is a notification as NoteData keeps it (Keys.NoteData): one
// value per notification, its fields in noteRecord's order joined by '|'
// (packed: one hash field a notification costs about a third of the
// memory of a hash of its own, and a seventh of five fields of NoteData,
// docs/data-model.md).
type noteRow struct {
	note  social.Notification // Kind, PostID, CommentID, UpdatedAt
	group string              // the group it aggregates (notes.go)
	// lo, hi and hwm are an aggregated notification's window of its
	// source (notes_agg.go); empty for one that keeps its actors.
	lo, hi, hwm string
}

// noteRecord is the notification. Its kind, post, comment and group are
// written when it opens; updated rises with it, and an aggregated one's
// window moves (note_agg.lua). A notification that keeps its actors
// (note.lua) is written without the window's fields.
var noteRecord = newPackedRecord("note", "|",
	field[noteRow]{"kind", fixed, codec[noteRow]{
		get: func(r *noteRow) (string, bool) { return string(r.note.Kind), true },
		set: func(r *noteRow, v string, _ bool) { r.note.Kind = social.NoteKind(v) }}},
	field[noteRow]{"post", fixed, text(func(r *noteRow) *string { return &r.note.PostID })},
	field[noteRow]{"comment", fixed, text(func(r *noteRow) *string { return &r.note.CommentID })},
	field[noteRow]{"updated", mutable, millis(func(r *noteRow) *time.Time { return &r.note.UpdatedAt })},
	field[noteRow]{"group", fixed, text(func(r *noteRow) *string { return &r.group })},
	field[noteRow]{"lo", mutable, optText(func(r *noteRow) *string { return &r.lo })},
	field[noteRow]{"hi", mutable, optText(func(r *noteRow) *string { return &r.hi })},
	field[noteRow]{"hwm", mutable, optText(func(r *noteRow) *string { return &r.hwm })},
)

// reportRecord is a report's hash (Keys.Report): what report_add.lua
// writes, and the moderator's action, which report_resolve.lua adds.
var reportRecord = newRecord("report",
	field[social.Report]{"reporter", fixed, text(func(r *social.Report) *string { return &r.Reporter })},
	field[social.Report]{"kind", fixed, codec[social.Report]{
		get: func(r *social.Report) (string, bool) { return string(r.Target.Kind), true },
		set: func(r *social.Report, v string, _ bool) { r.Target.Kind = social.ReportKind(v) }}},
	field[social.Report]{"target", fixed, text(func(r *social.Report) *string { return &r.Target.ID })},
	field[social.Report]{"post", fixed, optText(func(r *social.Report) *string { return &r.Target.PostID })},
	field[social.Report]{"owner", fixed, text(func(r *social.Report) *string { return &r.Target.Owner })},
	field[social.Report]{"reason", fixed, text(func(r *social.Report) *string { return &r.Reason })},
	field[social.Report]{"created", fixed, millis(func(r *social.Report) *time.Time { return &r.CreatedAt })},
	field[social.Report]{"status", mutable, codec[social.Report]{
		get: func(r *social.Report) (string, bool) { return string(r.Status), true },
		set: func(r *social.Report, v string, _ bool) { r.Status = social.ReportStatus(v) }}},
	field[social.Report]{"action", mutable, codec[social.Report]{
		get: func(r *social.Report) (string, bool) { return string(r.Action), r.Action != "" },
		set: func(r *social.Report, v string, _ bool) { r.Action = social.ModerationAction(v) }}},
	field[social.Report]{"mod", mutable, optText(func(r *social.Report) *string { return &r.Moderator })},
	field[social.Report]{"resolved", mutable, optMillis(func(r *social.Report) **time.Time { return &r.ResolvedAt })},
)

// filterRow is a keyword filter as Filters keeps it (Keys.Filters): one
// value per filter, its fields in filterRecord's order joined by the unit
// separator (U+001F), which a phrase cannot hold (social.CheckFilter). A
// filter never changes once written.
type filterRow struct{ f social.Filter }

var filterRecord = newPackedRecord("filter", "\x1f",
	field[filterRow]{"expires", fixed, optMillis(func(r *filterRow) **time.Time { return &r.f.ExpiresAt })},
	field[filterRow]{"whole", fixed, flag(func(r *filterRow) *bool { return &r.f.WholeWord })},
	field[filterRow]{"ctx", fixed, codec[filterRow]{
		get: func(r *filterRow) (string, bool) { return strconv.Itoa(int(r.f.Context)), true },
		set: func(r *filterRow, v string, _ bool) { n, _ := strconv.Atoi(v); r.f.Context = social.FilterContext(n) }}},
	field[filterRow]{"phrase", fixed, text(func(r *filterRow) *string { return &r.f.Phrase })},
)

// The names other code gives the post hash's fields.
var (
	postAuthorField  = postRecord.name("author")
	postViewersField = postRecord.name("pv")
)

// allRecords are the store's records, for the scripts (luaPrelude) and
// the tests.
func allRecords() []recordInfo {
	return []recordInfo{postRecord.info(), profileRecord.info(), commentRecord.info(), noteRecord.info(), exportRecord.info(), reportRecord.info(), filterRecord.info()}
}

// exportRecord is a user's latest data export (Keys.Export): written
// whole when it is requested (export_request.lua), its state, size and
// end set once when its job ends (export_settle.lua).
var exportRecord = newRecord("export",
	field[social.DataExport]{"id", fixed, text(func(r *social.DataExport) *string { return &r.ID })},
	field[social.DataExport]{"created", fixed, millis(func(r *social.DataExport) *time.Time { return &r.CreatedAt })},
	field[social.DataExport]{"st", mutable, codec[social.DataExport]{
		get: func(r *social.DataExport) (string, bool) { return string(r.Status), true },
		set: func(r *social.DataExport, v string, _ bool) { r.Status = social.ExportStatus(v) }}},
	field[social.DataExport]{"bytes", mutable, codec[social.DataExport]{
		get: func(r *social.DataExport) (string, bool) { return strconv.FormatInt(r.Bytes, 10), r.Bytes > 0 },
		set: func(r *social.DataExport, v string, _ bool) { r.Bytes, _ = strconv.ParseInt(v, 10, 64) }}},
	field[social.DataExport]{"ends", mutable, codec[social.DataExport]{
		get: func(r *social.DataExport) (string, bool) { return msString(r.Until), !r.Until.IsZero() },
		set: func(r *social.DataExport, v string, ok bool) {
			r.Until = time.Time{}
			if ok && v != "" {
				r.Until = msTime(v)
			}
		}}},
)

// The codecs of the records' fields.

// text is a string field, written even when empty.
func text[T any](at func(*T) *string) codec[T] {
	return codec[T]{
		get: func(r *T) (string, bool) { return *at(r), true },
		set: func(r *T, v string, _ bool) { *at(r) = v },
	}
}

// optText is a string field written only when not empty.
func optText[T any](at func(*T) *string) codec[T] {
	return codec[T]{
		get: func(r *T) (string, bool) { return *at(r), *at(r) != "" },
		set: func(r *T, v string, _ bool) { *at(r) = v },
	}
}

// optPtr is an optional string, written when not nil.
func optPtr[T any](at func(*T) **string) codec[T] {
	return codec[T]{
		get: func(r *T) (string, bool) {
			if p := *at(r); p != nil {
				return *p, true
			}
			return "", false
		},
		set: func(r *T, v string, _ bool) {
			*at(r) = nil
			if v != "" {
				*at(r) = &v
			}
		},
	}
}

// flag is a boolean, stored as "1" when true and written only then.
func flag[T any](at func(*T) *bool) codec[T] {
	return codec[T]{
		get: func(r *T) (string, bool) { return "1", *at(r) },
		set: func(r *T, v string, _ bool) { *at(r) = v == "1" },
	}
}

// optMillis is an optional time, stored as Unix milliseconds when not
// nil.
func optMillis[T any](at func(*T) **time.Time) codec[T] {
	return codec[T]{
		get: func(r *T) (string, bool) {
			if t := *at(r); t != nil {
				return msString(*t), true
			}
			return "", false
		},
		set: func(r *T, v string, _ bool) {
			*at(r) = nil
			if v != "" {
				t := msTime(v)
				*at(r) = &t
			}
		},
	}
}

// millis is a time, stored as Unix milliseconds.
func millis[T any](at func(*T) *time.Time) codec[T] {
	return codec[T]{
		get: func(r *T) (string, bool) { return msString(*at(r)), true },
		set: func(r *T, v string, _ bool) { *at(r) = msTime(v) },
	}
}

// ids is a list of ids, comma-separated; always says whether an empty
// list is written ("").
func ids[T any](at func(*T) *[]string, always bool) codec[T] {
	return codec[T]{
		get: func(r *T) (string, bool) { return strings.Join(*at(r), ","), always || len(*at(r)) > 0 },
		set: func(r *T, v string, _ bool) { *at(r) = splitIDs(v) },
	}
}

// location is a coordinate of a post's location: the post has a location
// when its lat is stored (opens; lat comes before lng and place in the
// table).
func location(at func(*social.Location) *float64, opens bool) codec[postRow] {
	return codec[postRow]{
		get: func(r *postRow) (string, bool) {
			if r.post.Location == nil {
				return "", false
			}
			return strconv.FormatFloat(*at(r.post.Location), 'g', -1, 64), true
		},
		set: func(r *postRow, v string, _ bool) {
			if v == "" || (r.post.Location == nil && !opens) {
				return
			}
			if r.post.Location == nil {
				r.post.Location = &social.Location{}
			}
			*at(r.post.Location), _ = strconv.ParseFloat(v, 64)
		},
	}
}

// countBit names one of a post's counters in postRow.countsMissing.
type countBit uint8

const (
	countLikes countBit = 1 << iota
	countComments
	countReposts
)

// counter is one of a post's counters; a missing one sets its bit in the
// row's countsMissing.
func counter(at func(*social.PostCounts) *int, bit countBit) codec[postRow] {
	return codec[postRow]{
		get: func(r *postRow) (string, bool) { return strconv.Itoa(*at(&r.counts)), true },
		set: func(r *postRow, v string, _ bool) {
			n, err := strconv.Atoi(v)
			if err != nil {
				r.countsMissing |= bit
			}
			*at(&r.counts) = n
		},
	}
}
