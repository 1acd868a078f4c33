// Package graph is the GraphQL schema of the gateway: gqlgen's generated
// executable schema, and the thin resolvers that turn arguments into calls
// on the domain services and the per-request loaders.
package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Accounts registers accounts and manages sessions (auth.Service).
type Accounts interface {
	Register(ctx context.Context, name, email, password string) (*auth.Result, error)
	Login(ctx context.Context, login, password string) (*auth.Result, error)
	Refresh(ctx context.Context, refreshToken string) (*auth.Result, error)
	Logout(ctx context.Context, v social.Viewer) error
	// The account e-mail flows (internal/auth, mail.go, email.go).
	ChangePassword(ctx context.Context, v social.Viewer, current, next string) (*auth.Result, error)
	RequestPasswordReset(ctx context.Context, email string) (bool, error)
	ResetPassword(ctx context.Context, token, password string) (*auth.Result, error)
	ChangeEmail(ctx context.Context, v social.Viewer, newEmail, password string) (bool, error)
	VerifyEmail(ctx context.Context, token string) (*social.User, error)
	ResendVerification(ctx context.Context, v social.Viewer) (bool, error)
	// DeleteAccount deletes the viewer's account (internal/auth, delete.go).
	DeleteAccount(ctx context.Context, v social.Viewer, password string) (bool, error)
	// CanPost refuses posts and comments of an account whose address must
	// be confirmed first (REQUIRE_VERIFIED_EMAIL).
	CanPost(ctx context.Context, userID string) error
}

// Profiles finds users by name.
type Profiles interface {
	UserIDByName(ctx context.Context, name string) (string, error)
}

// Graph is the social graph: follows, blocks and mutes. Its lists are
// read through the request's list loader (internal/loader).
type Graph interface {
	Follow(ctx context.Context, viewerID, userID string) error
	Unfollow(ctx context.Context, viewerID, userID string) error
	Block(ctx context.Context, viewerID, userID string) error
	Unblock(ctx context.Context, viewerID, userID string) error
	Mute(ctx context.Context, viewerID, userID string) error
	Unmute(ctx context.Context, viewerID, userID string) error
	// RemoveFollower ends userID's follow of viewerID, without a block.
	RemoveFollower(ctx context.Context, viewerID, userID string) error
	// ApproveFollowRequest / RejectFollowRequest settle userID's pending
	// request to follow viewerID (a locked account).
	ApproveFollowRequest(ctx context.Context, viewerID, userID string) error
	RejectFollowRequest(ctx context.Context, viewerID, userID string) error
}

// Posts writes posts and reads timelines. Timelines hold the posts the
// viewer may see, newest first.
type Posts interface {
	// CheckPost applies the rules of a new post's input, as CreatePost
	// does first: the resolver asks before it stores any file.
	CheckPost(in social.NewPost) error
	CreatePost(ctx context.Context, authorID string, in social.NewPost) (*social.Post, error)
	DeletePost(ctx context.Context, viewerID, postID string) error
	Audience(ctx context.Context, postID string) (social.Audience, error)
	// HomePage and UserPage fetch a page of posts together with what the
	// query asks for (w), in a fixed number of round trips.
	HomePage(ctx context.Context, viewerID string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error)
	UserPage(ctx context.Context, viewerID, userID string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error)
}

// Engagement is likes and comments; their lists are read through the
// request's list loader.
type Engagement interface {
	Like(ctx context.Context, viewerID, postID string) error
	Unlike(ctx context.Context, viewerID, postID string) error
	AddComment(ctx context.Context, viewerID, postID, content string) (*social.Comment, error)
	DeleteComment(ctx context.Context, viewerID, commentID string) error
}

// Edits edits posts; their earlier versions are read through the
// request's loaders.
type Edits interface {
	EditPost(ctx context.Context, viewerID, id string, in social.EditPost) (*social.Post, error)
}

// Replies answers comments (addComment with inReplyTo).
type Replies interface {
	AddReply(ctx context.Context, viewerID, postID, content, inReplyTo string) (*social.Comment, error)
}

// Live streams home timelines (internal/live): posts newer than since
// first, then live ones; end reports why the stream ended on its own.
type Live interface {
	Stream(ctx context.Context, v social.Viewer, since string) (posts <-chan *social.Post, end func() error, err error)
}

// Notes are the viewer's notifications.
type Notes interface {
	// Notifications reads a page, each with its first actors (as many as
	// actors).
	Notifications(ctx context.Context, viewerID string, p social.PageRequest, actors int) (social.Notifications, error)
	MarkNotificationsRead(ctx context.Context, viewerID, upTo string) (int, error)
}

// LiveNotes streams notifications (internal/live): those raised after
// since first, then live ones; end reports why the stream ended.
type LiveNotes interface {
	Stream(ctx context.Context, v social.Viewer, since string, actors int) (notes <-chan *social.Notification, end func() error, err error)
}

// Resolver is the root resolver; its fields are the services resolvers
// call. Reads of single objects and counters go through the per-request
// loaders (internal/loader) instead, so they batch.
type Resolver struct {
	Accounts   Accounts
	Profiles   Profiles
	Graph      Graph
	Posts      Posts
	Engagement Engagement
	Edits      Edits
	Replies    Replies
	Live       Live
	Notes      Notes
	LiveNotes  LiveNotes
	Curation   Curation
	// Filters is the viewer's keyword filters (filters.go).
	Filters Filters
	// Discovery is tag pages, trends and user search (discovery.go).
	Discovery Discovery
	// Moderation is reports and moderators' actions (moderation.go).
	Moderation Moderation
	// Attachments stores posts' files and addresses them (attachments.go).
	Attachments *Attachments
	// Profile edits profiles and addresses their pictures (profile.go).
	Profile *ProfileEditor
	// Exports are the viewer's data exports (dataexport.go); nil: none.
	Exports Exports

	// The read path: set by NewExecution (reading) for production; this
	// package's tests set them to build the variants they compare with
	// (export_test.go).
	read        Reader              // nil: readpath.New()
	genericOnly bool                // no timeline fast path
	fast        *readpath.FastStats // set by NewExecution
}

// Reader is the read path the resolvers call (graph/readpath): a Timeline
// field's page plans its fetch from the selection (PageWants) and primes
// the request's loaders with what it read (Timeline); the lists below
// objects are read ahead, level by level, for every object at once.
type Reader interface {
	// PageWants is what the current Timeline field's page brings along.
	PageWants(ctx context.Context) readplan.PageWants
	// Timeline turns a fetched page into the field's value.
	Timeline(ctx context.Context, page *readplan.Page) *model.Timeline
	// UserList and CommentList resolve the lists below an object.
	UserList(ctx context.Context, k readplan.ListKey, first *int, after *string) (*model.UserConnection, error)
	CommentList(ctx context.Context, postID string, first *int, after *string) (*model.CommentConnection, error)
	// ReplyList resolves a comment's answers.
	ReplyList(ctx context.Context, c *social.Comment, first *int, after *string) (*model.CommentConnection, error)
}
