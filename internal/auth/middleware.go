package auth

import (
	"context"
	"strings"

	"github.com/socialgw/gateway/internal/social"
)

// Authenticator is what the transports need from the service.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (social.Viewer, error)
}

// ViewerFromHeader authenticates an Authorization header value. An empty
// header is an anonymous request; anything else must be a valid bearer
// token: a bad one is an error, never silently anonymous.
func ViewerFromHeader(ctx context.Context, a Authenticator, header string) (context.Context, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return ctx, nil
	}
	scheme, token, ok := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return ctx, social.Errorf(social.Unauthenticated, "the Authorization header must be \"Bearer <access token>\"")
	}
	v, err := a.Authenticate(ctx, token)
	if err != nil {
		return ctx, err
	}
	return social.WithViewer(ctx, v), nil
}
