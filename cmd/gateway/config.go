package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/socialgw/gateway/cmd/internal/app"
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/demo"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/httpapi"
	"github.com/socialgw/gateway/internal/live"
	"github.com/socialgw/gateway/internal/moderation"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/tracing"
)

// Config is the whole configuration of the gateway, parsed once here from
// flags with environment-variable fallbacks. No other package reads the
// environment.
type Config struct {
	app.Common // Redis, logging, shutdown: shared with cmd/worker

	ListenAddr string
	// MetricsAddr is the operators' listener of /metrics ("" in
	// development: /metrics on ListenAddr; in production: none).
	MetricsAddr string

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
	// Moderators are the user names allowed to read and resolve reports.
	Moderators []string

	MaxBodyBytes        int64
	MaxBodyMemory       int64
	MinBodyRate         int64
	RequestTimeout      time.Duration
	PasswordConcurrency int

	// Abuse are the rate limits, trusted proxies, refresh grace window and
	// persisted-query cache bounds.
	Abuse gateway.Abuse
	// Limits bound each GraphQL document and response (docs/security.md).
	Limits        gqlguard.Limits
	MaxConcurrent int
	QueueWait     time.Duration
	// LiveMaxPerUser and LiveMaxSubscriptions bound the live
	// subscriptions open in the process, per user and in all.
	LiveMaxPerUser       int
	LiveMaxSubscriptions int
	// ProfileCache keeps users' profiles in the process (REDIS_CLIENT_CACHE).
	ProfileCache redisstore.ProfileCache
	// PostCache is how many posts' fixed fields the process keeps
	// (REDIS_POST_CACHE).
	PostCache int
	// Sockets bound websockets: how many, per address, how long idle.
	Sockets httpapi.SocketLimits

	// Feed is the timeline and fan-out configuration, shared with
	// cmd/worker; FanoutWorker runs a fan-out worker inside the gateway.
	Feed         app.Feed
	FanoutWorker bool

	// Mail is how account e-mails are sent (shared with cmd/worker);
	// RequireVerifiedEmail refuses posting until an account's address is
	// confirmed.
	Mail                 app.Mail
	RequireVerifiedEmail bool

	// Media is where posts' files are kept; MediaSigningKey signs the
	// addresses of restricted posts' files, valid for MediaURLTTL;
	// MediaBaseURL goes before their path. Uploads bound multipart
	// requests.
	Media           app.Media
	MediaSigningKey string
	MediaURLTTL     time.Duration
	MediaBaseURL    string
	Uploads         httpapi.Uploads

	// Demo fills an empty database with the demo network at start-up;
	// SPADir is a directory served at /app/ (the reference app's build).
	Demo   bool
	SPADir string

	// Tracing exports spans of requests, operations and Redis flights
	// when its Endpoint is set (internal/tracing).
	Tracing tracing.Config
	// TrustedDocuments is the manifest of the only documents that run
	// ("": any document).
	TrustedDocuments string

	// graphiql and introspection are "", "true" or "false" as given;
	// finish resolves them against Production.
	graphiql, introspection string
}

func (c *Config) settings() []app.Setting {
	shared := append(c.Common.Settings("redis:// or rediss:// URL; empty starts an embedded in-memory Redis (data is lost on exit)"), c.Feed.Settings()...)
	shared = append(shared, app.Bool(&c.FanoutWorker, "fanout-worker", "FANOUT_WORKER", "true", "run a fan-out worker inside the gateway (cmd/worker runs more)"))
	shared = append(shared, c.Mail.Settings()...)
	shared = append(shared, app.Bool(&c.RequireVerifiedEmail, "require-verified-email", "REQUIRE_VERIFIED_EMAIL", "false", "refuse posts and comments from accounts whose e-mail address is not confirmed yet"))
	def := gqlguard.DefaultLimits(gqlguard.DefaultCost)
	own := []app.Setting{
		app.String(&c.ListenAddr, "listen", "LISTEN_ADDR", ":8080", "address to listen on (127.0.0.1:0 picks a free port)"),
		app.String(&c.MetricsAddr, "metrics-addr", "METRICS_ADDR", "", "a separate address serving /metrics only (for operators: keep it off the public network); empty: /metrics on LISTEN_ADDR, and nowhere with PRODUCTION=true"),
		app.String(&c.JWTMethod, "jwt-method", "JWT_METHOD", "HS256", "access-token signature: HS256 (JWT_SECRET), EdDSA or RS256 (key files)"),
		app.String(&c.JWTSecret, "jwt-secret", "JWT_SECRET", "", "HS256 secret, at least 32 random-looking bytes (openssl rand -hex 32); required with PRODUCTION=true; empty in development: one per process (tokens die on restart)"),
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
		app.List(&c.Moderators, "moderators", "MODERATORS", "", "comma-separated user names allowed to read and resolve reports"),
		app.Int64(&c.MaxBodyBytes, "max-body-bytes", "MAX_BODY_BYTES", "1048576", "largest request body; larger ones get 413"),
		app.Int64(&c.MaxBodyMemory, "max-body-memory", "MAX_BODY_MEMORY", "67108864", "bytes of JSON request bodies being read at once, all requests together (each counts what it has sent), one client address at most an eighth (at least MAX_BODY_BYTES); past it a request gets 503 with Retry-After, past an address's share 429"),
		app.Int64(&c.MinBodyRate, "min-body-rate", "MIN_BODY_RATE", "4096", "least rate, in bytes a second over each 5 s, at which a POST body must arrive; a slower one is cut with 408; 0 disables"),
		app.Duration(&c.RequestTimeout, "request-timeout", "REQUEST_TIMEOUT", "10s", "longest a query or mutation may take (subscriptions are not bound); 0 disables"),
		app.Int(&c.Limits.Cost, "complexity-limit", "COMPLEXITY_LIMIT", itoa(def.Cost), "largest query cost: one per field, a list's selections once per item of its page; 0 disables"),
		app.Int(&c.Limits.Tokens, "max-tokens", "MAX_TOKENS", itoa(def.Tokens), "most lexer tokens in a document (names, punctuation, values); 0 disables"),
		app.Int(&c.Limits.Fields, "max-fields", "MAX_FIELDS", itoa(def.Fields), "most field selections in a document, fragments expanded; 0 disables"),
		app.Int(&c.Limits.Depth, "max-depth", "MAX_DEPTH", itoa(def.Depth), "deepest nesting of fields in a document; 0 disables"),
		app.Int(&c.Limits.Aliases, "max-aliases", "MAX_ALIASES", itoa(def.Aliases), "most aliased fields in a document, fragments expanded; 0 disables"),
		app.Int(&c.Limits.Directives, "max-directives", "MAX_DIRECTIVES", itoa(def.Directives), "most directives in a document, fragments expanded; 0 disables"),
		app.Int(&c.Limits.ResponseBytes, "max-response-bytes", "MAX_RESPONSE_BYTES", itoa(def.ResponseBytes), "largest response: documents whose response could exceed it are refused, responses that do are stopped; 0 disables"),
		app.Int(&c.MaxConcurrent, "max-concurrent-requests", "MAX_CONCURRENT_REQUESTS", "32", "queries and mutations executing at once; more wait up to QUEUE_WAIT, then get 503; 0 disables"),
		app.Duration(&c.QueueWait, "queue-wait", "QUEUE_WAIT", "500ms", "how long a request waits for an execution slot before 503"),
		app.Int(&c.ProfileCache.Size, "redis-client-cache", "REDIS_CLIENT_CACHE", itoa(redisstore.DefaultProfileCache.Size), "users' profiles kept in this process, fresh by Redis's invalidations (client-side caching; docs/performance.md, \"Profile cache\"); 0 turns the cache off"),
		app.Int(&c.PostCache, "redis-post-cache", "REDIS_POST_CACHE", itoa(redisstore.DefaultPostCache), "posts whose fixed fields (author, content, audience kind, media…) this process keeps; their counters, comments and existence are read from Redis for every page (docs/performance.md, \"Post cache\"); 0 turns the cache off"),
		app.Duration(&c.ProfileCache.MaxAge, "redis-client-cache-max-age", "REDIS_CLIENT_CACHE_MAX_AGE", "1m", "longest a cached profile is served after it was read, whatever Redis announces"),
		app.Int(&c.LiveMaxPerUser, "live-max-per-user", "LIVE_MAX_PER_USER", itoa(live.DefaultMaxPerViewer), "live subscriptions one user may hold open on this process; one more is refused (RATE_LIMITED)"),
		app.Int(&c.LiveMaxSubscriptions, "live-max-subscriptions", "LIVE_MAX_SUBSCRIPTIONS", itoa(live.DefaultMaxStreams), "live subscriptions this process holds open in all (about 61 KB each when idle); one more is refused (RATE_LIMITED)"),
		app.Int(&c.Sockets.Max, "ws-max-connections", "WS_MAX_CONNECTIONS", "20000", "websockets this process holds open (fewer when the open-file limit leaves less room); one more upgrade gets 503"),
		app.Int(&c.Sockets.MaxPerAddress, "ws-max-per-address", "WS_MAX_PER_ADDRESS", "64", "websockets open from one client address; one more upgrade gets 429"),
		app.Duration(&c.Sockets.Idle, "ws-idle-timeout", "WS_IDLE_TIMEOUT", "5m", "a websocket with no operation running and none started for this long is closed; 0 keeps them"),
		app.Int(&c.PasswordConcurrency, "password-concurrency", "PASSWORD_CONCURRENCY", "4", "argon2id hashes run at once (19 MiB each)"),
		app.Bool(&c.Demo, "demo", "DEMO", "false", fmt.Sprintf("fill an empty database with a demo network and log two ready sessions (CELEBRITY_THRESHOLD defaults to %d)", demo.DefaultCelebrityThreshold)),
		app.String(&c.SPADir, "spa-dir", "SPA_DIR", "", "directory served at /app/, for developing a single-page app on the gateway's origin (examples/spa/dist)"),
		app.String(&c.TrustedDocuments, "trusted-documents", "TRUSTED_DOCUMENTS", "", "a persisted-query manifest (Apollo's format, or an object of SHA-256 to document): only its documents run, sent whole or by hash; others are refused (FORBIDDEN, or PERSISTED_QUERY_NOT_FOUND for an unknown hash); empty: any document"),
		app.String(&c.Tracing.Endpoint, "trace-endpoint", "TRACE_ENDPOINT", "", "OTLP/HTTP collector URL (http://collector:4318) to export OpenTelemetry spans of requests, GraphQL operations and Redis flights to; empty: no tracing"),
		{Flag: "trace-sample-ratio", Env: "TRACE_SAMPLE_RATIO", Def: "0.01", Usage: "share of requests traced, 0 to 1, when TRACE_ENDPOINT is set (a traceparent sent through TRUSTED_PROXIES decides for its requests; other clients' is ignored)",
			Set: func(v string) (err error) { c.Tracing.Ratio, err = strconv.ParseFloat(v, 64); return err }},
	}
	own = append(own, c.mediaSettings()...)
	own = append(own, c.abuseSettings()...)
	return append(own, shared...)
}

// mediaSettings are the settings of posts' files (README.md, "Media").
func (c *Config) mediaSettings() []app.Setting {
	return append(c.Media.Settings(),
		app.String(&c.MediaSigningKey, "media-signing-key", "MEDIA_SIGNING_KEY", "", "secret (at least 32 random-looking bytes) signing the addresses of restricted posts' media files, and from which the key sealing page cursors is derived; required with PRODUCTION=true; empty: random per process"),
		app.Duration(&c.MediaURLTTL, "media-url-ttl", "MEDIA_URL_TTL", "15m", "how long a signed media address (a restricted post's file) holds; whoever holds one may fetch the file until then"),
		app.String(&c.MediaBaseURL, "media-base-url", "MEDIA_BASE_URL", "", "put before /media/… in media addresses (e.g. https://api.example.com); empty: addresses relative to the gateway"),
		app.Int64(&c.Uploads.MaxFileBytes, "media-max-file-bytes", "MEDIA_MAX_FILE_BYTES", "10485760", "largest uploaded file; larger ones get 413"),
		app.Int(&c.Uploads.MaxFiles, "media-max-files", "MEDIA_MAX_FILES", "4", "most files attached to one post (and sent in one request)"),
		app.Int64(&c.Uploads.MaxRequestBytes, "media-max-request-bytes", "MEDIA_MAX_REQUEST_BYTES", "42991616", "largest multipart request body, files included; larger ones get 413"),
		app.String(&c.Uploads.TempDir, "media-temp-dir", "MEDIA_TEMP_DIR", "", "directory holding uploads while their request runs (empty: the system's)"),
	)
}

// abuseSettings are the settings of the abuse controls (docs/security.md).
func (c *Config) abuseSettings() []app.Setting {
	c.Abuse.RateLimits = map[string]ratelimit.Limit{}
	def := gateway.DefaultRateLimits()
	limit := func(rule, env, usage string) app.Setting {
		return app.Setting{
			Flag: "rate-limit-" + strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(env, "RATE_LIMIT_"), "_", "-")),
			Env:  env, Def: def[rule].String(), Usage: usage + ` ("N/duration", e.g. 10/1m, or off)`,
			Set: func(v string) error {
				l, err := ratelimit.ParseLimit(v)
				c.Abuse.RateLimits[rule] = l
				return err
			},
		}
	}
	return []app.Setting{
		limit(ratelimit.RuleRequestIP, "RATE_LIMIT_IP", "requests to /query per client address; over it the whole request gets 429"),
		limit(ratelimit.RuleMutationUser, "RATE_LIMIT_MUTATIONS", "root mutation fields per user (per address when anonymous); aliases count one each"),
		limit(ratelimit.RuleUploadUser, "RATE_LIMIT_UPLOAD", "media files a user may attach to posts (one event per file)"),
		limit(ratelimit.RuleRedisWork, "RATE_LIMIT_REDIS", "units of Redis work (a command, or a candidate read past a page's first read) per client address and per user, past the first 250 of each operation; when spent, operations get RATE_LIMITED until it has room"),
		limit(ratelimit.RuleAPQIP, "RATE_LIMIT_APQ", "persisted queries a client address may register (stored only once they pass the limits and validation); past it they run but are not kept"),
		limit(auth.RuleLoginIP, "RATE_LIMIT_LOGIN_IP", "login attempts per client address"),
		limit(auth.RuleLoginAccount, "RATE_LIMIT_LOGIN_ACCOUNT", "login attempts per login as typed (a name and an e-mail address each have their own budget)"),
		limit(auth.RuleRegisterIP, "RATE_LIMIT_REGISTER_IP", "registrations per client address"),
		limit(auth.RuleRegisterName, "RATE_LIMIT_REGISTER_NAME", "registration attempts per user name"),
		limit(auth.RuleResetIP, "RATE_LIMIT_RESET_IP", "password-reset requests and resetPassword attempts per client address"),
		limit(auth.RuleResetAddress, "RATE_LIMIT_RESET_ADDRESS", "password-reset requests per address asked for, whether an account has it or not"),
		limit(auth.RuleMailUser, "RATE_LIMIT_MAIL_USER", "e-mails an account asks to be sent (changeEmail, resendVerification)"),
		limit(auth.RulePasswordUser, "RATE_LIMIT_PASSWORD_USER", "password checks of a signed-in account (changePassword, changeEmail, deleteAccount)"),
		limit(moderation.RuleReport, "RATE_LIMIT_REPORT", "reports a user may file (besides at most 20 open at once)"),
		{Flag: "trusted-proxies", Env: "TRUSTED_PROXIES", Def: "", Usage: "comma-separated proxy addresses or CIDRs whose X-Forwarded-For names the client address",
			Set: func(v string) (err error) { c.Abuse.TrustedProxies, err = ratelimit.ParseProxies(v); return err }},
		app.Duration(&c.Abuse.RefreshGrace, "refresh-grace", "REFRESH_GRACE", "15s", "how long a rotated refresh token still yields the same successor (two tabs, retries) before reuse revokes the session"),
		app.Duration(&c.Abuse.APQ.TTL, "apq-ttl", "APQ_TTL", "24h", "lifetime of a persisted query in the Redis cache"),
		app.Int(&c.Abuse.APQ.MaxEntries, "apq-max-entries", "APQ_MAX_ENTRIES", "10000", "persisted queries kept in Redis (oldest evicted first); 0: a 1000-entry cache per process"),
		app.Int(&c.Abuse.APQ.MaxQueryBytes, "apq-max-query-bytes", "APQ_MAX_QUERY_BYTES", "16384", "longest document cached as a persisted query (longer ones run but are not cached)"),
	}
}

// parseConfig reads flags, falling back to the environment, then to the
// defaults. --help prints every setting with its variable and default.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*Config, error) {
	c := &Config{}
	explicit, err := app.Parse("gateway", c.settings(), args, getenv, out)
	if err != nil {
		return nil, err
	}
	return c, c.finish(explicit)
}

// finish applies defaults that depend on other settings and checks them.
// explicit holds the variables given by the environment or a flag. Every
// setting found wrong is named in the one error returned, so that an
// operator mends them all at once rather than one per attempt.
func (c *Config) finish(explicit map[string]bool) error {
	c.Feed.ExplicitThreshold = explicit["CELEBRITY_THRESHOLD"]
	if c.Demo && !explicit["CELEBRITY_THRESHOLD"] {
		// The demo network is small: its most followed author is
		// pulled in hybrid mode only below the usual threshold.
		c.Feed.Store.CelebrityThreshold = demo.DefaultCelebrityThreshold
	}
	if c.Production && !explicit["LOG_FORMAT"] {
		c.LogFormat = "json"
	}
	var errs []error
	var err error
	if c.GraphiQL, err = orDefault(c.graphiql, !c.Production); err != nil {
		errs = append(errs, fmt.Errorf("graphiql: %w", err))
	}
	if c.Introspection, err = orDefault(c.introspection, !c.Production); err != nil {
		errs = append(errs, fmt.Errorf("introspection: %w", err))
	}
	errs = append(errs, c.boundProblems()...)
	errs = append(errs, c.secretProblems()...)
	if c.Production {
		errs = append(errs, c.productionProblems()...)
	}
	c.Sockets.Max = fdBound(c.Sockets.Max)
	// Development starts at once, whatever Redis does; production waits
	// a bounded time and fails (app.DefaultRedisWait).
	errs = append(errs, c.Common.Check(map[bool]time.Duration{true: app.DefaultRedisWait}[c.Production]))
	errs = append(errs, c.Feed.Finish())
	errs = append(errs, c.Mail.Check())
	return errors.Join(errs...)
}

// boundProblems are the settings out of their range.
func (c *Config) boundProblems() []error {
	var errs []error
	for _, p := range []struct {
		bad bool
		msg string
	}{
		{c.AccessTokenTTL <= 0 || c.RefreshTokenTTL <= 0, "token lifetimes must be positive"},
		{c.MaxBodyMemory < c.MaxBodyBytes, "MAX_BODY_MEMORY must be at least MAX_BODY_BYTES"},
		{c.MaxBodyBytes <= 0, "max body bytes must be positive"},
		{c.MinBodyRate < 0, "MIN_BODY_RATE must not be negative"},
		{c.PasswordConcurrency < 1, "password concurrency must be at least 1"},
		{c.Abuse.RefreshGrace < 0 || c.Abuse.RefreshGrace > time.Minute, "refresh grace must be between 0 and 1m: a longer window gives a stolen token more time"},
		{c.Abuse.APQ.MaxEntries < 0 || c.Abuse.APQ.MaxQueryBytes < 0 || c.Abuse.APQ.TTL < 0, "persisted-query cache bounds must not be negative"},
		{min(c.Limits.Tokens, c.Limits.Fields, c.Limits.Depth, c.Limits.Aliases, c.Limits.Directives, c.Limits.Cost, c.Limits.ResponseBytes) < 0, "document limits must be positive, or 0 to disable"},
		{c.MaxConcurrent < 0 || c.QueueWait < 0, "max concurrent requests and queue wait must not be negative"},
		{c.LiveMaxPerUser < 1 || c.LiveMaxSubscriptions < 1, "live subscription bounds must be at least 1"},
		{c.Sockets.Max < 1 || c.Sockets.MaxPerAddress < 1 || c.Sockets.Idle < 0, "websocket bounds must be at least 1, and the idle timeout not negative"},
		{c.Uploads.MaxFileBytes < 1 || c.Uploads.MaxFiles < 1 || c.Uploads.MaxRequestBytes < c.Uploads.MaxFileBytes || c.MediaURLTTL <= 0, "media bounds must be positive, the request bound at least one file's"},
		{c.Tracing.Ratio < 0 || c.Tracing.Ratio > 1 || math.IsNaN(c.Tracing.Ratio), "TRACE_SAMPLE_RATIO must be between 0 and 1"},
	} {
		if p.bad {
			errs = append(errs, errors.New(p.msg))
		}
	}
	if c.SPADir != "" {
		if fi, err := os.Stat(c.SPADir); err != nil || !fi.IsDir() {
			errs = append(errs, fmt.Errorf("SPA_DIR %q is not a directory (build the app first: cd examples/spa && npm ci && npm run build)", c.SPADir))
		}
	}
	return errs
}

// secretProblems are the secrets given that are unfit to sign with, in
// any mode.
func (c *Config) secretProblems() []error {
	var errs []error
	for _, s := range []struct{ name, value string }{{"JWT_SECRET", c.JWTSecret}, {"MEDIA_SIGNING_KEY", c.MediaSigningKey}} {
		if s.value == "" {
			continue
		}
		if why := weakSecret(s.name, s.value); why != "" {
			errs = append(errs, fmt.Errorf("%s (%s)", why, secretAdvice))
		}
	}
	return errs
}

// productionProblems are what PRODUCTION=true requires and is missing.
func (c *Config) productionProblems() []error {
	var errs []error
	for _, p := range []struct {
		bad bool
		msg string
	}{
		{c.Demo, "--demo is for development: it writes users with a published password; not with PRODUCTION=true"},
		{c.RedisURL == "", "PRODUCTION=true needs REDIS_URL: the embedded in-memory Redis loses every account and post when the process stops"},
		{c.JWTMethod == "HS256" && c.JWTSecret == "", "PRODUCTION=true needs JWT_SECRET (or JWT_METHOD=EdDSA or RS256 with key files): with a secret per process, every token dies at a restart and gateways refuse each other's tokens (" + secretAdvice + ")"},
		{c.MediaSigningKey == "", "PRODUCTION=true needs MEDIA_SIGNING_KEY: with a key per process, gateways do not accept each other's media addresses or page cursors (" + secretAdvice + ")"},
		{!c.Media.Configured(), "PRODUCTION=true needs MEDIA_URL or MEDIA_DIR: media files must outlive the process"},
		{c.Mail.SMTPURL == "", "PRODUCTION=true needs SMTP_URL: account e-mails (address confirmations, password resets) must reach their users, not files on the server"},
	} {
		if p.bad {
			errs = append(errs, errors.New(p.msg))
		}
	}
	return errs
}

func itoa(n int) string { return strconv.Itoa(n) }

// fdHeadroom are the file descriptors kept for everything but websockets:
// HTTP requests, Redis connections, /healthz, logs.
const fdHeadroom = 512

// fdBound lowers a websocket bound to what the process's open-file limit
// leaves after fdHeadroom (at least 16), so that sockets alone can never
// take the descriptors an accept or a Redis reconnect needs.
func fdBound(n int) int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur > math.MaxInt32 {
		return n
	}
	return min(n, max(16, int(lim.Cur)-fdHeadroom))
}

// orDefault parses an optional boolean.
func orDefault(v string, def bool) (bool, error) {
	if v == "" {
		return def, nil
	}
	return strconv.ParseBool(v)
}
