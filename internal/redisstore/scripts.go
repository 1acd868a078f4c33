package redisstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts of the store. Each lives in lua/<name>.lua, whose header
// says what it does, its KEYS and ARGV, and why it is one atomic step;
// lua/lib/ holds the functions several scripts share, prepended to the
// scripts that use them. Every script keeps its keys in one hash slot
// (docs/data-model.md).
var (
	// Accounts (account.go).
	registerScript        = newScript("register.lua")
	registerProfileScript = newScript("register_profile.lua")
	registerAbandonScript = newScript("register_abandon.lua")
	registerSettleScript  = newScript("register_settle.lua")
	updateIfExistsScript  = newScript("update_if_exists.lua")
	updateProfileScript   = newScript("update_profile.lua")
	// The flags of accounts that reads check (authorflags.go).
	authorFlagScript = newScript("author_flag.lua")
	// Account deletion (purge.go, fanout_purge.go).
	accountGoneScript  = newScript("account_gone.lua")
	accountFreeScript  = newScript("account_free.lua")
	leaseReleaseScript = newScript("lease_release.lua")

	// Account e-mails: tokens and address changes (mail.go).
	mailResetScript    = newScript("mail_reset.lua")
	mailConfirmScript  = newScript("mail_confirm.lua")
	emailReserveScript = newScript("email_reserve.lua")
	emailSettleScript  = newScript("email_settle.lua")

	// Data exports (export.go).
	exportRequestScript = newScript("export_request.lua")
	exportSettleScript  = newScript("export_settle.lua")

	// Sessions and persisted queries (session.go, apq.go).
	rotateScript = newScript("rotate_session.lua")
	apqAddScript = newScript("apq_add.lua")

	// Idempotency keys (idempotency.go).
	idemClaimScript  = newScript("idem_claim.lua")
	idemSettleScript = newScript("idem_settle.lua")

	// Social graph (graph.go).
	graphSideScript    = newScript("graph_side.lua")
	sweepIndexScript   = newScript("sweep_index.lua")
	commonCountScript  = newScript("common_count.lua", "sample")
	commonSampleScript = newScript("common_sample.lua", "sample")
	edgePageScript     = newScript("edge_page.lua")
	// Follow requests to locked accounts (graph_requests.go).
	followRequestScript = newScript("follow_request.lua")
	// The viewer's follows of a batch's authors (post_lock.go).
	followFlagsScript = newScript("follow_flags.lua")

	// Posts and fan-out (post.go, post_delete.go, fanout.go).
	postScript         = newScript("post.lua", "flags")
	postMigrateScript  = newScript("post_migrate.lua", "flags")
	repostLinkScript   = newScript("repost_link.lua", "counts")
	repostClaimScript  = newScript("repost_claim.lua", "flags")
	claimAgeScript     = newScript("repost_claim_age.lua")
	repostUnlinkScript = newScript("repost_unlink.lua", "counts", "flags")
	authorPostScript   = newScript("author_post.lua", "home")
	editPostScript     = newScript("edit_post.lua")
	// The reader's index of an author's posts (postindex.go).
	authorWindowScript = newScript("author_window.lua")
	authorIndexScript  = newScript("author_index.lua")
	// deliverBatchScript delivers to recipients of any slots of one server:
	// as is on one Redis; on Redis Cluster, deliverBatchClusterScript, the
	// same with the shebang line Redis 7 requires of a script touching
	// several slots (deliver_batch.lua). Two scripts, because the embedded
	// development Redis knows no shebang.
	deliverBatchScript        = newScript("deliver_batch.lua", "home")
	deliverBatchClusterScript = newScriptFlags("deliver_batch.lua", "allow-cross-slot-keys", "home")
	followerPageScript        = newScript("follower_page.lua")

	// Home timelines (timeline_home.go, timeline_homelist.go).
	homePageScript  = newScript("home_page.lua", "cursor", "home", "allow")
	homeMergeScript = newScript("home_merge.lua", "home", "allow")
	homePurgeScript = newScript("home_purge.lua", "home", "allow")

	// Shared settings (config.go).
	feedClaimScript = newScript("feed_claim.lua")

	// Notifications (notes.go).
	noteScript        = newScript("note.lua", "notes")
	noteAggScript     = newScript("note_agg.lua", "notes")
	noteWindowsScript = newScript("note_windows.lua", "notes")
	noteDropScript    = newScript("note_drop.lua", "notes")
	notePageScript    = newScript("note_page.lua", "notes")
	noteReadScript    = newScript("note_read.lua")
	notePurgeScript   = newScript("note_purge.lua", "notes")
	notePostPurge     = newScript("note_post_purge.lua", "notes")

	// Hashtags (tags.go).
	tagAddScript    = newScript("tag_add.lua")
	tagRemoveScript = newScript("tag_remove.lua")

	// Live timelines (live.go).
	liveAllowScript = newScript("live_allow.lua", "allow")

	// Likes and comments (engagement_likes.go, engagement_comments.go).
	likeScript          = newScript("like.lua", "counts", "flags")
	addCommentScript    = newScript("add_comment.lua", "counts", "packed")
	deleteCommentScript = newScript("delete_comment.lua", "counts", "packed")
	commentRowsScript   = newScript("comment_rows.lua", "cursor", "packed")

	// Reports (moderation.go).
	reportAddScript     = newScript("report_add.lua")
	reportResolveScript = newScript("report_resolve.lua")

	// Post counters (rows.go).
	postCountersScript = newScript("post_counters.lua", "counts")
)

// pipelinedScripts are the scripts run by EVALSHA in pipelines, loaded
// again by pipelined when Redis has lost its script cache.
var pipelinedScripts = []*redis.Script{sweepIndexScript, commentRowsScript, postCountersScript, postMigrateScript, edgePageScript, commonCountScript, commonSampleScript, homePageScript, homeMergeScript, homePurgeScript, authorPostScript, authorWindowScript, authorIndexScript, repostLinkScript, repostUnlinkScript, claimAgeScript, likeScript, noteScript, noteAggScript, notePageScript, deliverBatchScript, liveAllowScript, tagAddScript, tagRemoveScript, notePostPurge, followFlagsScript}

//go:embed lua
var luaFiles embed.FS

// newScript returns the script of lua/name preceded by the records'
// field names (luaPrelude) and the libraries it uses (lua/lib/<lib>.lua),
// in the order given.
func newScript(name string, libs ...string) *redis.Script {
	src := luaSource(name, libs...)
	scriptSources[name] = src
	sc := redis.NewScript(src)
	allScripts = append(allScripts, sc)
	return sc
}

// newScriptFlags is newScript with a Redis 7 shebang line declaring flags,
// for the scripts that run only on Redis Cluster (clusterScripts).
func newScriptFlags(name, flags string, libs ...string) *redis.Script {
	src := "#!lua flags=" + flags + "\n" + luaSource(name, libs...)
	scriptSources[name+"#"+flags] = src
	sc := redis.NewScript(src)
	clusterScripts = append(clusterScripts, sc)
	return sc
}

// allScripts are every script of the store, for LoadScripts;
// clusterScripts those loaded only on Redis Cluster.
var allScripts, clusterScripts []*redis.Script

// scriptsToLoad are the scripts that run on rdb.
func scriptsToLoad(rdb redis.UniversalClient, scripts []*redis.Script) []*redis.Script {
	if isCluster(rdb) {
		return append(slices.Clip(scripts), clusterScripts...)
	}
	return scripts
}

// LoadScripts loads every script into Redis's script cache (on Redis
// Cluster, into every master's), so no call pays a NOSCRIPT round trip
// first: a start-up warm-up, and what round-trip tests run before they
// count.
func (s *DB) LoadScripts(ctx context.Context) error {
	for _, sc := range scriptsToLoad(s.rdb, allScripts) {
		if err := sc.Load(ctx, s.rdb).Err(); err != nil {
			return fmt.Errorf("load script: %w", err)
		}
	}
	return nil
}

// scriptSources holds every script's full source by file name, for the
// test that loads them all.
var scriptSources = map[string]string{}

// luaSource is the source newScript runs; tests run it too.
func luaSource(name string, libs ...string) string {
	var b strings.Builder
	b.WriteString(luaPrelude())
	for _, l := range libs {
		b.Write(mustLua("lua/lib/" + l + ".lua"))
	}
	b.Write(mustLua("lua/" + name))
	return b.String()
}

func mustLua(path string) []byte {
	b, err := luaFiles.ReadFile(path)
	if err != nil {
		panic(fmt.Sprintf("redisstore: embedded script %s: %v", path, err))
	}
	return b
}

// pipelined runs fn in a pipeline in which scripts are called by EVALSHA
// (a pipeline cannot fall back on NOSCRIPT itself). When Redis has lost its
// script cache (a restart, a failover), it loads the scripts and runs again
// the commands from the first that failed with NOSCRIPT on, in their order,
// as the same command values: those before it, which ran, do not run twice
// (a post's fan-out job is queued once), and a job queued after a failed
// script is queued again after it, so the worker reads the script's write.
// The first copy of such a job may run before that write; the jobs queued
// in pipelines with scripts are idempotent (a like's note job raises its
// notification only for a like time above the one that last raised it).
func pipelined(ctx context.Context, rdb redis.UniversalClient, fn func(redis.Pipeliner) error) ([]redis.Cmder, error) {
	cmds, err := rdb.Pipelined(ctx, fn)
	first := firstNoScript(cmds)
	if err == nil || first < 0 {
		return cmds, err
	}
	for _, sc := range scriptsToLoad(rdb, pipelinedScripts) {
		if err := sc.Load(ctx, rdb).Err(); err != nil {
			return nil, fmt.Errorf("load script: %w", err)
		}
	}
	again := rdb.Pipeline()
	for _, c := range cmds[first:] {
		_ = again.Process(ctx, c)
	}
	if _, err := again.Exec(ctx); err != nil {
		var rerr redis.Error
		if !errors.As(err, &rerr) {
			return cmds, err
		}
	}
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return cmds, err
		}
	}
	return cmds, nil
}

// firstNoScript is the index of the first command that failed with
// NOSCRIPT, or -1.
func firstNoScript(cmds []redis.Cmder) int {
	for i, c := range cmds {
		if err := c.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			return i
		}
	}
	return -1
}

// hmget queues HMGET key fields. Pipeliner.HMGet takes the fields as
// strings and boxes each into an interface on every call; a page reads a
// hash for each of its posts and users, so their fields are boxed once
// (fieldArgs) and the command is built here.
func hmget(ctx context.Context, p redis.Pipeliner, key string, fields []any) *redis.SliceCmd {
	args := make([]any, 2+len(fields))
	args[0], args[1] = "hmget", key
	copy(args[2:], fields)
	cmd := redis.NewSliceCmd(ctx, args...)
	_ = p.Process(ctx, cmd)
	return cmd
}

// fieldArgs boxes hash field names for hmget.
func fieldArgs(fields ...string) []any {
	out := make([]any, len(fields))
	for i, f := range fields {
		out[i] = f
	}
	return out
}

// ScriptNames maps each script's SHA1 to its file name, for measurements
// that tell the scripts a client called apart (cmd/bench).
func ScriptNames() map[string]string {
	out := make(map[string]string, len(scriptSources))
	for name, src := range scriptSources {
		out[redis.NewScript(src).Hash()] = name
	}
	return out
}
