package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Config is the whole configuration of the gateway, parsed once here from
// flags with environment-variable fallbacks. No other package reads the
// environment.
type Config struct {
	ListenAddr   string
	RedisURL     string
	RedisCluster bool
	RedisPrefix  string

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
	ComplexityLimit     int
	PasswordConcurrency int
	ShutdownTimeout     time.Duration
	LogFormat           string
	LogLevel            string

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
	return []setting{
		str(&c.ListenAddr, "listen", "LISTEN_ADDR", ":8080", "address to listen on (127.0.0.1:0 picks a free port)"),
		str(&c.RedisURL, "redis-url", "REDIS_URL", "", "redis:// or rediss:// URL; empty starts an embedded in-memory Redis (data is lost on exit)"),
		boolean(&c.RedisCluster, "redis-cluster", "REDIS_CLUSTER", "false", "REDIS_URL names a Redis Cluster (redis://host1:port1?addr=host2:port2)"),
		str(&c.RedisPrefix, "redis-prefix", "REDIS_PREFIX", "sg:", "prefix of every Redis key"),
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
		integer(&c.ComplexityLimit, "complexity-limit", "COMPLEXITY_LIMIT", "20000", "largest query cost (lists count as their page size); 0 disables"),
		integer(&c.PasswordConcurrency, "password-concurrency", "PASSWORD_CONCURRENCY", "4", "argon2id hashes run at once (19 MiB each)"),
		duration(&c.ShutdownTimeout, "shutdown-timeout", "SHUTDOWN_TIMEOUT", "15s", "how long in-flight requests may finish after SIGINT/SIGTERM"),
		str(&c.LogFormat, "log-format", "LOG_FORMAT", "text", "text or json"),
		str(&c.LogLevel, "log-level", "LOG_LEVEL", "info", "debug, info, warn or error"),
	}
}

// parseConfig reads flags, falling back to the environment, then to the
// defaults. --help prints every setting with its variable and default.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*Config, error) {
	c := &Config{}
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(out)
	settings := c.settings()
	for _, s := range settings {
		s := s
		fs.Func(s.flag, fmt.Sprintf("%s (env %s, default %q)", s.usage, s.env, s.def), s.set)
	}
	fs.Usage = func() {
		fmt.Fprintln(out, "Usage: gateway [flags]\n\nEvery flag can also be set by the environment variable named with it; a flag wins over the variable.\n\nFlags:")
		fs.PrintDefaults()
	}
	// Defaults first, then the environment, then the flags.
	for _, s := range settings {
		if err := s.set(s.def); err != nil {
			return nil, fmt.Errorf("default of --%s: %w", s.flag, err)
		}
		if v := getenv(s.env); v != "" {
			if err := s.set(v); err != nil {
				return nil, fmt.Errorf("%s: %w", s.env, err)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
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
	case c.LogFormat != "text" && c.LogFormat != "json":
		return fmt.Errorf("log format %q: want text or json", c.LogFormat)
	}
	return nil
}

func str(p *string, fl, env, def, usage string) setting {
	return setting{fl, env, def, usage, func(v string) error { *p = v; return nil }}
}

func boolean(p *bool, fl, env, def, usage string) setting {
	return setting{fl, env, def, usage, func(v string) error {
		b, err := strconv.ParseBool(v)
		*p = b
		return err
	}}
}

// orDefault parses an optional boolean.
func orDefault(v string, def bool) (bool, error) {
	if v == "" {
		return def, nil
	}
	return strconv.ParseBool(v)
}

func duration(p *time.Duration, fl, env, def, usage string) setting {
	return setting{fl, env, def, usage, func(v string) error {
		d, err := time.ParseDuration(v)
		*p = d
		return err
	}}
}

func integer(p *int, fl, env, def, usage string) setting {
	return setting{fl, env, def, usage, func(v string) error {
		n, err := strconv.Atoi(v)
		*p = n
		return err
	}}
}

func integer64(p *int64, fl, env, def, usage string) setting {
	return setting{fl, env, def, usage, func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		*p = n
		return err
	}}
}

func list(p *[]string, fl, env, def, usage string) setting {
	return setting{fl, env, def, usage, func(v string) error {
		*p = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*p = append(*p, s)
			}
		}
		return nil
	}}
}
