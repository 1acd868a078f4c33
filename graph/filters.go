package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/social"
)

// Filters is the viewer's keyword filters (redisstore.FilterService).
// The pages apply them in the store, where they drop hidden posts.
type Filters interface {
	AddFilter(ctx context.Context, userID string, in social.FilterInput) (*social.Filter, error)
	RemoveFilter(ctx context.Context, userID, id string) error
	Filters(ctx context.Context, userID string) ([]social.Filter, error)
}

// filterContexts pairs the schema's contexts with the domain's.
var filterContexts = map[model.FilterContext]social.FilterContext{
	model.FilterContextHome:          social.FilterHome,
	model.FilterContextLists:         social.FilterLists,
	model.FilterContextNotifications: social.FilterNotifications,
	model.FilterContextPublic:        social.FilterPublic,
	model.FilterContextComments:      social.FilterComments,
}

// addFilter adds a filter of the viewer.
func (r *Resolver) addFilter(ctx context.Context, in model.FilterInput) (*social.Filter, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	f := social.FilterInput{Phrase: in.Phrase, WholeWord: in.WholeWord == nil || *in.WholeWord, ExpiresIn: in.ExpiresIn}
	for _, c := range in.Context {
		f.Context |= filterContexts[c]
	}
	return r.Filters.AddFilter(ctx, v.UserID, f)
}

// removeFilter removes one of the viewer's filters and answers its id.
func (r *Resolver) removeFilter(ctx context.Context, id string) (string, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return "", err
	}
	return id, r.Filters.RemoveFilter(ctx, v.UserID, id)
}

// viewerFilters returns the viewer's filters.
func (r *Resolver) viewerFilters(ctx context.Context) ([]*social.Filter, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	fs, err := r.Filters.Filters(ctx, v.UserID)
	out := make([]*social.Filter, len(fs))
	for i := range fs {
		out[i] = &fs[i]
	}
	return out, err
}

// filterContextsOf is a filter's contexts in the schema's order.
func filterContextsOf(f *social.Filter) []model.FilterContext {
	out := []model.FilterContext{}
	for _, c := range model.AllFilterContext {
		if f.Context.Has(filterContexts[c]) {
			out = append(out, c)
		}
	}
	return out
}
