// Package gqltest runs the whole GraphQL edge (handler, auth, loaders,
// Redis store) on a throwaway Redis for end-to-end tests, and gives them a
// small client: register users, send documents, read data and error codes.
package gqltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
)

// Secret is the HS256 secret of test servers.
const Secret = "test-secret-test-secret-test-secret-0123"

// Server is a gateway handler over its own key prefix of the package's
// throwaway Redis.
type Server struct {
	URL      string
	Store    *redisstore.Store
	Redis    *redis.Client
	Auth     *auth.Service
	Resolver *graph.Resolver
	Handler  http.Handler
	names    atomic.Int64
}

// Options tune a test server.
type Options struct {
	// Wire is called after the default wiring and before the handler is
	// built, to replace services (e.g. the posts store of a fan-out mode).
	Wire func(s *Server)
}

// New starts a test server; it is closed when the test ends.
func New(tb testing.TB, opts ...Options) *Server {
	tb.Helper()
	rdb := redistest.Client(tb)
	store := redisstore.New(rdb, redistest.Prefix(tb))
	tokens, err := auth.NewTokens(auth.TokenOptions{
		Method: "HS256", Secret: []byte(Secret), Issuer: "socialgw", Audience: "socialgw-api", TTL: 15 * time.Minute,
	})
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{Store: store, Redis: rdb}
	s.Auth = &auth.Service{Accounts: store, Sessions: store, Tokens: tokens, Passwords: auth.NewPasswords(4), RefreshTTL: time.Hour}
	s.Resolver = &graph.Resolver{Accounts: s.Auth, Profiles: store, Graph: store, Posts: store, Engagement: store}
	for _, o := range opts {
		if o.Wire != nil {
			o.Wire(s)
		}
	}
	s.Handler = graph.NewHandler(s.Resolver, store, s.Auth, graph.Options{
		Introspection: true, Suggestions: true, ComplexityLimit: 20000, MaxBodyBytes: 1 << 20,
	})
	ts := httptest.NewServer(s.Handler)
	tb.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
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
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("post query: %v", err)
	}
	defer resp.Body.Close()
	out := &Response{Status: resp.StatusCode}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		tb.Fatalf("decode response (status %d): %v", resp.StatusCode, err)
	}
	return out
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
	u, err := s.Store.CreateUser(ctx, auth.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: hash})
	if err != nil {
		tb.Fatalf("register %s: %v", name, err)
	}
	res, err := s.Auth.StartSession(ctx, u)
	if err != nil {
		tb.Fatalf("session for %s: %v", name, err)
	}
	return User{ID: u.ID, Name: name, Token: res.AccessToken, Refresh: res.RefreshToken}
}
