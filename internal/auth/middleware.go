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
	if strings.TrimSpace(header) == "" {
		return ctx, nil
	}
	token, ok := BearerToken(header)
	if !ok {
		return ctx, social.Errorf(social.Unauthenticated, "the Authorization header must be \"Bearer <access token>\"")
	}
	v, err := a.Authenticate(ctx, token)
	if err != nil {
		return ctx, err
	}
	return social.WithViewer(ctx, v), nil
}

// BearerToken reads the token of an Authorization header value of the
// form "Bearer <token>" (the scheme in any case).
func BearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}
