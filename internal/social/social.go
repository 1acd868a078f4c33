// Package social holds the domain of the gateway: users, posts, comments,
// the viewer, page requests, and the error type every layer speaks.
//
// It imports nothing else of the module; adapters (internal/redisstore),
// auth and the GraphQL layer all depend on it, never the other way round.
package social

import (
	"context"
	"time"
)

// User is an account as the rest of the system sees it. Email is always
// loaded; the GraphQL layer shows it to its owner only.
type User struct {
	ID        string
	Name      string
	Email     string
	Bio       string
	CreatedAt time.Time
	// DisplayName is shown instead of the name where set (profile.go).
	DisplayName string
	// Avatar and Header are the profile's pictures; nil: none.
	Avatar, Header *ProfileImage

	// EmailVerified says whether Email was confirmed (verifyEmail).
	EmailVerified bool
	// Suspended: a moderator suspended the account (moderation.go). The
	// store's reads for display treat it as missing.
	Suspended bool
	// Locked: the account approves each follower (follow requests), and
	// its posts are seen by its followers only (PostAccess).
	Locked bool
}

// Visibility says who may see a post.
type Visibility string

// The audiences a post can have.
const (
	Public Visibility = "PUBLIC"
	OnlyTo Visibility = "ONLY_TO"
	NotTo  Visibility = "NOT_TO"
)

// Post is a post or a repost (RepostOf set). Audience lists are not part of
// the hot record: they are loaded only when they are needed.
type Post struct {
	ID         string
	AuthorID   string
	Content    string
	CreatedAt  time.Time
	Visibility Visibility
	RepostOfID string
	// RepostOfAuthorID is the original's author, recorded when the repost
	// is made so a timeline page can load it together with the original.
	// Empty for posts that are not reposts (and for reposts made before
	// it was recorded).
	RepostOfAuthorID string
	// Location is where the author says the post was made from, or nil.
	Location *Location
	// Source is the client the post was made with (e.g. web), or "".
	Source string
	// Mentions are the ids of the users the content mentions as @name,
	// in order of first mention (resolved when the post was made).
	Mentions []string
	// Media are the post's attached files, in the order given.
	Media []Media
	// SpoilerText is a content warning shown before the content, or nil;
	// Sensitive marks the media sensitive.
	SpoilerText *string
	Sensitive   bool
	// EditedAt is when the content was last edited, or nil.
	EditedAt *time.Time
	// Pinned: the author pinned the post to their profile.
	Pinned bool
}

// MediaKind is what an attached file is.
type MediaKind string

// Kinds of attached files.
const (
	Image MediaKind = "IMAGE"
	Audio MediaKind = "AUDIO"
)

// Media is a file attached to a post, as checked when it was uploaded.
type Media struct {
	ID   string
	Kind MediaKind
	// MIME is sniffed from the content, never the client's word.
	MIME  string
	Bytes int64
	// Width and Height are an image's pixels; Duration an audio file's
	// seconds.
	Width, Height int
	Duration      float64
	Alt           string
	// Key names the stored file in the blob store.
	Key string
}

// Location is a place a post was made from, as its author gives it.
type Location struct {
	Latitude, Longitude float64
	Name                string
}

// Plain reports whether the post is a plain repost: a repost with no text
// of its own.
func (p *Post) Plain() bool { return p.RepostOfID != "" && p.Content == "" }

// Comment is a comment on a post.
type Comment struct {
	ID        string
	PostID    string
	AuthorID  string
	Content   string
	CreatedAt time.Time
	// InReplyToID is the comment of the same post this one answers, ""
	// for a top-level comment. It stays when that comment is deleted:
	// Comment.inReplyTo then reads null.
	InReplyToID string
}

// Viewer is who a request acts for, taken from a verified access token.
type Viewer struct {
	UserID    string
	TokenID   string // jti of the access token
	Session   string // refresh-token family the access token was issued with
	ExpiresAt time.Time
}

type viewerKey struct{}

// WithViewer returns a context carrying the authenticated viewer.
func WithViewer(ctx context.Context, v Viewer) context.Context {
	return context.WithValue(ctx, viewerKey{}, v)
}

// ViewerFrom returns the viewer of the request and whether there is one.
func ViewerFrom(ctx context.Context) (Viewer, bool) {
	v, ok := ctx.Value(viewerKey{}).(Viewer)
	return v, ok && v.UserID != ""
}

// ViewerID returns the viewer's user id, or "" for an anonymous request.
func ViewerID(ctx context.Context) string {
	v, _ := ViewerFrom(ctx)
	return v.UserID
}

// RequireViewer returns the viewer or an UNAUTHENTICATED error.
func RequireViewer(ctx context.Context) (Viewer, error) {
	v, ok := ViewerFrom(ctx)
	if !ok {
		return Viewer{}, Errorf(Unauthenticated, "authentication required")
	}
	return v, nil
}

// MaxBioLen is the longest bio, in characters.
const MaxBioLen = 300

// ValidateBio trims a bio and checks its length.
func ValidateBio(bio string) (string, error) {
	return CleanText(bio, "bio", 0, MaxBioLen)
}
