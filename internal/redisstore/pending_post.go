package redisstore

import (
	"context"

	"github.com/socialgw/gateway/internal/social"
)

// Stubs until the posts-and-timelines issue lands; delete this file then.

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
