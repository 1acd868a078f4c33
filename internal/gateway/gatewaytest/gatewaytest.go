// Package gatewaytest runs the gateway, wired by gateway.New as in
// production, on a throwaway Redis for end-to-end tests, and is the one
// GraphQL test client: send documents to any gateway URL, register users,
// read data and error codes.
package gatewaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/httpapi"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/reqlog"
	"github.com/socialgw/gateway/internal/social"
	"github.com/socialgw/gateway/internal/trusted"
)

// Secret is the HS256 secret of test servers.
const Secret = "test-secret-test-secret-test-secret-0123"

// MediaKey is the test gateways' MEDIA_SIGNING_KEY, unless Options.Media
// gives one.
const MediaKey = "test-media-key-test-media-key-0123456789"

// Server is a gateway over its own key prefix of the package's throwaway
// Redis, serving /query on a test HTTP server.
type Server struct {
	*gateway.Gateway
	URL   string
	Redis redis.UniversalClient
	names atomic.Int64
	cfg   gateway.Config
}

// Options tune a test server.
type Options struct {
	// Feed replaces the default timeline configuration.
	Feed *redisstore.FeedConfig
	// Abuse sets rate limits, the refresh grace window and the persisted-
	// query cache; by default there are no limits, no grace and a cache in
	// the process.
	Abuse *gateway.Abuse
	// CORSOrigins may call the API from a browser; with any, the server
	// serves the whole mux (gateway.Handler, CORS included) rather than
	// /query alone.
	CORSOrigins []string
	// Live replaces the default live-timeline configuration.
	Live *gateway.LiveConfig
	// Redis replaces the package's throwaway Redis (a fault test's own
	// server or cluster); the caller closes it.
	Redis redis.UniversalClient
	// Sockets bound websockets (none by default).
	Sockets *httpapi.SocketLimits
	// Media stores posts' files (none by default: no uploads); Uploads
	// bound multipart requests.
	Media   *gateway.MediaConfig
	Uploads *httpapi.Uploads
	// Tracer traces requests; with one, the server serves the whole mux
	// (gateway.Handler), whose middleware starts the requests' spans.
	Tracer trace.TracerProvider
	// Trusted are the only documents the server runs (none: any).
	Trusted *trusted.Documents
	// Clock issues and verifies access tokens (time.Now by default).
	Clock func() time.Time
	// Accounts tunes the account e-mail flows.
	Accounts *gateway.AccountConfig
	// Moderation names the moderators (none by default).
	Moderation *gateway.ModerationConfig
}

// New starts a test server; it is closed when the test ends.
func New(tb testing.TB, opts ...Options) *Server {
	tb.Helper()
	var rdb redis.UniversalClient
	feed := redisstore.DefaultFeed()
	var abuse gateway.Abuse
	var origins []string
	var sockets httpapi.SocketLimits
	var media gateway.MediaConfig
	var uploads httpapi.Uploads
	var tracer trace.TracerProvider
	var docs *trusted.Documents
	var clock func() time.Time
	// miniredis, the fallback without redis-server, has only classic
	// pub/sub.
	lc := gateway.LiveConfig{Classic: !redistest.Real()}
	for _, o := range opts {
		if o.CORSOrigins != nil {
			origins = o.CORSOrigins
		}
		if o.Feed != nil {
			feed = *o.Feed
		}
		if o.Abuse != nil {
			abuse = *o.Abuse
		}
		if o.Live != nil {
			lc = *o.Live
		}
		if o.Redis != nil {
			rdb = o.Redis
		}
		if o.Sockets != nil {
			sockets = *o.Sockets
		}
		if o.Media != nil {
			media = *o.Media
		}
		if o.Uploads != nil {
			uploads = *o.Uploads
		}
		if o.Tracer != nil {
			tracer = o.Tracer
		}
		if o.Trusted != nil {
			docs = o.Trusted
		}
		if o.Clock != nil {
			clock = o.Clock
		}
	}
	if rdb == nil {
		rdb = redistest.Client(tb)
	}
	if media.SigningKey == nil {
		// One key for every test gateway: cursors, sealed under a key
		// derived from it, come out the same run after run (golden files).
		media.SigningKey = []byte(MediaKey)
	}
	cfg := gateway.Config{
		Prefix: redistest.Prefix(tb),
		Feed:   feed,
		Tokens: auth.TokenOptions{
			Method: "HS256", Secret: []byte(Secret), Issuer: "socialgw", Audience: "socialgw-api", TTL: 15 * time.Minute, Now: clock,
		},
		RefreshTTL:          time.Hour,
		PasswordConcurrency: 4,
		GraphQL:             gateway.QueryOptions{Introspection: true, Suggestions: true, Limits: gqlguard.DefaultLimits(20000), MaxBodyBytes: 1 << 20, Sockets: sockets, Uploads: uploads},
		Abuse:               abuse,
		CORSOrigins:         origins,
		Live:                lc,
		Media:               media,
		Tracer:              tracer,
		Trusted:             docs,
		Accounts:            accountsOf(opts),
		Moderation:          moderationOf(opts),
	}
	return start(tb, rdb, cfg)
}

// moderationOf is the last Options.Moderation of opts (none: no
// moderators).
func moderationOf(opts []Options) gateway.ModerationConfig {
	var m gateway.ModerationConfig
	for _, o := range opts {
		if o.Moderation != nil {
			m = *o.Moderation
		}
	}
	return m
}

// Share starts a second gateway with s's configuration on s's Redis and
// key prefix: another instance of the same deployment.
func Share(tb testing.TB, s *Server) *Server {
	tb.Helper()
	return start(tb, s.Redis, s.cfg)
}

func start(tb testing.TB, rdb redis.UniversalClient, cfg gateway.Config) *Server {
	tb.Helper()
	log := Logger(tb)
	if cfg.Live.Log == nil {
		cfg.Live.Log = log
	}
	g, err := gateway.New(rdb, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{Gateway: g, Redis: rdb, cfg: cfg}
	mux := http.NewServeMux()
	mux.Handle("/", g.Query)
	mux.Handle(httpapi.MediaPath, g.Media)
	mux.Handle(httpapi.ExportPath, g.ExportFiles)
	// Requests log (internal errors, with their request id) to the test.
	var h http.Handler = reqlog.Middleware(log, mux)
	if len(cfg.CORSOrigins) > 0 || cfg.Tracer != nil {
		h = g.Handler(log, gateway.NewRegistry())
	}
	s.URL = Serve(tb, h)
	// Before the HTTP server's clean-up, which waits for open SSE streams.
	tb.Cleanup(g.Close)
	return s
}

// Logger returns a logger that writes to tb.Log (redistest.Logger).
func Logger(tb testing.TB) *slog.Logger { return redistest.Logger(tb) }

// Serve serves h on a test HTTP server closed when the test ends, and
// returns its URL.
func Serve(tb testing.TB, h http.Handler) string {
	ts := httptest.NewServer(h)
	tb.Cleanup(ts.Close)
	return ts.URL
}

// Response is a decoded GraphQL response.
type Response struct {
	Status int
	Data   map[string]any
	Errors []struct {
		Message    string         `json:"message"`
		Path       []any          `json:"path"`
		Extensions map[string]any `json:"extensions"`
	}
}

// Code returns the extensions.code of the first error, or "".
func (r *Response) Code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// Get walks the data by a dotted path ("follow.followersCount",
// "timeline.edges.0.node.id").
func (r *Response) Get(path string) any {
	var cur any = r.Data
	for _, p := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// Str returns the string at path ("" when absent or not a string).
func (r *Response) Str(path string) string { s, _ := r.Get(path).(string); return s }

// Int returns the number at path.
func (r *Response) Int(path string) int { f, _ := r.Get(path).(float64); return int(f) }

// Do sends a document with variables, as the holder of token ("" for
// anonymous), and decodes the response.
func (s *Server) Do(tb testing.TB, token, query string, vars map[string]any) *Response {
	tb.Helper()
	return Post(tb, s.URL, token, query, vars)
}

// Post sends a document to the gateway at baseURL (its /query) and decodes
// the response.
func Post(tb testing.TB, baseURL, token, query string, vars map[string]any) *Response {
	tb.Helper()
	status, body := PostRaw(tb, baseURL, token, query, vars)
	out := &Response{Status: status}
	if err := json.Unmarshal(body, out); err != nil {
		tb.Fatalf("decode response (status %d): %v\n%s", status, err, body)
	}
	return out
}

// PostRaw sends a document to the gateway at baseURL and returns the
// status and the body as it came.
func PostRaw(tb testing.TB, baseURL, token, query string, vars map[string]any) (int, []byte) {
	tb.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, baseURL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("post query: %v", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("read response: %v", err)
	}
	return resp.StatusCode, out
}

// MustDo is Do that fails the test on any GraphQL error.
func (s *Server) MustDo(tb testing.TB, token, query string, vars map[string]any) *Response {
	tb.Helper()
	r := s.Do(tb, token, query, vars)
	if len(r.Errors) > 0 {
		tb.Fatalf("unexpected errors: %+v\nquery: %s", r.Errors, query)
	}
	return r
}

// User is a registered test user.
type User struct {
	ID, Name, Token, Refresh string
}

// Password is the password of every user made by Register.
const Password = "correct horse battery"

var (
	hashOnce sync.Once
	hash     string
)

// Register creates a user with a unique name (prefix plus a counter) and
// the password Password, straight through the stores: argon2id runs once
// per test binary, not once per user (it is slow under -race). Tests of
// registration itself go through the API.
func (s *Server) Register(tb testing.TB, prefix string) User {
	tb.Helper()
	hashOnce.Do(func() { hash, _ = auth.NewPasswords(1).Hash(Password) })
	name := fmt.Sprintf("%s_%d", prefix, s.names.Add(1))
	ctx := context.Background()
	u, err := s.Store.CreateUser(ctx, social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: hash})
	if err != nil {
		tb.Fatalf("register %s: %v", name, err)
	}
	res, err := s.Auth.StartSession(ctx, u)
	if err != nil {
		tb.Fatalf("session for %s: %v", name, err)
	}
	return User{ID: u.ID, Name: name, Token: res.AccessToken, Refresh: res.RefreshToken}
}

// Prefix is the key prefix of the server's data.
func (s *Server) Prefix() string { return s.cfg.Prefix }
