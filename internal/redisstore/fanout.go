package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/social"
)

// FanoutService carries out the fan-out queue's jobs: delivery to home
// timelines, notifications, deletes (the worker's fanout.Handler).
type FanoutService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
	// posts are the post writes a job repeats or finishes (a pulled
	// author's own timeline, an orphaned plain repost's delete).
	posts *PostService
}

// Fan-out: the jobs createPost and deletePost queue on FanoutStream, and
// what the worker (internal/fanout) does with them. Every step of a job is
// idempotent, so a job delivered twice (a worker died before its XACK, or
// go-redis retried a command) changes nothing the second time: a post lands
// once per timeline.

// Fan-out jobs: the fields of the entries of FanoutStream.
const (
	jobOp     = "op"     // opPost, opDelete, opEdit (fanout_edit.go), or a note job's
	jobPost   = "post"   // the post id
	jobAuthor = "author" // its author
	jobRepost = "repost" // the original, when the post is a repost
	// Of delete jobs: the original's author and the users mentioned,
	// whose notifications go with the post.
	jobRepostAuthor = "rauthor"
	jobMentions     = "mentions"
	jobMedia        = "media" // a deleted post's media file keys, space-separated

	opPost   = "post"
	opDelete = "delete"
	opPurge  = "purge" // an account's deletion (fanout_purge.go)
)

// HandleFanoutJob carries out one fan-out job (the fields of an entry of
// FanoutStream). An error leaves the job pending, to be retried.
func (s *FanoutService) HandleFanoutJob(ctx context.Context, job map[string]string) error {
	switch job[jobOp] {
	case opNote:
		return s.syncNote(ctx, job)
	case opNotePurge:
		return s.purgeNotes(ctx, job)
	case opEdit:
		return newEditFanout(s).run(ctx, job)
	case opPurge:
		return s.purgeAccount(ctx, job)
	}
	post, author, repost := job[jobPost], job[jobAuthor], job[jobRepost]
	if !social.IsID(post) || !social.IsID(author) || (repost != "" && !social.IsID(repost)) {
		return fmt.Errorf("malformed fan-out job %v", job)
	}
	switch job[jobOp] {
	case opPost:
		return s.fanOutPost(ctx, post, author, repost)
	case opDelete:
		return s.deletePost(ctx, job, true)
	}
	return fmt.Errorf("fan-out job of unknown op %q", job[jobOp])
}

// postFanout is what fan-out reads of a new post: who to tell, and its
// audience for what createPost may have left undone.
var postFanout = postRecord.view("author", "content", "vis", "repost", "rauthor", "mentions", "media", "created")

// fanOutPost delivers a new post to the home lists of its author's
// followers, as the mode says.
func (s *FanoutService) fanOutPost(ctx context.Context, post, author, repost string) error {
	var hash *redis.SliceCmd
	var followers *redis.IntCmd
	var listed *redis.FloatCmd
	var celeb *redis.StringCmd
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		hash = postFanout.queue(ctx, p, s.keys.Post(post))
		listed = p.ZScore(ctx, s.keys.UserPosts(author), post)
		followers = p.ZCard(ctx, s.keys.Followers(author))
		celeb = p.HGet(ctx, s.keys.Celebrities(), author)
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("load post %s for fan-out: %w", post, err)
	}
	var row postRow
	postFanout.decode(&row, hash.Val())
	if row.post.AuthorID != author {
		return nil // deleted meanwhile (or never written): nothing to deliver
	}
	if gone, err := s.orphanPlainRepost(ctx, post, &row.post); gone || err != nil {
		return err
	}
	// The original's author and the users mentioned are told, the post
	// joins the indexes of its tags (tags.go) and the lists get it.
	if err := errors.Join(s.notifyAndIndex(ctx, post, author, repost, &row.post),
		deliverToLists(ctx, s.rdb, s.keys, post, author)); err != nil {
		return err
	}
	only, err := listedAudience(ctx, s.rdb, s.keys, post, row.post.Visibility)
	if err != nil {
		return err
	}
	if isNil(listed.Err()) {
		// createPost stopped after queueing this job: finish its writes.
		if _, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
			s.posts.queuePublished(ctx, p, post, author, repost, row.post.Visibility, only)
			return nil
		}); err != nil {
			return fmt.Errorf("publish post %s: %w", post, err)
		}
	}
	switch s.set.feed.Mode {
	case Pull:
		return nil // createPost announced it to live subscribers
	case Hybrid:
		if st := celeb.Val(); st != "" || followers.Val() > int64(s.set.feed.CelebrityThreshold) {
			if err := s.registerCelebrity(ctx, author, st); err != nil {
				return err
			}
			if st == "" {
				// Pulled from now on: createPost could not know it, so
				// live subscribers hear of this first post from here.
				s.announcePulled(ctx, post, author)
			}
			return nil
		}
	}
	return s.deliverByAudience(ctx, post, author, row.post.Visibility, only)
}

// deliverByAudience pushes post to the home lists its audience reaches:
// the listed users who follow the author for ONLY_TO, every follower but
// the excluded ones otherwise.
func (s *FanoutService) deliverByAudience(ctx context.Context, post, author string, vis social.Visibility, only []string) error {
	d := delivery{s: s, post: post, author: author, mustFollow: "0"}
	if vis == social.OnlyTo {
		return s.sendToAudience(ctx, d, only)
	}
	var excluded map[string]bool
	if vis == social.NotTo {
		not, err := s.rdb.SMembers(ctx, s.keys.PostNotTo(post)).Result()
		if err != nil {
			return fmt.Errorf("load audience of post %s: %w", post, err)
		}
		excluded = make(map[string]bool, len(not))
		for _, u := range not {
			excluded[u] = true
		}
	}
	return d.toFollowers(ctx, excluded)
}

// sendToAudience delivers an ONLY_TO post to its audience, only (at most
// social.MaxAudienceSize users): the script keeps those who follow, and
// those who mute the author are left out here.
func (s *FanoutService) sendToAudience(ctx context.Context, d delivery, only []string) error {
	d.mustFollow = "1"
	if len(only) > 0 {
		var err error
		if only, err = s.notMuting(ctx, d.author, only); err != nil {
			return fmt.Errorf("load audience of post %s: %w", d.post, err)
		}
	}
	return d.send(ctx, only)
}

// deliveriesInFlight is how many delivery calls a fan-out keeps in flight:
// with two, Redis runs one page's script while the worker reads the next
// page of followers and prepares its call, and never waits for the worker
// in between (docs/performance.md, "Fan-out"). Pages of one post touch
// different lists, and each insert is atomic and idempotent, so their
// order does not matter.
const deliveriesInFlight = 2

// toFollowers delivers to the author's followers, less those who mute the
// author and those in excluded, a page at a time, deliveriesInFlight pages
// at once. The first error stops the walk and is returned once the calls
// in flight are done.
func (d delivery) toFollowers(ctx context.Context, excluded map[string]bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, deliveriesInFlight)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	walkErr := d.s.eachFollowers(ctx, d.author, true, func(batch []string) error {
		if excluded != nil {
			kept := batch[:0]
			for _, u := range batch {
				if !excluded[u] {
					kept = append(kept, u)
				}
			}
			batch = kept
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := d.send(ctx, batch); err != nil {
				once.Do(func() { firstErr = err; cancel() })
			}
		}()
		return nil
	})
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return walkErr
}

// delivery is one post on its way to home lists.
type delivery struct {
	s            *FanoutService
	post, author string
	mustFollow   string // "1": deliver only to followers of the author
}

// notMuting returns the users who do not mute author (by author's
// MutedBy), in order.
func (s *FanoutService) notMuting(ctx context.Context, author string, users []string) ([]string, error) {
	muted, err := s.rdb.SMIsMember(ctx, s.keys.MutedBy(author), toAny(users)...).Result()
	if err != nil {
		return nil, err
	}
	kept := users[:0]
	for i, u := range users {
		if !muted[i] {
			kept = append(kept, u)
		}
	}
	return kept, nil
}

// toAny returns ss as command arguments.
func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, v := range ss {
		out[i] = v
	}
	return out
}

// send delivers to recipients with deliver_batch.lua: one call per
// FanoutBatch recipients on one server, all calls of one send in one
// pipeline (on Redis Cluster go-redis sends each server its own, at once).
//
// On Redis Cluster the recipients are grouped by the master that holds
// their slot in go-redis's slot map. A call that fails there (a slot moved
// or is moving: MOVED, ASK, TRYAGAIN, or the script stopped at a key of
// another server) is run again a recipient at a time, each call then in
// one slot, whose redirections go-redis follows; what the failed call
// delivered before it stopped is skipped by the second (the insert is
// idempotent). An error left after that leaves the job pending, to be
// retried.
func (d delivery) send(ctx context.Context, recipients []string) error {
	s := d.s
	groups, err := s.byServer(ctx, recipients)
	if err != nil {
		return fmt.Errorf("deliver post %s: %w", d.post, err)
	}
	var batches [][]string
	for _, g := range groups {
		for start := 0; start < len(g); start += s.set.feed.FanoutBatch { // none for an empty group
			batches = append(batches, g[start:min(start+s.set.feed.FanoutBatch, len(g))])
		}
	}
	return d.sendBatches(ctx, batches)
}

// sendBatches runs one deliver_batch.lua call per batch, each batch on one
// server (as far as the caller's slot map knows), and on Redis Cluster the
// batches that fail again a recipient at a time.
func (d delivery) sendBatches(ctx context.Context, batches [][]string) error {
	s := d.s
	if len(batches) == 0 {
		return nil
	}
	calls := make([]*redis.Cmd, len(batches))
	_, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		for i, b := range batches {
			calls[i] = d.queue(ctx, p, b)
		}
		return nil
	})
	if err == nil || !isCluster(s.rdb) {
		return d.sendErr(err)
	}
	// A call that failed, or was never sent (the pipeline as a whole
	// failed), goes again.
	var again []string
	for i, c := range calls {
		if c.Err() != nil || c.Val() == nil {
			again = append(again, batches[i]...)
		}
	}
	if len(again) == 0 {
		return d.sendErr(err)
	}
	_, err = pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		for _, r := range again {
			d.queue(ctx, p, []string{r})
		}
		return nil
	})
	return d.sendErr(err)
}

func (d delivery) sendErr(err error) error {
	if err != nil {
		return fmt.Errorf("deliver post %s: %w", d.post, err)
	}
	return nil
}

// queue queues one deliver_batch.lua call for recipients, all on one
// server: KEYS[1], the first one's Home, routes it there.
func (d delivery) queue(ctx context.Context, p redis.Pipeliner, recipients []string) *redis.Cmd {
	s := d.s
	script, count := deliverBatchScript, "SHARDNUMSUB"
	if isCluster(s.rdb) {
		script = deliverBatchClusterScript
	}
	if publishCommand(s.set.publishCmd) == "PUBLISH" {
		count = "NUMSUB"
	}
	args := make([]any, 0, 12+len(recipients))
	args = append(args, d.post, homeEntry(d.post, d.author), d.author, s.set.feed.HomeCap, d.mustFollow,
		publishCommand(s.set.publishCmd), count)
	args = append(args, s.keys.recipientKeyParts()...)
	for _, r := range recipients {
		args = append(args, r)
	}
	return script.EvalSha(ctx, p, []string{s.keys.Home(recipients[0])}, args...)
}

// byServer groups recipients by the server that holds their keys: all of
// them on one Redis; on Redis Cluster, by master, from go-redis's slot map
// (the hash of each one's tag, a map lookup: no round trip).
func (s *FanoutService) byServer(ctx context.Context, recipients []string) ([][]string, error) {
	cc, ok := s.rdb.(*redis.ClusterClient)
	if !ok || len(recipients) == 0 {
		return [][]string{recipients}, nil
	}
	at := map[string]int{}
	var out [][]string
	for _, r := range recipients {
		node, err := cc.MasterForKey(ctx, s.keys.Home(r))
		if err != nil {
			return nil, err
		}
		addr := node.Options().Addr
		i, ok := at[addr]
		if !ok {
			i = len(out)
			at[addr] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out, nil
}

// eachFollowers calls fn with the followers of author, FanoutBatch at a
// time, in the order of the set (follow time); with unmuted set, without
// those who mute author (MutedBy, checked with each page in author's
// slot). follower_page.lua reads each page from the last member of the
// previous one, so every follower present for the whole walk is passed at
// least once, whatever follows and unfollows happen meanwhile (a repeat is
// harmless: delivery is idempotent); someone who follows during the walk
// gets the post from the follow's backfill, or from a page after the
// follow. It replaces ZSCAN, which cost Redis about as much as the
// delivery itself (the scores it formats).
func (s *FanoutService) eachFollowers(ctx context.Context, author string, unmuted bool, fn func([]string) error) error {
	keys := []string{s.keys.Followers(author)}
	if unmuted {
		keys = append(keys, s.keys.MutedBy(author))
	}
	n := s.set.feed.FanoutBatch
	last, score := "", ""
	for {
		res, err := followerPageScript.Run(ctx, s.rdb, keys, n, last, score).Slice()
		if err == nil && len(res) != 3 {
			err = fmt.Errorf("reply %v", res)
		}
		if err != nil {
			return fmt.Errorf("read followers of %s: %w", author, err)
		}
		page, _ := res[0].([]any)
		muted, _ := res[2].([]any)
		skip := make(map[string]bool, len(muted))
		for _, m := range muted {
			u, _ := m.(string)
			skip[u] = true
		}
		batch := make([]string, 0, len(page))
		for _, m := range page {
			if u, _ := m.(string); !skip[u] {
				batch = append(batch, u)
			}
		}
		if len(batch) > 0 {
			if err := fn(batch); err != nil {
				return err
			}
		}
		if len(page) < n {
			return nil
		}
		last, _ = page[len(page)-1].(string)
		score = fmt.Sprint(res[1])
	}
}

// registerCelebrity makes author a pulled author (hybrid mode): it records
// them in Celebrities, then adds them to the CelebFollowing set of each
// follower, whose pages then merge the author's posts in at read time. The
// status is "pending" until every follower has it, so a worker that dies
// halfway is followed by one that finishes; a follow that happens meanwhile
// adds the author itself (the follow hook reads Celebrities after the
// follow edge exists, and this scan reads the edges after the status
// exists). Done once per author: later posts cost no write at all.
func (s *FanoutService) registerCelebrity(ctx context.Context, author, status string) error {
	if status == "done" {
		return nil
	}
	if status == "" {
		if err := s.rdb.HSet(ctx, s.keys.Celebrities(), author, "pending").Err(); err != nil {
			return fmt.Errorf("register celebrity %s: %w", author, err)
		}
	}
	err := s.eachFollowers(ctx, author, false, func(batch []string) error {
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, f := range batch {
				p.SAdd(ctx, s.keys.CelebFollowing(f), author)
			}
			return nil
		})
		return err
	})
	if err == nil {
		err = s.rdb.HSet(ctx, s.keys.Celebrities(), author, "done").Err()
	}
	if err != nil {
		return fmt.Errorf("register celebrity %s: %w", author, err)
	}
	return nil
}

// FanoutQueue returns the stream and dead-letter stream of each shard of
// the fan-out queue.
func (s *FanoutService) FanoutQueue() []fanout.Queue {
	out := make([]fanout.Queue, s.set.feed.FanoutShards)
	for i := range out {
		out[i] = fanout.Queue{Stream: s.keys.FanoutShard(i), Dead: s.keys.FanoutDeadShard(i), Alive: s.keys.FanoutAliveShard(i)}
	}
	return out
}

// fanoutStream is the stream of a post's jobs, of shards streams.
func fanoutStream(k Keys, shards int, postID string) string {
	id, _ := strconv.ParseUint(postID, 10, 64)
	return k.FanoutShard(int(id % uint64(shards)))
}
