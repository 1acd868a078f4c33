package redisstore

import (
	"context"

	"github.com/socialgw/gateway/internal/social"
)

// Stubs until the likes-and-comments issue lands; delete this file then.

func (s *Store) Liked(ctx context.Context, viewerID string, postIDs []string) ([]bool, error) {
	return nil, notYet("likes")
}
func (s *Store) Comments(ctx context.Context, ids []string) ([]*social.Comment, error) {
	return nil, notYet("comments")
}
func (s *Store) Like(ctx context.Context, viewerID, postID string) error { return notYet("likePost") }
func (s *Store) Unlike(ctx context.Context, viewerID, postID string) error {
	return notYet("unlikePost")
}
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
