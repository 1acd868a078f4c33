package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

// authOf accepts the token "good" and refuses others.
type authOf struct{ down bool }

func (a authOf) Authenticate(ctx context.Context, token string) (social.Viewer, error) {
	switch {
	case a.down:
		return social.Viewer{}, errors.New("redis: connection refused")
	case token == "good":
		return social.Viewer{UserID: "u1"}, nil
	}
	return social.Viewer{}, &social.Error{Code: social.Unauthenticated, Message: "the token is not valid"}
}

func TestAuthenticate(t *testing.T) {
	for _, tc := range []struct {
		name, header string
		down         bool
		status       int
		viewer       string
	}{
		{"anonymous", "", false, 200, ""},
		{"valid token", "Bearer good", false, 200, "u1"},
		{"invalid token", "Bearer bad", false, 401, ""},
		{"not a bearer token", "Basic abc", false, 401, ""},
		{"store down", "Bearer good", true, 503, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := &ok{}
			r := httptest.NewRequest(http.MethodPost, "/query", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			w := httptest.NewRecorder()
			authenticate(authOf{down: tc.down})(next).ServeHTTP(w, r)
			if w.Code != tc.status || next.ran != (tc.status == 200) {
				t.Fatalf("status %d, ran %v; want %d", w.Code, next.ran, tc.status)
			}
			if next.ran && social.ViewerID(next.r.Context()) != tc.viewer {
				t.Errorf("viewer %q, want %q", social.ViewerID(next.r.Context()), tc.viewer)
			}
			if tc.status == 401 && !strings.Contains(w.Header().Get("WWW-Authenticate"), "invalid_token") {
				t.Errorf("WWW-Authenticate %q", w.Header().Get("WWW-Authenticate"))
			}
		})
	}
}
