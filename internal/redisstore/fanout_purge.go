package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// The purge job of a deleted account (purge.go queues it): everything the
// account made or holds goes, a stage after another, each stage a loop of
// bounded batches (at most purgeBatchSize members read, one pipeline or a
// few a batch) that shrink what they read, so a stage cut short by a
// crash starts again where the data says it stopped. The stage reached is
// kept in the purge record (purgeStage), so a resumed job skips what is
// done.
//
// A job runs for purgeSlice at most, then queues its own continuation
// and ends, so no job outlives the worker's JobTimeout; a lease
// (PurgeLease, renewed after each batch) keeps two deliveries of a purge
// (a continuation and a retry of the job that queued it) from running at
// once. A worker killed mid-purge leaves its job pending and its lease
// expiring: the job is claimed by another worker after FANOUT_MIN_IDLE,
// which waits out the lease and resumes.

const (
	purgeBatchSize = 500
	// purgePostBatch is how many of the account's posts one batch
	// deletes: each runs the steps of a post's delete job.
	purgePostBatch = 50
	purgeSlice     = 20 * time.Second
	purgeLeaseTTL  = 30 * time.Second
)

// purgeStep is one stage of a purge: run does one bounded batch and
// reports whether the stage is done.
type purgeStep struct {
	name string
	run  func(p *purge, ctx context.Context) (done bool, err error)
}

// purgeSteps are the stages, in order. The account's content goes first
// (its comments, likes and posts, with what they raised), then its edges
// both ways, its curation and notifications, its own keys, and last the
// name and address.
var purgeSteps = []purgeStep{
	{"sessions", (*purge).sessions},
	{"comments", (*purge).comments},
	{"likes", (*purge).likes},
	{"posts", (*purge).posts},
	{"followers", (*purge).followers},
	{"following", (*purge).following},
	{"blocks", (*purge).blocksAndMutes},
	{"curation", (*purge).curation},
	{"notifications", (*purge).notifications},
	{"files", (*purge).files},
	{"keys", (*purge).ownKeys},
	{"free", (*purge).free},
}

// purge is one run of a purge job.
type purge struct {
	s    *FanoutService
	db   *DB
	id   string
	name string // lower-cased, from the purge record
	mail string
	// dname is the display name, for the search index.
	dname string
}

// purgeAccount runs (a slice of) the purge job of an account.
func (s *FanoutService) purgeAccount(ctx context.Context, job map[string]string) error {
	id := job[jobUser]
	if !social.IsID(id) {
		return fmt.Errorf("malformed purge job %v", job)
	}
	release, err := s.purgeLease(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	// The first step of DeleteAccount again, for a call that died after
	// queueing the job.
	db := &DB{rdb: s.rdb, keys: s.keys, set: s.set}
	n, err := hideAccount(ctx, s.rdb, s.keys, s.set, id)
	if err != nil || n == 0 {
		return err // no account, or its purge is over
	}
	rec, err := s.rdb.HGetAll(ctx, s.keys.Gone(id)).Result()
	if err != nil {
		return fmt.Errorf("read the purge record of %s: %w", id, err)
	}
	p := &purge{s: s, db: db, id: id, name: strings.ToLower(rec[profileRecord.name("name")]),
		mail: strings.ToLower(rec[profileRecord.name("email")]), dname: rec[profileRecord.name("dname")]}
	stage, _ := strconv.Atoi(rec[purgeStage])
	slice := purgeSlice
	if s.set.purgeSlice != 0 {
		slice = s.set.purgeSlice
	}
	until := time.Now().Add(slice)
	for batch := 0; stage < len(purgeSteps); batch++ {
		if batch > 0 && time.Now().After(until) {
			// A continuation carries on; the lease goes first, so it
			// need not wait for it.
			if err := s.purgeProgress(ctx, id, stage); err != nil {
				return err
			}
			release()
			return queuePurge(ctx, s.rdb, s.keys, s.set, id)
		}
		step := purgeSteps[stage]
		done, err := step.run(p, ctx)
		if err != nil {
			return fmt.Errorf("purge %s (%s): %w", id, step.name, err)
		}
		if s.set.purgeBatch != nil {
			s.set.purgeBatch(step.name)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !done {
			if err := s.rdb.PExpire(ctx, s.keys.PurgeLease(id), purgeLeaseTTL).Err(); err != nil {
				return fmt.Errorf("renew the purge lease of %s: %w", id, err)
			}
			continue
		}
		stage++
		if stage < len(purgeSteps) {
			// The last stage deletes the record: nothing to write then.
			if err := s.purgeProgress(ctx, id, stage); err != nil {
				return err
			}
		}
	}
	return nil
}

// purgeProgress records the stage a purge reached, and when.
func (s *FanoutService) purgeProgress(ctx context.Context, id string, stage int) error {
	err := updateIfExistsScript.Run(ctx, s.rdb, []string{s.keys.Gone(id)}, purgeStage, stage, purgeSeen, s.set.now().UnixMilli()).Err()
	if err != nil {
		return fmt.Errorf("record the purge of %s: %w", id, err)
	}
	return nil
}

// purgeLease takes the lease of id's purge, waiting while another run
// holds it (until ctx ends), and returns how to give it back.
func (s *FanoutService) purgeLease(ctx context.Context, id string) (func(), error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	key := s.keys.PurgeLease(id)
	for {
		ok, err := s.rdb.SetNX(ctx, key, token, purgeLeaseTTL).Result()
		if err != nil {
			return nil, fmt.Errorf("take the purge lease of %s: %w", id, err)
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the purge lease of %s: %w", id, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	released := false
	return func() {
		if released {
			return
		}
		released = true
		_ = leaseReleaseScript.Run(context.WithoutCancel(ctx), s.rdb, []string{key}, token).Err()
	}, nil
}

// sessions ends the account's sessions and drops its e-mail tokens,
// pending address change and idempotency records.
func (p *purge) sessions(ctx context.Context) (bool, error) {
	k := p.s.keys
	if err := (&SessionService{rdb: p.s.rdb, keys: k}).ClearSessions(ctx, p.id); err != nil {
		return false, err
	}
	if err := NewMailService(p.db).ClearMail(ctx, p.id); err != nil {
		return false, err
	}
	idem, err := p.s.rdb.ZRange(ctx, k.IdemIndex(p.id), 0, purgeBatchSize-1).Result()
	if err != nil {
		return false, fmt.Errorf("read idempotency keys: %w", err)
	}
	keys := make([]string, len(idem))
	for i, key := range idem {
		keys[i] = k.IdemRecord(p.id, key)
	}
	return len(idem) == 0, p.dropMembers(ctx, k.IdemIndex(p.id), idem, func(pl redis.Pipeliner) {
		pl.Unlink(ctx, keys...)
	})
}

// dropMembers runs each's commands (the other side of a batch of
// members) in one pipeline, then removes the batch from key (a zset or
// a set, as its type says), so a batch cut short is read again.
func (p *purge) dropMembers(ctx context.Context, key string, members []string, each func(redis.Pipeliner)) error {
	if len(members) == 0 {
		return nil
	}
	if each != nil {
		if cmds, err := pipelined(ctx, p.s.rdb, func(pl redis.Pipeliner) error { each(pl); return nil }); err != nil {
			if err := pipelineErr(cmds, err); err != nil {
				return err
			}
		}
	}
	ms := make([]any, len(members))
	for i, m := range members {
		ms[i] = m
	}
	typ, err := p.s.rdb.Type(ctx, key).Result()
	if err != nil {
		return err
	}
	if typ == "set" {
		return p.s.rdb.SRem(ctx, key, ms...).Err()
	}
	return p.s.rdb.ZRem(ctx, key, ms...).Err()
}

// followers ends the follows of a batch of the account's followers: the
// account leaves their following, then their home lists and pulled
// authors lose its entries (homePurgeScript, which keeps them while the
// reader still follows).
func (p *purge) followers(ctx context.Context) (bool, error) {
	k := p.s.keys
	ids, err := p.s.rdb.ZRange(ctx, k.Followers(p.id), 0, purgeBatchSize-1).Result()
	if err != nil || len(ids) == 0 {
		return err == nil, err
	}
	if _, err := p.s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for _, f := range ids {
			pl.ZRem(ctx, k.Following(f), p.id)
		}
		return nil
	}); err != nil {
		return false, fmt.Errorf("unfollow %d followers: %w", len(ids), err)
	}
	return false, p.dropMembers(ctx, k.Followers(p.id), ids, func(pl redis.Pipeliner) {
		for _, f := range ids {
			homePurgeScript.EvalSha(ctx, pl, homeKeys(k, f), f, p.id)
		}
	})
}

// following ends a batch of the account's follows, with the jobs that
// update the follow notifications they raised.
func (p *purge) following(ctx context.Context) (bool, error) {
	k := p.s.keys
	ids, err := p.s.rdb.ZRange(ctx, k.Following(p.id), 0, purgeBatchSize-1).Result()
	if err != nil || len(ids) == 0 {
		return err == nil, err
	}
	now := p.s.set.now()
	return false, p.dropMembers(ctx, k.Following(p.id), ids, func(pl redis.Pipeliner) {
		for _, g := range ids {
			pl.ZRem(ctx, k.Followers(g), p.id)
			queueNote(ctx, pl, k, p.s.set.feed.FanoutShards, now, social.NoteFollow, g, "", p.id, g)
		}
	})
}

// blocksAndMutes takes the account out of the mirrors of its blocks and
// mutes, both ways, a batch of one set at a time.
func (p *purge) blocksAndMutes(ctx context.Context) (bool, error) {
	k := p.s.keys
	for _, pair := range [][2]func(string) string{
		{k.Blocks, k.BlockedBy}, {k.BlockedBy, k.Blocks}, {k.Mutes, k.MutedBy}, {k.MutedBy, k.Mutes},
	} {
		own, mirror := pair[0](p.id), pair[1]
		ids, err := p.s.rdb.SRandMemberN(ctx, own, purgeBatchSize).Result()
		if err != nil {
			return false, err
		}
		if len(ids) == 0 {
			continue
		}
		return false, p.dropMembers(ctx, own, ids, func(pl redis.Pipeliner) {
			for _, u := range ids {
				pl.SRem(ctx, mirror(u), p.id)
			}
		})
	}
	return true, nil
}

// curation drops the account's bookmarks, pins, lists (and its places in
// others' lists) and its tag indexes, with the hooks that own them.
func (p *purge) curation(ctx context.Context) (bool, error) {
	c := NewCurationService(&TimelineService{rdb: p.s.rdb, keys: p.s.keys, set: p.s.set})
	if err := errors.Join(c.DeleteUserBookmarks(ctx, p.id), c.DeleteUserPins(ctx, p.id)); err != nil {
		return false, err
	}
	if err := c.DeleteUserLists(ctx, p.id); err != nil {
		return false, err
	}
	return true, p.s.posts.DropUserTags(ctx, p.id)
}

// notifications deletes a batch of the account's notifications, then its
// notification hashes.
func (p *purge) notifications(ctx context.Context) (bool, error) {
	k := p.s.keys
	gids, err := p.s.rdb.ZRange(ctx, k.Notes(p.id), 0, purgeBatchSize-1).Result()
	if err != nil {
		return false, err
	}
	if len(gids) == 0 {
		return true, p.s.rdb.Unlink(ctx, k.NoteData(p.id), k.NoteOpen(p.id), k.NoteMeta(p.id)).Err()
	}
	keys := make([]string, len(gids))
	for i, g := range gids {
		keys[i] = k.NoteActors(p.id, g)
	}
	return false, p.dropMembers(ctx, k.Notes(p.id), gids, func(pl redis.Pipeliner) { pl.Unlink(ctx, keys...) })
}

// files deletes the account's profile pictures.
func (p *purge) files(ctx context.Context) (bool, error) {
	if p.s.set.profileFiles == nil {
		return true, nil
	}
	return true, p.s.set.profileFiles.DeleteProfileFiles(ctx, p.id)
}

// ownKeys unlinks what is left of the account's own keys (UNLINK frees a
// large value off Redis's main thread), and its entries in the global
// registries.
func (p *purge) ownKeys(ctx context.Context) (bool, error) {
	k, id := p.s.keys, p.id
	// Idempotency records settled after the sessions stage (the
	// deleteAccount request's own): at most MaxKeys (1 000).
	idem, err := p.s.rdb.ZRange(ctx, k.IdemIndex(id), 0, -1).Result()
	if err != nil {
		return false, fmt.Errorf("read idempotency keys: %w", err)
	}
	_, err = p.s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for _, key := range idem {
			pl.Unlink(ctx, k.IdemRecord(id, key))
		}
		for _, key := range []string{k.Home(id), k.HomeMark(id), k.Following(id), k.Followers(id), k.Blocks(id),
			k.BlockedBy(id), k.Mutes(id), k.MutedBy(id), k.UserPosts(id), k.PublicPosts(id), k.NotToPosts(id),
			k.CelebFollowing(id), k.Lists(id), k.ListedIn(id), k.Bookmarks(id), k.Pins(id), k.UserLikes(id),
			k.UserComments(id), k.UserSessions(id), k.GraphPending(id), k.IdemIndex(id), k.UserVoid(id),
			k.TagOnlyToIndex(id), k.Notes(id)} {
			pl.Unlink(ctx, key)
		}
		pl.HDel(ctx, k.Celebrities(), id)
		pl.ZRem(ctx, k.GraphPendingIndex(), id)
		return nil
	})
	return true, err
}

// free ends the purge: the name and the address are free again, the
// search index forgets them, and the record goes.
func (p *purge) free(ctx context.Context) (bool, error) {
	k := p.s.keys
	if err := accountFreeScript.Run(ctx, p.s.rdb, []string{k.Names(), k.Emails()}, p.id, p.name, p.mail).Err(); err != nil {
		return false, fmt.Errorf("free the name of %s: %w", p.id, err)
	}
	if p.name != "" {
		if err := NewUserSearchService(p.db).UnindexUser(ctx, p.id, p.name, p.dname); err != nil {
			return false, err
		}
	}
	// The record before the mark: a run cut short between them finds no
	// account and drops the mark (hideAccount).
	if err := p.s.rdb.Unlink(ctx, k.Gone(p.id)).Err(); err != nil {
		return false, err
	}
	// Every flag: a locked or suspended account leaves nothing behind.
	return true, setAuthorFlag(ctx, p.s.rdb, k, p.id, allFlags, false, k.Deleting())
}
