package redisstore

import (
	"context"
	"fmt"
	"math"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// commonWalk is the state of one common-following page: it walks the
// user's following list from the cursor in chunks and keeps the members
// the other user's list holds, within the bounds of CommonFollowing.
type commonWalk struct {
	k                  readplan.ListKey
	user, mine, theirs string
	pos                edgePos // the last candidate read
	chunk              int     // candidates the last read asked for
	walked             int     // candidates read
	exists             *redis.IntCmd
	blocked            []*redis.BoolCmd // either user blocked the viewer
	count, edges, has  *redis.Cmd
	read               []edge // the last chunk read, checked against theirs
	common             []edge
	cut                bool // stopped by its bounds before the end of the list
	done               bool
	page               social.Connection[string]
	err                error
	// Redis Cluster: the total's sample of the user's list (its ZCARD
	// and members), the size of the other's, and which of the sample's
	// members the other's holds.
	sample    *redis.Cmd
	theirCard *redis.IntCmd
	sampleHas *redis.Cmd
}

func newCommonWalk(ctx context.Context, keys Keys, k readplan.ListKey) (*commonWalk, error) {
	pos, err := edgeCursor(k.Page)
	if err != nil {
		return nil, err
	}
	// The first chunk reads what the page shows (the cost model counts
	// it) and, while the operation's read budget lasts, more: enough to
	// fill most pages of a sparse intersection in one round trip.
	chunk := k.Page.First + 1
	if chunk < commonChunk {
		chunk += social.TakeReadBudget(ctx, commonChunk-chunk)
	}
	return &commonWalk{k: k, user: keys.User(k.With), mine: keys.Following(k.Parent), theirs: keys.Following(k.With), pos: pos, chunk: chunk}, nil
}

// commonShared holds the reads of one batch that depend only on the two
// lists, not on the page: walks of the same two users (aliases with other
// cursors or page sizes) share them, so their total is read once.
type commonShared struct {
	count     map[[2]string]*redis.Cmd // Redis: commonCountScript by (mine, theirs)
	sample    map[string]*redis.Cmd    // Cluster: commonSampleScript by list
	card      map[string]*redis.IntCmd // Cluster: ZCARD by list
	sampleHas map[[2]string]*redis.Cmd // Cluster: a sample checked against a list
	// sizes are the sample sizes paid for, by list or pair: kept when a
	// pipeline is sent again (its scripts were not loaded), so nothing
	// is paid twice.
	sizes map[string]int
}

func newCommonShared() *commonShared {
	sh := &commonShared{sizes: map[string]int{}}
	sh.reset()
	return sh
}

// reset forgets the commands queued, before a pipeline is built again.
func (sh *commonShared) reset() {
	sh.count, sh.sample = map[[2]string]*redis.Cmd{}, map[string]*redis.Cmd{}
	sh.card, sh.sampleHas = map[string]*redis.IntCmd{}, map[[2]string]*redis.Cmd{}
}

// sampleSize is the members a total of key (a list, or a pair of lists)
// may sample: commonSample while the operation's read budget lasts (it
// pays for them), one run when it is spent, so a total costs a fixed few
// commands past the budget.
func (sh *commonShared) sampleSize(ctx context.Context, key string) int {
	if n, ok := sh.sizes[key]; ok {
		return n
	}
	n := social.TakeReadBudget(ctx, commonSample)
	n = max(commonSampleRun, n-n%commonSampleRun)
	sh.sizes[key] = n
	return n
}

// queueStart queues the first round: whether either user blocked the
// viewer, whether the other user exists, the total (once per pair of
// lists in the batch), and the first chunk. On Cluster the two lists are
// in two slots, so instead of the total it takes the sample of the user's
// list and the size of the other's; the walk's second round checks the
// sample against the other's list with the first chunk.
func (w *commonWalk) queueStart(ctx context.Context, p redis.Pipeliner, k Keys, viewerID string, cluster bool, sh *commonShared) {
	w.blocked = w.blocked[:0] // queued again when the pipeline is sent again
	for _, u := range []string{w.k.Parent, w.k.With} {
		if viewerID != "" && u != viewerID {
			w.blocked = append(w.blocked, p.SIsMember(ctx, k.Blocks(u), viewerID))
		}
	}
	w.exists = p.Exists(ctx, w.user)
	switch {
	case cluster:
		w.sample = sh.sampleOf(ctx, p, w.mine)
		if w.theirCard = sh.card[w.theirs]; w.theirCard == nil {
			w.theirCard = p.ZCard(ctx, w.theirs)
			sh.card[w.theirs] = w.theirCard
		}
	default:
		pair := [2]string{w.mine, w.theirs}
		if w.count = sh.count[pair]; w.count == nil {
			w.count = commonCountScript.EvalSha(ctx, p, []string{w.mine, w.theirs}, sh.sampleSize(ctx, w.mine+"\x00"+w.theirs), commonSampleRun)
			sh.count[pair] = w.count
		}
	}
	w.edges = edgePageScript.EvalSha(ctx, p, []string{w.mine}, w.pos.score, w.pos.member, w.chunk)
}

// sampleOf queues the sample of a list for a total on Cluster, once per
// list in the batch.
func (sh *commonShared) sampleOf(ctx context.Context, p redis.Pipeliner, list string) *redis.Cmd {
	c := sh.sample[list]
	if c == nil {
		c = commonSampleScript.EvalSha(ctx, p, []string{list}, sh.sampleSize(ctx, list), commonSampleRun)
		sh.sample[list] = c
	}
	return c
}

// checkSample queues, once per pair in the batch, the check of list's
// sample against other (Cluster).
func (sh *commonShared) checkSample(ctx context.Context, p redis.Pipeliner, sample *redis.Cmd, list, other string) *redis.Cmd {
	pair := [2]string{list, other}
	if c, ok := sh.sampleHas[pair]; ok {
		return c
	}
	var c *redis.Cmd
	if _, ms := sampleReply(sample); len(ms) > 0 {
		c = p.Do(ctx, zmscoreArgs(other, members(ms))...)
	}
	sh.sampleHas[pair] = c
	return c
}

// walkCommon finishes the common-following walks whose first round has
// run: each further round is one pipeline for all walks still open (the
// ZMSCOREs of their chunks, then the next chunks of those not yet full).
func walkCommon(ctx context.Context, rdb redis.UniversalClient, walks []*commonWalk, sh *commonShared) error {
	var open []*commonWalk
	for _, w := range walks {
		if w == nil {
			continue
		}
		if !w.seesGraphs() {
			w.done = true // an empty page, as Following is empty
			continue
		}
		if w.exists.Val() == 0 && w.exists.Err() == nil {
			w.fail(social.Errorf(social.NotFound, "user %s not found", w.k.With))
			continue
		}
		if w.readChunk() {
			open = append(open, w)
		}
	}
	for len(open) > 0 {
		if err := checkChunks(ctx, rdb, open, sh); err != nil {
			return err
		}
		var more []*commonWalk
		for _, w := range open {
			if w.keepChunk(ctx) {
				more = append(more, w)
			}
		}
		if len(more) == 0 {
			break
		}
		if _, err := pipelined(ctx, rdb, func(p redis.Pipeliner) error {
			for _, w := range more {
				w.edges = edgePageScript.EvalSha(ctx, p, []string{w.mine}, w.pos.score, w.pos.member, w.chunk)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("common following: %w", err)
		}
		open = open[:0]
		for _, w := range more {
			if w.readChunk() {
				open = append(open, w)
			}
		}
	}
	if err := commonTotals(ctx, rdb, walks, sh); err != nil {
		return err
	}
	for _, w := range walks {
		if w != nil && w.err == nil {
			w.finish()
		}
	}
	return nil
}

// checkChunks checks the chunks the open walks read (and their samples)
// against the other user's list, in one pipeline.
func checkChunks(ctx context.Context, rdb redis.UniversalClient, open []*commonWalk, sh *commonShared) error {
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, w := range open {
			w.has = nil
			if len(w.read) > 0 {
				w.has = p.Do(ctx, zmscoreArgs(w.theirs, w.read)...)
			}
			if w.sample != nil && w.sampleHas == nil {
				w.sampleHas = sh.checkSample(ctx, p, w.sample, w.mine, w.theirs)
			}
		}
		return nil
	}); err != nil && !isNil(err) {
		return fmt.Errorf("common following: %w", err)
	}
	return nil
}

// keepChunk keeps the members of the checked chunk the other user follows
// too, and sizes the next chunk; false when the walk is done.
func (w *commonWalk) keepChunk(ctx context.Context) bool {
	if w.has != nil {
		in, err := zmscoreFlags(w.has)
		if err != nil {
			w.fail(err)
			return false
		}
		for i, e := range w.read {
			if in[i] {
				w.common = append(w.common, e)
			}
		}
	}
	// One match beyond the page says there is a next page.
	if len(w.common) > w.k.Page.First || len(w.read) < w.chunk {
		w.done = true
		return false
	}
	w.pos = edgePos(w.read[len(w.read)-1])
	// Past the first chunk, the walk spends the operation's read budget,
	// up to commonWalkMax in all.
	w.chunk = social.TakeReadBudget(ctx, min(2*w.chunk, commonWalkMax-w.walked))
	if w.chunk <= 0 {
		w.done, w.cut = true, true
		return false
	}
	return true
}

// readChunk takes the reply of the chunk the walk read last; false when
// the walk failed.
func (w *commonWalk) readChunk() bool {
	var err error
	if _, w.read, err = parseEdgePage(w.edges); err != nil {
		w.fail(err)
		return false
	}
	w.walked += len(w.read)
	return true
}

// commonTotals sets the total of every walk that has not failed: from its
// count (one Redis), or, on Cluster, from the sample of the user's list
// checked in the walk's second round when that list is the shorter or is
// counted whole (the same figure the count gives), else from a sample of
// the other's list, checked against the user's, in two more rounds for all
// such walks together.
func commonTotals(ctx context.Context, rdb redis.UniversalClient, walks []*commonWalk, sh *commonShared) error {
	var other []*commonWalk
	for _, w := range walks {
		switch {
		case w == nil || w.err != nil || !w.seesGraphs():
		case w.count != nil:
			n, err := w.count.Int64Slice()
			if err != nil || len(n) != 3 {
				w.fail(fmt.Errorf("common following of %s and %s: count: %v %w", w.k.Parent, w.k.With, n, err))
				continue
			}
			w.page.Total = commonTotal(int(n[0]), int(n[1]), int(n[2]))
		default:
			if err := w.sample.Err(); err != nil {
				w.fail(fmt.Errorf("common following of %s and %s: sample: %w", w.k.Parent, w.k.With, err))
				continue
			}
			if card, _ := sampleReply(w.sample); card > w.theirCard.Val() && card > commonSample {
				other = append(other, w)
				continue
			}
			w.sampleTotal()
		}
	}
	if len(other) == 0 {
		return nil
	}
	if _, err := pipelined(ctx, rdb, func(p redis.Pipeliner) error {
		clear(sh.sample) // sent again: queue them again
		for _, w := range other {
			w.sample = sh.sampleOf(ctx, p, w.theirs)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("common following: %w", err)
	}
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, w := range other {
			w.sampleHas = sh.checkSample(ctx, p, w.sample, w.theirs, w.mine)
		}
		return nil
	}); err != nil && !isNil(err) {
		return fmt.Errorf("common following: %w", err)
	}
	for _, w := range other {
		w.sampleTotal()
	}
	return nil
}

// sampleTotal sets a walk's total on Cluster from its sample and the
// ZMSCORE that checked the sample against the other list.
func (w *commonWalk) sampleTotal() {
	card, ms := sampleReply(w.sample)
	hits, err := countFlags(w.sampleHas)
	if err != nil {
		w.fail(fmt.Errorf("common following of %s and %s: %w", w.k.Parent, w.k.With, err))
		return
	}
	w.page.Total = commonTotal(hits, int(card), len(ms))
}

// sampleReply reads commonSampleScript's reply: the list's size and the
// sample's members.
func sampleReply(c *redis.Cmd) (int64, []string) {
	res, err := c.Slice()
	if err != nil || len(res) != 2 {
		return 0, nil
	}
	card, _ := res[0].(int64)
	flat, _ := res[1].([]any)
	ms := make([]string, 0, len(flat))
	for _, m := range flat {
		if s, ok := m.(string); ok {
			ms = append(ms, s)
		}
	}
	return card, ms
}

// countFlags counts the members a ZMSCORE reply found (none for no
// command: an empty sample).
func countFlags(c *redis.Cmd) (int, error) {
	if c == nil {
		return 0, nil
	}
	in, err := zmscoreFlags(c)
	n := 0
	for _, ok := range in {
		if ok {
			n++
		}
	}
	return n, err
}

// zmscoreArgs is the command ZMSCORE key member... of edges.
func zmscoreArgs(key string, edges []edge) []any {
	args := make([]any, 0, len(edges)+2)
	args = append(args, "ZMSCORE", key)
	for _, e := range edges {
		args = append(args, e.member)
	}
	return args
}

// members returns edges of the given members, without scores.
func members(ms []string) []edge {
	out := make([]edge, len(ms))
	for i, m := range ms {
		out[i].member = m
	}
	return out
}

// seesGraphs reports whether the viewer may see whom both users follow:
// the intersection shows part of each one's following.
func (w *commonWalk) seesGraphs() bool {
	for _, b := range w.blocked {
		if !social.SeesGraphOf(false, social.Relation{BlockedViewer: b.Val()}) {
			return false
		}
	}
	return true
}

func (w *commonWalk) fail(err error) {
	w.done, w.err = true, err
}

// finish makes the walk's page: up to first of the members found, and,
// when the walk stopped at its bounds without filling the page, HasNext
// and an End cursor at the last candidate read, where the next page goes
// on.
func (w *commonWalk) finish() {
	total := w.page.Total
	w.page = edgeConnection(w.common, w.k.Page.First, total)
	if w.cut && len(w.common) <= w.k.Page.First {
		w.page.HasNext, w.page.End = true, social.EncodeCursor(w.pos.score, w.pos.member)
	}
}

// Bounds of one page of common following: its Redis work is bounded by
// these, whatever the lengths of the two lists (docs/security.md, "Redis
// work past what pages show").
//
// The walk reads the user's following list in chunks: the first is large
// enough to fill most pages in one go; later ones grow, so a sparse
// intersection takes few round trips, and spend the operation's read
// budget (social.TakeReadBudget). A page reads at most commonWalkMax
// candidates; one that stops short of a full page, before the end of the
// list, ends with HasNext and an End cursor at the last candidate read.
//
// The total reads at most commonSample members of the smaller of the two
// lists (count_sample, lua/lib/sample.lua): exact when that list holds no
// more, else an estimate from runs of commonSampleRun consecutive members
// spread over it.
const (
	commonChunk     = 256
	commonWalkMax   = 4096
	commonSample    = 1024
	commonSampleRun = 32
)

// commonTotal is a common-following total from a count over sampled
// members of the smaller list, which holds card: the members found when
// the sample is the whole list, else their share scaled to the list.
func commonTotal(hits, card, sampled int) int {
	if sampled == 0 || sampled >= card {
		return hits
	}
	return int(math.Round(float64(hits) * float64(card) / float64(sampled)))
}
