package social

import (
	"slices"
	"strings"
	"time"
)

// Notifications: what other users did to a user or to a user's posts.

// NoteKind is what a notification tells.
type NoteKind string

// The kinds of notification.
const (
	NoteLike    NoteKind = "LIKE"
	NoteComment NoteKind = "COMMENT"
	NoteRepost  NoteKind = "REPOST"
	NoteFollow  NoteKind = "FOLLOW"
	NoteMention NoteKind = "MENTION"
	// NoteReply tells a comment's author of an answer to it.
	NoteReply NoteKind = "REPLY"
	// NoteEdit tells a plain reposter that the post they reposted was
	// edited.
	NoteEdit NoteKind = "EDIT"
	// NoteFollowRequest tells a locked account that a user asks to
	// follow it; it stands while the request is pending.
	NoteFollowRequest NoteKind = "FOLLOW_REQUEST"
)

// Aggregated reports whether notifications of kind k gather several
// actors (within the aggregation window): likes and reposts of one post,
// and follows. A comment and a mention are one notification each.
func (k NoteKind) Aggregated() bool { return k == NoteLike || k == NoteRepost || k == NoteFollow }

// Notification is one notification of a user. Its ID is the number of the
// recipient's activity it was last raised by: it orders the list (most
// recently active first), and a notification that grows takes a new one.
type Notification struct {
	ID          string
	Kind        NoteKind
	PostID      string // the post liked, commented on, reposted, edited or mentioning the recipient
	CommentID   string // the comment, for COMMENT and REPLY (the answer) and for a mention in a comment
	ActorsCount int
	// Actors are the first actors' ids, most recent first, as many as the
	// read asked for.
	Actors    []string
	UpdatedAt time.Time
	Read      bool
}

// DefaultActors is how many actors a notification shows unless asked.
const DefaultActors = 3

// Notifications is a page of a user's notifications.
type Notifications struct {
	Connection[*Notification]
	Unread int
}

// Names: 3 to 30 letters, digits or underscores, the rule of accounts and
// of mentions.
const (
	MinNameLen = 3
	MaxNameLen = 30
)

// IsName reports whether s is a valid user name.
func IsName(s string) bool {
	if len(s) < MinNameLen || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

func nameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}

// MaxMentions bounds the users one post or comment notifies by name.
const MaxMentions = 10

// Mentions returns the names mentioned as @name in text, lower-cased, in
// order of first mention, at most MaxMentions. A mention starts at an @
// that follows no name character (so an e-mail address mentions nobody)
// and runs over name characters; one longer than a name is none.
func Mentions(text string) []string {
	var out []string
	for i := 0; i < len(text) && len(out) < MaxMentions; i++ {
		if text[i] != '@' || (i > 0 && (nameByte(text[i-1]) || text[i-1] == '@')) {
			continue
		}
		j := i + 1
		for j < len(text) && nameByte(text[j]) {
			j++
		}
		name := strings.ToLower(text[i+1 : j])
		if IsName(name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
		i = j - 1
	}
	return out
}
