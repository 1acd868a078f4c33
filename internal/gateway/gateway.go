// Package gateway wires the application: the Redis store, the auth service,
// the GraphQL resolvers and handler, and the HTTP mux of the contract. It
// is the one place that assembles them; cmd/gateway, cmd/bench and the
// end-to-end tests (gatewaytest) all build the gateway through New, so
// what they run is what production runs.
package gateway

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/cors"
	"go.opentelemetry.io/otel/trace"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/export"
	"github.com/socialgw/gateway/internal/httpapi"
	"github.com/socialgw/gateway/internal/live"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/mediastore"
	"github.com/socialgw/gateway/internal/moderation"
	"github.com/socialgw/gateway/internal/operation"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
	"github.com/socialgw/gateway/internal/tracing"
	"github.com/socialgw/gateway/internal/trusted"
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
	GraphQL QueryOptions
	// GraphiQL serves the IDE at /.
	GraphiQL bool
	// MetricsElsewhere leaves /metrics out of Handler: it is served on
	// an operator's listener of its own (MetricsHandler).
	MetricsElsewhere bool
	// CORSOrigins may call the API from a browser and open websockets.
	CORSOrigins []string
	// Abuse are the rate limits, the refresh grace window and the
	// persisted-query cache (docs/security.md).
	Abuse Abuse
	// SPADir, when set, is a directory served at /app/: a single-page
	// app's build, on the API's origin so that it needs no CORS.
	SPADir string
	// Live tunes live timelines (subscriptions).
	Live LiveConfig
	// Media configures posts' files.
	Media MediaConfig
	// Tracer, when set, traces requests, operations and Redis flights
	// (internal/tracing); nil: no tracing, and no cost.
	Tracer trace.TracerProvider
	// ProfileCache keeps users' profiles in the process, kept fresh by
	// Redis's invalidations (the zero value: off).
	ProfileCache redisstore.ProfileCache
	// PostCache is how many posts' fixed fields the process keeps (0:
	// none; redisstore.DB.CachePosts).
	PostCache int
	// Trusted, when set, are the only documents that run (sent whole or
	// by hash); they are also the persisted-query cache, instead of
	// Redis's.
	Trusted *trusted.Documents
	// Accounts tunes the account e-mail flows.
	Accounts AccountConfig
	// Moderation names the moderators and bounds reports.
	Moderation ModerationConfig
}

// ModerationConfig names the moderators and bounds reports
// (internal/moderation).
type ModerationConfig struct {
	// Moderators are the user names allowed to read and resolve reports
	// (MODERATORS); none: no one.
	Moderators []string
	// MaxOpenPerReporter bounds each reporter's open reports
	// (moderation.DefaultMaxOpen when 0).
	MaxOpenPerReporter int
	// Log receives one line per moderator action (nil: slog's default).
	Log *slog.Logger
}

// NewModeration returns the moderation service over store: the
// gateway's, and the operators' commands' (cmd/gateway unsuspend).
// budget spends the report rate limit (nil: none).
func NewModeration(store *redisstore.Store, budget moderation.Budget, cfg ModerationConfig) *moderation.Service {
	return &moderation.Service{Store: store.ModerationService, Users: store.AccountService,
		Posts: store.PostService, Comments: store.EngagementService, Sessions: store.SessionService,
		Search: store.UserSearchService, Budget: budget, Moderators: cfg.Moderators,
		MaxOpen: cfg.MaxOpenPerReporter, Log: cfg.Log}
}

// AccountConfig tunes the account e-mail flows (internal/auth, mail.go).
type AccountConfig struct {
	// ResetTokenTTL is how long a password-reset token works
	// (auth.DefaultResetTTL when 0).
	ResetTokenTTL time.Duration
	// RequireVerifiedEmail refuses posting until the account's address
	// is confirmed.
	RequireVerifiedEmail bool
}

// MediaConfig configures posts' files: where they are kept and how their
// addresses are signed. The upload bounds are GraphQL.Uploads.
type MediaConfig struct {
	// Files stores them; nil: the gateway takes no uploads.
	Files *mediastore.Store
	// SigningKey signs the addresses of restricted posts' files, and the
	// key that seals page cursors is derived from it (social.SetCursorKey:
	// process-wide); empty: a random key per process for both (addresses
	// and cursors die on restart, and gateways behind one balancer do not
	// accept each other's).
	SigningKey []byte
	// URLTTL is how long a signed address holds (15 minutes when 0).
	URLTTL time.Duration
	// BaseURL is put before /media/… in addresses ("": relative), and
	// before /exports/… in data exports' addresses.
	BaseURL string
	// Exports bounds data exports (redisstore.DefaultExports when zero);
	// their archives are kept in Files (none without it).
	Exports redisstore.ExportConfig
}

// Abuse configures the abuse controls.
type Abuse struct {
	// RateLimits are the budgets by rule (ratelimit.Rule…, auth.Rule…);
	// a missing or zero rule is unlimited.
	RateLimits map[string]ratelimit.Limit
	// TrustedProxies may name the client address in X-Forwarded-For.
	TrustedProxies []netip.Prefix
	// RefreshGrace is how long a rotated refresh token still yields its
	// successor.
	RefreshGrace time.Duration
	// APQ bounds the persisted-query cache in Redis.
	APQ redisstore.APQConfig
}

// DefaultRateLimits are the budgets of a gateway left at its defaults.
func DefaultRateLimits() map[string]ratelimit.Limit {
	return map[string]ratelimit.Limit{
		ratelimit.RuleRequestIP:    {Count: 600, Per: time.Minute},
		ratelimit.RuleMutationUser: {Count: 60, Per: time.Minute},
		ratelimit.RuleAPQIP:        {Count: 100, Per: time.Hour},
		auth.RuleLoginIP:           {Count: 20, Per: time.Minute},
		auth.RuleLoginAccount:      {Count: 10, Per: 15 * time.Minute},
		auth.RuleRegisterIP:        {Count: 10, Per: time.Hour},
		auth.RuleRegisterName:      {Count: 5, Per: 15 * time.Minute},
		auth.RuleResetIP:           {Count: 10, Per: time.Hour},
		auth.RuleResetAddress:      {Count: 3, Per: time.Hour},
		auth.RuleMailUser:          {Count: 5, Per: time.Hour},
		auth.RulePasswordUser:      {Count: 10, Per: 15 * time.Minute},
		moderation.RuleReport:      {Count: 10, Per: time.Hour},
		ratelimit.RuleUploadUser:   {Count: 100, Per: time.Hour},
		ratelimit.RuleRedisWork:    {Count: 300_000, Per: time.Minute},
	}
}

// LiveConfig tunes live timelines.
type LiveConfig struct {
	// Off leaves them out (a process that only writes, as a test's).
	Off bool
	// Classic uses classic pub/sub (PUBLISH, SUBSCRIBE) instead of sharded
	// pub/sub: for the embedded development Redis, which has no sharded
	// pub/sub; one server only.
	Classic bool
	// Hub tunes the process's pub/sub hub.
	Hub live.HubConfig
	// RecheckAuth is how often an open subscription checks that its token
	// was not revoked (0: the default, 30s).
	RecheckAuth time.Duration
	// MaxPerUser and MaxSubscriptions bound the subscriptions open in the
	// process, per user and in all (0: live.DefaultMaxPerViewer,
	// live.DefaultMaxStreams).
	MaxPerUser, MaxSubscriptions int
	// Log receives the hub's warnings (nil: slog's default).
	Log *slog.Logger
}

// Gateway is the wired application.
type Gateway struct {
	// Store holds every service of the Redis store over one DB; each
	// consumer below was given the one service it needs.
	Store    *redisstore.Store
	Auth     *auth.Service
	Resolver *graph.Resolver
	// Hub is the process's live-timeline pub/sub hub (nil when off).
	Hub *live.Hub
	// Query is the /query handler.
	Query http.Handler
	// Media serves posts' files at httpapi.MediaPath, at the addresses
	// MediaAddresses makes for the resolvers.
	Media          http.Handler
	MediaAddresses *httpapi.MediaAddresses
	// Exports keeps data exports and their queue (nil without Files);
	// ExportFiles serves their archives at httpapi.ExportPath.
	Exports     *redisstore.ExportService
	ExportFiles http.Handler
	// Limiter spends the rate-limit budgets.
	Limiter *ratelimit.Limiter
	// Mail keeps e-mail tokens and the mail queue, which the workers
	// read (auth.Mailer).
	Mail *redisstore.MailService
	// Fast counts the pages Query's timeline fast path served and handed
	// to the ordinary path (exported by Handler as metrics).
	Fast *readpath.FastStats

	cfg  Config
	cors *cors.Cors
	// stopCache ends the profile cache's tracking.
	stopCache func()
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
	g := &Gateway{Store: store, cfg: cfg, cors: newCORS(cfg.CORSOrigins)}
	g.stopCache = store.CacheProfiles(cfg.ProfileCache)
	store.CachePosts(cfg.PostCache)
	g.Limiter = ratelimit.New(rdb, store.Keys().RateLimit, cfg.Abuse.RateLimits)
	// Operations' Redis commands count against their client's Redis-work
	// budget (ratelimit.RuleRedisWork).
	operation.MeterRedis(rdb)
	g.Auth = g.newAuth(tokens)
	g.Resolver = &graph.Resolver{
		Accounts:   g.Auth,
		Profiles:   store.AccountService,
		Graph:      store.GraphService,
		Posts:      postsAndPages{store.PostService, store.TimelineService},
		Engagement: store.EngagementService,
		Notes:      store.NotificationService,
		Curation:   store.CurationService,
		Filters:    store.FilterService,
		Discovery:  discovery{store.TagService, store.TrendService, store.UserSearchService},
		Edits:      store.EditService, Replies: store.ReplyService,
		Moderation: NewModeration(store, g.Limiter, cfg.Moderation),
	}
	g.MediaAddresses = newMediaAddresses(cfg)
	g.Resolver.Attachments = &graph.Attachments{MaxFiles: cfg.GraphQL.Uploads.WithDefaults().MaxFiles,
		URLs: g.MediaAddresses, Budget: g.Limiter,
		// Half the cores save files; the others serve the rest.
		Saving: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))}
	var files httpapi.MediaFiles // nil: none served
	if len(cfg.Media.SigningKey) > 0 {
		// Every gateway seals cursors under a key derived from the one
		// server key they share; without it, the process's own key.
		social.SetCursorKey(cfg.Media.SigningKey)
	}
	if cfg.Media.Files != nil {
		files = cfg.Media.Files
		g.Resolver.Attachments.Files = cfg.Media.Files
		// Keys name the post a file is stored for, for the media sweep.
		cfg.Media.Files.Stamp = mediastore.ViewerStamp(store.PostSeqNow)
		// A deleted post's files go with its fan-out delete job.
		store.SetFiles(cfg.Media.Files)
	}
	g.wireExports(store, cfg)
	// /media/ spends the address's request budget as /query does.
	media := g.wireProfiles(store, cfg.Media.Files, g.MediaAddresses.Handler(files, store.PostService, g.Auth))
	g.Media = httpapi.ClientBudget(g.Limiter, cfg.Abuse.TrustedProxies, ratelimit.NewTarpit())(media)
	if !cfg.Live.Off {
		g.startLive(rdb, store)
	}
	g.Fast = readpath.NewFastStats()
	opts := cfg.GraphQL
	if cfg.Tracer != nil {
		tracing.Instrument(rdb, cfg.Tracer)
		opts.Extensions = append(opts.Extensions, tracing.NewOperations(cfg.Tracer))
	}
	if cfg.Trusted != nil {
		opts.Extensions = append(opts.Extensions, trusted.Extension{Docs: cfg.Trusted, MaxTokens: opts.Limits.Tokens})
	}
	opts.FastStats = g.Fast
	if opts.Sockets.RecheckAuth == 0 {
		// A websocket's token is checked as often as a subscription's.
		opts.Sockets.RecheckAuth = cfg.Live.RecheckAuth
	}
	g.Query = g.NewQueryHandler(opts)
	return g, nil
}

// startLive starts the live-timeline hub and the timeline and notification
// streams over it.
func (g *Gateway) startLive(rdb redis.UniversalClient, store *redisstore.Store) {
	cfg := g.cfg
	hc := cfg.Live.Hub
	if cfg.Live.Classic {
		store.UseClassicPubSub()
		hc.Classic = true
	}
	g.Hub = live.NewHub(rdb, hc, cfg.Live.Log)
	// A live reader counts as reading its timeline as often as a page
	// read would mark it active (redisstore.DB.ActiveEvery).
	timelines := &live.Timelines{Hub: g.Hub, Store: livePages{store.LiveService, store.TimelineService},
		Sessions:    store.SessionService,
		RecheckAuth: cfg.Live.RecheckAuth, TouchEvery: store.ActiveEvery(), Log: cfg.Live.Log,
		MaxPerViewer: cfg.Live.MaxPerUser, MaxStreams: cfg.Live.MaxSubscriptions}
	g.Resolver.Live = timelines
	// Notification streams count against the timelines' bounds.
	g.Resolver.LiveNotes = &live.Notes{Hub: g.Hub, Store: store.NotificationService, Bounds: timelines}
}

// Close stops the live-timeline hub, ending open subscriptions (their
// clients see completion): when shutdown starts, so that SSE streams,
// which are open requests, let the server's shutdown finish.
func (g *Gateway) Close() {
	if g.Hub != nil {
		g.Hub.Close()
	}
	g.stopCache()
}

// NewQueryHandler returns a /query handler over the gateway's services
// with other options (the tests' loader settings and read-path variants).
// The abuse controls (limits, trusted proxies, persisted-query cache,
// websocket origins) are the gateway's own, whatever o says.
func (g *Gateway) NewQueryHandler(o QueryOptions) http.Handler {
	if g.cors != nil {
		o.OriginAllowed = g.cors.OriginAllowed
	}
	o.Limiter = g.Limiter
	o.TrustedProxies = g.cfg.Abuse.TrustedProxies
	o.Idempotency = g.idempotency(o.RequestTimeout)
	switch {
	case g.cfg.Trusted != nil:
		o.PersistedQueries = g.cfg.Trusted
	case g.cfg.Abuse.APQ.MaxEntries > 0:
		o.PersistedQueries = g.Store.APQCache(g.cfg.Abuse.APQ, nil)
	}
	return NewQuery(g.Resolver, newLoaderReads(g.Store), g.Auth, o)
}

// idempotency returns the store's idempotency keys, a claim outliving
// any execution the request timeout allows.
func (g *Gateway) idempotency(timeout time.Duration) operation.IdempotencyKeys {
	cfg := redisstore.DefaultIdempotency()
	cfg.Pending = max(cfg.Pending, 2*timeout)
	return g.Store.Idempotency(cfg)
}

// wireExports gives the resolvers the data exports, kept in the media
// files' blob store, and makes the handler of their archives, which
// spends the address's request budget as /query does.
func (g *Gateway) wireExports(store *redisstore.Store, cfg Config) {
	addr := &httpapi.ExportAddresses{Key: g.MediaAddresses.Key, Base: cfg.Media.BaseURL}
	var files httpapi.ExportFiles // nil: none served
	if cfg.Media.Files != nil {
		ec := cfg.Media.Exports
		if ec == (redisstore.ExportConfig{}) {
			ec = redisstore.DefaultExports()
		}
		g.Exports = redisstore.NewExportService(store, ec)
		g.Resolver.Exports = exports{g.Exports, addr}
		files = cfg.Media.Files
	}
	h := addr.Handler(files, g.Exports)
	g.ExportFiles = httpapi.ClientBudget(g.Limiter, cfg.Abuse.TrustedProxies, ratelimit.NewTarpit())(h)
}

// exports is what the resolvers call Exports: the store's export service
// and the archives' addresses.
type exports struct {
	*redisstore.ExportService
	addr *httpapi.ExportAddresses
}

func (e exports) ExportURL(x *social.DataExport) string { return e.addr.URL(x) }

// newMediaAddresses returns the addresses of posts' files of cfg: signed
// with its key, or with a random one when it has none.
func newMediaAddresses(cfg Config) *httpapi.MediaAddresses {
	key := cfg.Media.SigningKey
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	return &httpapi.MediaAddresses{Key: key, TTL: cfg.Media.URLTTL, Base: cfg.Media.BaseURL}
}

// postsAndPages is what the resolvers call Posts: the post service's
// writes and the timeline service's pages.
type postsAndPages struct {
	*redisstore.PostService
	*redisstore.TimelineService
}

// loaderReads is what the loaders read through (loader.Reader): the batch
// reads of the services that own users, the graph, posts, engagement,
// timelines and posts' edits.
type loaderReads struct {
	*redisstore.AccountService
	*redisstore.GraphService
	*redisstore.PostService
	*redisstore.EngagementService
	*redisstore.TimelineService
	*redisstore.EditService
	*redisstore.CurationService
}

func newLoaderReads(s *redisstore.Store) loaderReads {
	return loaderReads{s.AccountService, s.GraphService, s.PostService, s.EngagementService, s.TimelineService, s.EditService, s.CurationService}
}

// discovery is what the resolvers call Discovery: tag pages, trends and
// user search.
type discovery struct {
	*redisstore.TagService
	*redisstore.TrendService
	*redisstore.UserSearchService
}

// livePages is what a live timeline reads: the live service's channels
// and checks, and the timeline service's home page for replays.
type livePages struct {
	*redisstore.LiveService
	*redisstore.TimelineService
}

// Compile-time checks that the concrete types wired here provide every
// interface the GraphQL layer, the loaders, auth and live timelines
// declare.
var (
	_ graph.Accounts      = (*auth.Service)(nil)
	_ graph.Profiles      = (*redisstore.AccountService)(nil)
	_ graph.Graph         = (*redisstore.GraphService)(nil)
	_ graph.Posts         = postsAndPages{}
	_ graph.Engagement    = (*redisstore.EngagementService)(nil)
	_ graph.Edits         = (*redisstore.EditService)(nil)
	_ graph.Replies       = (*redisstore.ReplyService)(nil)
	_ graph.Notes         = (*redisstore.NotificationService)(nil)
	_ graph.Curation      = (*redisstore.CurationService)(nil)
	_ graph.Filters       = (*redisstore.FilterService)(nil)
	_ graph.Discovery     = discovery{}
	_ graph.Moderation    = (*moderation.Service)(nil)
	_ moderation.Store    = (*redisstore.ModerationService)(nil)
	_ graph.LiveNotes     = (*live.Notes)(nil)
	_ live.NoteStore      = (*redisstore.NotificationService)(nil)
	_ httpapi.PostReader  = (*redisstore.PostService)(nil)
	_ graph.MediaFiles    = (*mediastore.Store)(nil)
	_ httpapi.MediaFiles  = (*mediastore.Store)(nil)
	_ graph.MediaURLs     = (*httpapi.MediaAddresses)(nil)
	_ graph.Exports       = exports{}
	_ httpapi.ExportFiles = (*mediastore.Store)(nil)
	_ export.Files        = (*mediastore.Store)(nil)
	_ export.Source       = (*redisstore.ExportService)(nil)
	_ export.Records      = (*redisstore.ExportService)(nil)
	_ redisstore.Files    = (*mediastore.Store)(nil)
	_ loader.Reader       = loaderReads{}
	_ social.AccountStore = (*redisstore.AccountService)(nil)
	_ social.SessionStore = (*redisstore.SessionService)(nil)
	_ auth.Authenticator  = (*auth.Service)(nil)
	_ live.Store          = livePages{}
	_ live.Sessions       = (*redisstore.SessionService)(nil)
	_ graph.Live          = (*live.Timelines)(nil)
	_ graph.Limiter       = (*ratelimit.Limiter)(nil)
	_ operation.Limiter   = (*ratelimit.Limiter)(nil)
	_ auth.Limiter        = (*ratelimit.Limiter)(nil)
	_ auth.MailStore      = (*redisstore.MailService)(nil)
	_ auth.SessionEnder   = (*redisstore.SessionService)(nil)
)
