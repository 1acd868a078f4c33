// Package gateway wires the application: the Redis store, the auth service,
// the GraphQL resolvers and handler, and the HTTP mux of the contract. It
// is the one place that assembles them; cmd/gateway, cmd/bench and the
// end-to-end tests (gatewaytest) all build the gateway through New, so
// what they run is what production runs.
package gateway

import (
	"fmt"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/redisstore"
)

// Config is the application's configuration, parsed and checked by the
// command that runs it.
type Config struct {
	// Prefix starts every Redis key.
	Prefix string
	// Feed is the timeline and fan-out configuration.
	Feed redisstore.FeedConfig
	// Tokens signs and verifies access tokens.
	Tokens auth.TokenOptions
	// RefreshTTL is the lifetime of refresh tokens.
	RefreshTTL time.Duration
	// PasswordConcurrency bounds the argon2id hashes run at once.
	PasswordConcurrency int
	// GraphQL are the /query handler's limits and switches; its websocket
	// origins are derived from CORSOrigins.
	GraphQL graph.Options
	// GraphiQL serves the IDE at /.
	GraphiQL bool
	// CORSOrigins may call the API from a browser and open websockets.
	CORSOrigins []string
}

// Gateway is the wired application.
type Gateway struct {
	Store    *redisstore.Store
	Auth     *auth.Service
	Resolver *graph.Resolver
	// Query is the /query handler.
	Query http.Handler

	cfg Config
}

// New wires the application over rdb.
func New(rdb redis.UniversalClient, cfg Config) (*Gateway, error) {
	store := redisstore.New(rdb, cfg.Prefix)
	if err := store.SetFeed(cfg.Feed); err != nil {
		return nil, err
	}
	tokens, err := auth.NewTokens(cfg.Tokens)
	if err != nil {
		return nil, err
	}
	if cfg.PasswordConcurrency < 1 {
		return nil, fmt.Errorf("password concurrency must be at least 1")
	}
	g := &Gateway{Store: store, cfg: cfg}
	g.Auth = &auth.Service{
		Accounts:   store,
		Sessions:   store,
		Tokens:     tokens,
		Passwords:  auth.NewPasswords(cfg.PasswordConcurrency),
		RefreshTTL: cfg.RefreshTTL,
	}
	g.Resolver = &graph.Resolver{
		Accounts:   g.Auth,
		Profiles:   store,
		Graph:      store,
		Posts:      store,
		Engagement: store,
	}
	opts := cfg.GraphQL
	opts.WebsocketOrigins = originHosts(cfg.CORSOrigins)
	g.Query = g.NewQueryHandler(opts)
	return g, nil
}

// NewQueryHandler returns a /query handler over the gateway's services
// with other options: the benchmark's naive baseline, and the tests that
// compare the fast path with gqlgen's own execution.
func (g *Gateway) NewQueryHandler(o graph.Options) http.Handler {
	return graph.NewHandler(g.Resolver, g.Store, g.Auth, o)
}

// Compile-time checks that the store and the auth service provide every
// interface the GraphQL layer and the loaders declare.
var (
	_ graph.Accounts     = (*auth.Service)(nil)
	_ graph.Profiles     = (*redisstore.Store)(nil)
	_ graph.Graph        = (*redisstore.Store)(nil)
	_ graph.Posts        = (*redisstore.Store)(nil)
	_ graph.Engagement   = (*redisstore.Store)(nil)
	_ loader.Store       = (*redisstore.Store)(nil)
	_ auth.AccountStore  = (*redisstore.Store)(nil)
	_ auth.SessionStore  = (*redisstore.Store)(nil)
	_ auth.Authenticator = (*auth.Service)(nil)
)
