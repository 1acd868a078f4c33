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

// setting is one configuration value: its flag, its variable and its
// default, bound to a field.
type setting struct {
	flag, env, def, usage string
	set                   func(string) error
}

func (c *Config) settings() []setting {
	shared := append(c.Common.Settings("redis:// or rediss:// URL; empty starts an embedded in-memory Redis (data is lost on exit)"), c.Feed.Settings()...)
	shared = append(shared, app.Bool(&c.FanoutWorker, "fanout-worker", "FANOUT_WORKER", "true", "run a fan-out worker inside the gateway (cmd/worker runs more)"))
	own := []setting{
		str(&c.ListenAddr, "listen", "LISTEN_ADDR", ":8080", "address to listen on (127.0.0.1:0 picks a free port)"),
		str(&c.JWTMethod, "jwt-method", "JWT_METHOD", "HS256", "access-token signature: HS256 (JWT_SECRET), EdDSA or RS256 (key files)"),
		str(&c.JWTSecret, "jwt-secret", "JWT_SECRET", "", "HS256 secret, at least 32 bytes; empty generates one per process (tokens die on restart)"),
		str(&c.JWTPrivateKeyFile, "jwt-private-key-file", "JWT_PRIVATE_KEY_FILE", "", "PEM private key for EdDSA or RS256"),
		str(&c.JWTPublicKeyFile, "jwt-public-key-file", "JWT_PUBLIC_KEY_FILE", "", "PEM public key for EdDSA or RS256"),
		str(&c.JWTIssuer, "jwt-issuer", "JWT_ISSUER", "socialgw", "iss claim of access tokens"),
		str(&c.JWTAudience, "jwt-audience", "JWT_AUDIENCE", "socialgw-api", "aud claim of access tokens"),
		duration(&c.AccessTokenTTL, "access-token-ttl", "ACCESS_TOKEN_TTL", "15m", "lifetime of access tokens"),
		duration(&c.RefreshTokenTTL, "refresh-token-ttl", "REFRESH_TOKEN_TTL", "720h", "lifetime of refresh tokens (renewed on each rotation)"),
		boolean(&c.Production, "production", "PRODUCTION", "false", "production mode: no GraphiQL, no introspection, no field suggestions unless enabled explicitly"),
		str(&c.graphiql, "graphiql", "GRAPHIQL", "", "true/false: serve GraphiQL at / (empty: on unless production)"),
		str(&c.introspection, "introspection", "INTROSPECTION", "", "true/false: allow schema introspection and field suggestions (empty: on unless production)"),
		list(&c.CORSOrigins, "cors-origins", "CORS_ORIGINS", "", "comma-separated origins allowed to call the API from a browser"),
		integer64(&c.MaxBodyBytes, "max-body-bytes", "MAX_BODY_BYTES", "1048576", "largest request body; larger ones get 413"),
		duration(&c.RequestTimeout, "request-timeout", "REQUEST_TIMEOUT", "10s", "longest a query or mutation may take (subscriptions are not bound); 0 disables"),
		integer(&c.ComplexityLimit, "complexity-limit", "COMPLEXITY_LIMIT", "20000", "largest query cost (lists count as their page size); 0 disables"),
		integer(&c.PasswordConcurrency, "password-concurrency", "PASSWORD_CONCURRENCY", "4", "argon2id hashes run at once (19 MiB each)"),
	}
	for _, sh := range shared {
		own = append(own, local(sh))
	}
	return own
}

// parseConfig reads flags, falling back to the environment, then to the
// defaults. --help prints every setting with its variable and default.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*Config, error) {
	c := &Config{}
	own := c.settings()
	list := make([]app.Setting, len(own))
	for i, s := range own {
		list[i] = app.Setting{Flag: s.flag, Env: s.env, Def: s.def, Usage: s.usage, Set: s.set}
	}
	if err := app.Parse("gateway", list, args, getenv, out); err != nil {
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

// local turns a shared setting into this command's.
func local(s app.Setting) setting { return setting{s.Flag, s.Env, s.Def, s.Usage, s.Set} }

func str(p *string, fl, env, def, usage string) setting {
	return local(app.String(p, fl, env, def, usage))
}

func boolean(p *bool, fl, env, def, usage string) setting {
	return local(app.Bool(p, fl, env, def, usage))
}

// orDefault parses an optional boolean.
func orDefault(v string, def bool) (bool, error) {
	if v == "" {
		return def, nil
	}
	return strconv.ParseBool(v)
}

func duration(p *time.Duration, fl, env, def, usage string) setting {
	return local(app.Duration(p, fl, env, def, usage))
}

func integer(p *int, fl, env, def, usage string) setting {
	return local(app.Int(p, fl, env, def, usage))
}

func integer64(p *int64, fl, env, def, usage string) setting {
	return local(app.Int64(p, fl, env, def, usage))
}

func list(p *[]string, fl, env, def, usage string) setting {
	return local(app.List(p, fl, env, def, usage))
}
