package mediastore

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/socialgw/gateway/internal/social"
)

// Owners tells whether posts name stored files (redisstore.Store).
type Owners interface {
	MediaOwners(ctx context.Context, files []social.StoredFile) ([]social.FileOwner, error)
}

// Sweeper deletes the files no post names: those of a post that was never
// made because its request died between storing its files and writing the
// post (the request itself deletes them on any error it sees), and those
// of a deleted post whose delete job gave up. Only files older than Grace
// are looked at: a younger one may belong to a request still under way.
//
// Each Pass lists one page of the bucket, from where the last pass
// stopped, so the work of a pass is bounded whatever the bucket holds;
// the walk starts again at the beginning when it reaches the end. Several
// sweepers (one per worker process) may run at once: a file older than
// the grace is never attached to a post any more, and deleting a deleted
// file is not an error.
type Sweeper struct {
	Files  *Store
	Owners Owners
	// Grace is the age under which a file is left alone; it must exceed
	// the longest an upload request can take.
	Grace time.Duration
	// Batch is the files listed per pass.
	Batch int
	// ExportKeep, when set, is the longest a data export archive
	// (ExportKey) is served after its upload began: each pass then also
	// lists one page of the archives, from where the last stopped, and
	// deletes those older than ExportKeep and Grace together, which no
	// address serves any more. An account's next export replaces its
	// archive, so only the archives of accounts that asked for none since
	// are left for the sweep.
	ExportKeep time.Duration
	// Now is the clock files' ages are judged by (time.Now when nil).
	Now func() time.Time

	token   []byte // where the next pass lists from; nil: the beginning
	etoken  []byte // the same for the export archives
	total   SweepStats
	running atomic.Bool // a Pass under way: passes of one Sweeper never overlap
}

// SweepStats counts what passes did with the files they listed.
type SweepStats struct {
	// Listed files; of them Young (within the grace), Unstamped (keys that
	// name no post: kept), Named (a post names them), Undecided (their
	// author made too many posts since to tell: kept), Deleted.
	Listed, Young, Unstamped, Named, Undecided, Deleted int64
	// Expired export archives deleted.
	Expired int64
	// Passes that ended with an error (the next pass tries again).
	Failed int64
}

func (st *SweepStats) add(o SweepStats) {
	for _, p := range []struct{ to, from *int64 }{{&st.Listed, &o.Listed}, {&st.Young, &o.Young},
		{&st.Unstamped, &o.Unstamped}, {&st.Named, &o.Named}, {&st.Undecided, &o.Undecided},
		{&st.Deleted, &o.Deleted}, {&st.Expired, &o.Expired}, {&st.Failed, &o.Failed}} {
		atomic.AddInt64(p.to, *p.from)
	}
}

// Stats is the sum of every pass so far.
func (sw *Sweeper) Stats() SweepStats {
	t := &sw.total
	return SweepStats{Listed: atomic.LoadInt64(&t.Listed), Young: atomic.LoadInt64(&t.Young),
		Unstamped: atomic.LoadInt64(&t.Unstamped), Named: atomic.LoadInt64(&t.Named),
		Undecided: atomic.LoadInt64(&t.Undecided), Deleted: atomic.LoadInt64(&t.Deleted),
		Expired: atomic.LoadInt64(&t.Expired), Failed: atomic.LoadInt64(&t.Failed)}
}

// Pass sweeps one page of the bucket and returns what it did. Passes of
// one Sweeper do not overlap: a Pass called while one runs does nothing.
func (sw *Sweeper) Pass(ctx context.Context) (st SweepStats, err error) {
	if !sw.running.CompareAndSwap(false, true) {
		return st, nil
	}
	defer sw.running.Store(false)
	defer func() {
		if err != nil {
			st.Failed++
		}
		sw.total.add(st)
	}()
	now := time.Now
	if sw.Now != nil {
		now = sw.Now
	}
	objs, next, err := sw.listPage(ctx, &sw.token, keyPrefix)
	if err != nil {
		return st, fmt.Errorf("sweep media: list: %w", err)
	}
	cutoff := now().Add(-sw.Grace)
	var files []social.StoredFile
	for _, o := range objs {
		if o.IsDir {
			continue
		}
		st.Listed++
		f, ok := parseKey(o.Key)
		switch {
		case o.ModTime.After(cutoff):
			st.Young++
		case !ok:
			st.Unstamped++
		default:
			files = append(files, f)
		}
	}
	if err := sw.settle(ctx, files, &st); err != nil {
		return st, err
	}
	sw.token = next
	// After the media page: an archive listing that fails (a bucket
	// policy that lets the sweep list only media, say) fails the pass,
	// not the media sweep.
	if sw.ExportKeep > 0 {
		return st, sw.expireExports(ctx, now().Add(-sw.ExportKeep-sw.Grace), &st)
	}
	return st, nil
}

// listPage lists the page of keys under prefix that *token points at
// (nil: the first), and returns where the next page starts, which the
// caller moves into *token once the page is settled, so that a failed
// page is listed again. nil is the end, after which the walk starts
// again. A failed listing resets *token.
func (sw *Sweeper) listPage(ctx context.Context, token *[]byte, prefix string) (objs []*blob.ListObject, next []byte, err error) {
	from := *token
	if from == nil {
		from = blob.FirstPageToken
	}
	opts := &blob.ListOptions{Prefix: prefix}
	objs, next, err = sw.Files.bucket.ListPage(ctx, from, max(sw.Batch, 1), opts)
	if gcerrors.Code(err) == gcerrors.NotFound {
		// A local directory's listing reads each file it found; one
		// deleted meanwhile (by another sweeper) fails it once.
		objs, next, err = sw.Files.bucket.ListPage(ctx, from, max(sw.Batch, 1), opts)
	}
	if err != nil {
		// The next pass starts the walk again: a page token that the
		// store no longer takes would otherwise fail every pass.
		*token = nil
		return nil, nil, err
	}
	if len(next) == 0 {
		next = nil
	}
	return objs, next, nil
}

// expireExports deletes, of one page of the export archives, those
// written before cutoff.
func (sw *Sweeper) expireExports(ctx context.Context, cutoff time.Time, st *SweepStats) error {
	objs, next, err := sw.listPage(ctx, &sw.etoken, exportPrefix)
	if err != nil {
		return fmt.Errorf("sweep exports: list: %w", err)
	}
	for _, o := range objs {
		if o.IsDir || !o.ModTime.Before(cutoff) {
			continue
		}
		// The account's next export writes the same key: one written
		// since the listing is young, and stays. (A write between this
		// read and the delete is not excluded: the blob API has no
		// conditional delete; that export's address would then answer
		// 403, as an expired one does, until the account asks again.)
		a, err := sw.Files.bucket.Attributes(ctx, o.Key)
		if gcerrors.Code(err) == gcerrors.NotFound {
			continue
		}
		if err != nil {
			return fmt.Errorf("sweep exports: %w", err)
		}
		if !a.ModTime.Before(cutoff) {
			continue
		}
		if err := sw.Files.Delete(ctx, []string{o.Key}); err != nil {
			return fmt.Errorf("sweep exports: %w", err)
		}
		st.Expired++
	}
	sw.etoken = next
	return nil
}

// settle asks the owners of old stamped files and deletes the orphans.
func (sw *Sweeper) settle(ctx context.Context, files []social.StoredFile, st *SweepStats) error {
	if len(files) == 0 {
		return nil
	}
	owners, err := sw.Owners.MediaOwners(ctx, files)
	if err != nil {
		return fmt.Errorf("sweep media: %w", err)
	}
	var orphans []string
	for i, o := range owners {
		switch o {
		case social.FileNamed:
			st.Named++
		case social.FileUndecided:
			st.Undecided++
		case social.FileOrphan:
			orphans = append(orphans, files[i].Key)
		}
	}
	for _, k := range orphans {
		if err := sw.Files.Delete(ctx, []string{k}); err != nil {
			return fmt.Errorf("sweep media: %w", err)
		}
		st.Deleted++
	}
	return nil
}
