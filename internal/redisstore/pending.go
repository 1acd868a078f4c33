package redisstore

import (
	"context"

	"github.com/socialgw/gateway/internal/social"
)

// This file holds the parts of the stores that later issues build. Each
// answers with a clear error until then, never with made-up data.

func notYet(what string) error {
	return social.Errorf(social.Internal, "%s is not available yet", what)
}

// UserCounts: social-graph issue.
func (s *Store) UserCounts(ctx context.Context, ids []string) ([]social.UserCounts, error) {
	return nil, notYet("user counters")
}

// Relations: social-graph issue.
func (s *Store) Relations(ctx context.Context, viewerID string, ids []string) ([]social.Relation, error) {
	return nil, notYet("relations")
}

func (s *Store) Follow(ctx context.Context, viewerID, userID string) error   { return notYet("follow") }
func (s *Store) Unfollow(ctx context.Context, viewerID, userID string) error { return notYet("unfollow") }
func (s *Store) Block(ctx context.Context, viewerID, userID string) error    { return notYet("block") }
func (s *Store) Unblock(ctx context.Context, viewerID, userID string) error  { return notYet("unblock") }
func (s *Store) Mute(ctx context.Context, viewerID, userID string) error     { return notYet("mute") }
func (s *Store) Unmute(ctx context.Context, viewerID, userID string) error   { return notYet("unmute") }
func (s *Store) Followers(ctx context.Context, userID string, p social.PageRequest) (social.Connection[string], error) {
	return social.Connection[string]{}, notYet("followers")
}
func (s *Store) Following(ctx context.Context, userID string, p social.PageRequest) (social.Connection[string], error) {
	return social.Connection[string]{}, notYet("following")
}
func (s *Store) CommonFollowing(ctx context.Context, userID, otherID string, p social.PageRequest) (social.Connection[string], error) {
	return social.Connection[string]{}, notYet("commonFollowing")
}

func (s *Store) VisiblePosts(ctx context.Context, viewerID string, ids []string) ([]*social.Post, error) {
	return nil, notYet("posts")
}
func (s *Store) PostCounts(ctx context.Context, ids []string) ([]social.PostCounts, error) {
	return nil, notYet("post counters")
}
func (s *Store) CreatePost(ctx context.Context, authorID string, in social.NewPost) (*social.Post, error) {
	return nil, notYet("createPost")
}
func (s *Store) DeletePost(ctx context.Context, viewerID, postID string) error {
	return notYet("deletePost")
}
func (s *Store) Audience(ctx context.Context, postID string) (social.Audience, error) {
	return social.Audience{}, notYet("audience lists")
}
func (s *Store) HomeTimeline(ctx context.Context, viewerID string, p social.PageRequest) (social.Connection[string], error) {
	return social.Connection[string]{}, notYet("timeline")
}
func (s *Store) UserTimeline(ctx context.Context, viewerID, userID string, p social.PageRequest) (social.Connection[string], error) {
	return social.Connection[string]{}, notYet("userTimeline")
}

func (s *Store) Liked(ctx context.Context, viewerID string, postIDs []string) ([]bool, error) {
	return nil, notYet("likes")
}
func (s *Store) Comments(ctx context.Context, ids []string) ([]*social.Comment, error) {
	return nil, notYet("comments")
}
func (s *Store) Like(ctx context.Context, viewerID, postID string) error   { return notYet("likePost") }
func (s *Store) Unlike(ctx context.Context, viewerID, postID string) error { return notYet("unlikePost") }
func (s *Store) AddComment(ctx context.Context, viewerID, postID, content string) (*social.Comment, error) {
	return nil, notYet("addComment")
}
func (s *Store) DeleteComment(ctx context.Context, viewerID, commentID string) error {
	return notYet("deleteComment")
}
func (s *Store) Likers(ctx context.Context, postID string, p social.PageRequest) (social.Connection[string], error) {
	return social.Connection[string]{}, notYet("likers")
}
func (s *Store) PostComments(ctx context.Context, postID string, p social.PageRequest) (social.Connection[string], error) {
	return social.Connection[string]{}, notYet("comments")
}
