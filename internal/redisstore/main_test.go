package redisstore_test

import (
	"context"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// homeIDs reads a page of a home timeline as post ids, with nothing
// brought along.
func homeIDs(ctx context.Context, s *redisstore.Store, viewer string, p social.PageRequest) (social.Connection[string], error) {
	page, err := s.HomePage(ctx, viewer, p, readplan.PageWants{})
	if err != nil {
		return social.Connection[string]{}, err
	}
	return social.PostIDs(page.Posts), nil
}

// userPostIDs reads a page of a user timeline as post ids.
func userPostIDs(ctx context.Context, s *redisstore.Store, viewer, user string, p social.PageRequest) (social.Connection[string], error) {
	page, err := s.UserPage(ctx, viewer, user, p, readplan.PageWants{})
	if err != nil {
		return social.Connection[string]{}, err
	}
	return social.PostIDs(page.Posts), nil
}
