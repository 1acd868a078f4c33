package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Discovery finds posts and users beyond the viewer's graph: tag pages,
// the trend ranking and user search (the store's TagService,
// TrendService and UserSearchService).
type Discovery interface {
	// TagPage fetches a page of a tag's posts with what the query asks
	// for (w), in a fixed number of round trips.
	TagPage(ctx context.Context, viewerID, tag string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error)
	TrendingTags(ctx context.Context, first int) ([]social.TagTrend, error)
	// SearchUsers returns the ids of the users found, best first.
	SearchUsers(ctx context.Context, viewerID, prefix string, first int) ([]string, error)
}

// tagTimeline returns a page of a tag's posts as the viewer may see them.
func (r *Resolver) tagTimeline(ctx context.Context, tag string, first *int, after *string) (*model.Timeline, error) {
	p, err := social.NewPageRequest(first, after)
	if err != nil {
		return nil, err
	}
	page, err := r.Discovery.TagPage(ctx, social.ViewerID(ctx), tag, p, r.read.PageWants(ctx))
	if err != nil {
		return nil, err
	}
	return r.read.Timeline(ctx, page), nil
}

// trendingTags returns the first tags of the trend ranking.
func (r *Resolver) trendingTags(ctx context.Context, first *int) ([]*social.TagTrend, error) {
	n := 10
	if first != nil {
		n = *first
	}
	trends, err := r.Discovery.TrendingTags(ctx, n)
	if err != nil {
		return nil, err
	}
	out := make([]*social.TagTrend, len(trends))
	for i := range trends {
		out[i] = &trends[i]
	}
	return out, nil
}

// searchUsers returns the users whose name or display name starts with
// prefix, most followed first.
func (r *Resolver) searchUsers(ctx context.Context, prefix string, first *int) ([]*social.User, error) {
	n := 10
	if first != nil {
		n = *first
	}
	ids, err := r.Discovery.SearchUsers(ctx, social.ViewerID(ctx), prefix, n)
	if err != nil {
		return nil, err
	}
	return usersByID(ctx, ids)
}
