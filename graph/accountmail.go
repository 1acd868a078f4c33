package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/auth"
)

// authResult turns what a session-opening call returned into the
// mutation's payload, so each such resolver is one call.
func authResult(ctx context.Context) func(*auth.Result, error) (*model.AuthPayload, error) {
	return func(res *auth.Result, err error) (*model.AuthPayload, error) {
		if err != nil {
			return nil, err
		}
		return authPayload(ctx, res), nil
	}
}

// orNullBool is a nullable Boolean: b, or null when not ok.
func orNullBool(b, ok bool) *bool {
	if !ok {
		return nil
	}
	return &b
}
