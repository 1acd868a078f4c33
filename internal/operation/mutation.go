package operation

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/internal/clientaddr"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/social"
)

// mutationBudget spends one event of the user's mutation budget for every
// root mutation field, so aliased copies of one mutation in a document
// count one each. Anonymous mutations (login, register, refreshToken) are
// counted per client address.
func mutationBudget(l Limiter) graphql.FieldMiddleware {
	return func(ctx context.Context, next graphql.Resolver) (any, error) {
		fc := graphql.GetFieldContext(ctx)
		if fc == nil || fc.Object != "Mutation" { // only root fields have Mutation as their object
			return next(ctx)
		}
		subject := social.ViewerID(ctx)
		if subject == "" {
			subject = "ip:" + clientaddr.From(ctx)
		}
		if err := l.Allow(ctx, ratelimit.RuleMutationUser, subject); err != nil {
			return nil, err
		}
		return next(ctx)
	}
}
