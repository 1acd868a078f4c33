package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/socialgw/gateway/cmd/internal/app"
)

// Config is the whole configuration of the gateway, parsed once here from
// flags with environment-variable fallbacks. No other package reads the
// environment.
type Config struct {
	app.Common // Redis, logging, shutdown: shared with cmd/worker

	ListenAddr string

	JWTMethod         string
	JWTSecret         string
	JWTPrivateKeyFile string
	JWTPublicKeyFile  string
	JWTIssuer         string
	JWTAudience       string
	AccessTokenTTL    time.Duration
	RefreshTokenTTL   time.Duration

	Production    bool
	GraphiQL      bool
	Introspection bool
	CORSOrigins   []string

	MaxBodyBytes        int64
	RequestTimeout      time.Duration
	ComplexityLimit     int
	PasswordConcurrency int

	// Feed is the timeline and fan-out configuration, shared with
	// cmd/worker; FanoutWorker runs a fan-out worker inside the gateway.
	Feed         app.Feed
	FanoutWorker bool

	// graphiql and introspection are "", "true" or "false" as given;
	// finish resolves them against Production.
	graphiql, introspection string
}

func (c *Config) settings() []app.Setting {
	shared := append(c.Common.Settings("redis:// or rediss:// URL; empty starts an embedded in-memory Redis (data is lost on exit)"), c.Feed.Settings()...)
	shared = append(shared, app.Bool(&c.FanoutWorker, "fanout-worker", "FANOUT_WORKER", "true", "run a fan-out worker inside the gateway (cmd/worker runs more)"))
	own := []app.Setting{
		app.String(&c.ListenAddr, "listen", "LISTEN_ADDR", ":8080", "address to listen on (127.0.0.1:0 picks a free port)"),
		app.String(&c.JWTMethod, "jwt-method", "JWT_METHOD", "HS256", "access-token signature: HS256 (JWT_SECRET), EdDSA or RS256 (key files)"),
		app.String(&c.JWTSecret, "jwt-secret", "JWT_SECRET", "", "HS256 secret, at least 32 bytes; empty generates one per process (tokens die on restart)"),
		app.String(&c.JWTPrivateKeyFile, "jwt-private-key-file", "JWT_PRIVATE_KEY_FILE", "", "PEM private key for EdDSA or RS256"),
		app.String(&c.JWTPublicKeyFile, "jwt-public-key-file", "JWT_PUBLIC_KEY_FILE", "", "PEM public key for EdDSA or RS256"),
		app.String(&c.JWTIssuer, "jwt-issuer", "JWT_ISSUER", "socialgw", "iss claim of access tokens"),
		app.String(&c.JWTAudience, "jwt-audience", "JWT_AUDIENCE", "socialgw-api", "aud claim of access tokens"),
		app.Duration(&c.AccessTokenTTL, "access-token-ttl", "ACCESS_TOKEN_TTL", "15m", "lifetime of access tokens"),
		app.Duration(&c.RefreshTokenTTL, "refresh-token-ttl", "REFRESH_TOKEN_TTL", "720h", "lifetime of refresh tokens (renewed on each rotation)"),
		app.Bool(&c.Production, "production", "PRODUCTION", "false", "production mode: no GraphiQL, no introspection, no field suggestions unless enabled explicitly"),
		app.String(&c.graphiql, "graphiql", "GRAPHIQL", "", "true/false: serve GraphiQL at / (empty: on unless production)"),
		app.String(&c.introspection, "introspection", "INTROSPECTION", "", "true/false: allow schema introspection and field suggestions (empty: on unless production)"),
		app.List(&c.CORSOrigins, "cors-origins", "CORS_ORIGINS", "", "comma-separated origins allowed to call the API from a browser"),
		app.Int64(&c.MaxBodyBytes, "max-body-bytes", "MAX_BODY_BYTES", "1048576", "largest request body; larger ones get 413"),
		app.Duration(&c.RequestTimeout, "request-timeout", "REQUEST_TIMEOUT", "10s", "longest a query or mutation may take (subscriptions are not bound); 0 disables"),
		app.Int(&c.ComplexityLimit, "complexity-limit", "COMPLEXITY_LIMIT", "20000", "largest query cost (lists count as their page size); 0 disables"),
		app.Int(&c.PasswordConcurrency, "password-concurrency", "PASSWORD_CONCURRENCY", "4", "argon2id hashes run at once (19 MiB each)"),
	}
	return append(own, shared...)
}

// parseConfig reads flags, falling back to the environment, then to the
// defaults. --help prints every setting with its variable and default.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*Config, error) {
	c := &Config{}
	if err := app.Parse("gateway", c.settings(), args, getenv, out); err != nil {
		return nil, err
	}
	return c, c.finish()
}

// finish applies defaults that depend on other settings and checks ranges.
func (c *Config) finish() error {
	var err error
	if c.GraphiQL, err = orDefault(c.graphiql, !c.Production); err != nil {
		return fmt.Errorf("graphiql: %w", err)
	}
	if c.Introspection, err = orDefault(c.introspection, !c.Production); err != nil {
		return fmt.Errorf("introspection: %w", err)
	}
	switch {
	case c.AccessTokenTTL <= 0 || c.RefreshTokenTTL <= 0:
		return errors.New("token lifetimes must be positive")
	case c.MaxBodyBytes <= 0:
		return errors.New("max body bytes must be positive")
	case c.PasswordConcurrency < 1:
		return errors.New("password concurrency must be at least 1")
	}
	if err := c.Common.Check(); err != nil {
		return err
	}
	return c.Feed.Finish()
}

// orDefault parses an optional boolean.
func orDefault(v string, def bool) (bool, error) {
	if v == "" {
		return def, nil
	}
	return strconv.ParseBool(v)
}
