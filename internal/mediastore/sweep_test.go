package mediastore_test

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/media/mediatest"
	"github.com/socialgw/gateway/internal/mediastore"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// sweepWorld is a real store on a real Redis with two users, and a media
// store stamping files as the gateway does.
type sweepWorld struct {
	store         *redisstore.Store
	files         *mediastore.Store
	author, other string
}

func newSweepWorld(t *testing.T, files *mediastore.Store) *sweepWorld {
	t.Helper()
	s := redisstore.New(redistest.Client(t), redistest.Prefix(t))
	w := &sweepWorld{store: s, files: files}
	for i, id := range []*string{&w.author, &w.other} {
		name := "sweep" + strconv.Itoa(i) + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
		u, err := s.CreateUser(context.Background(), social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: "x"})
		if err != nil {
			t.Fatal(err)
		}
		*id = u.ID
	}
	files.Stamp = mediastore.ViewerStamp(s.PostSeqNow)
	return w
}

// eachBucket runs fn in a sweep world on each kind of bucket.
func eachBucket(t *testing.T, fn func(t *testing.T, files *mediastore.Store, w *sweepWorld)) {
	for name, open := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			files := mediastore.New(open(t))
			defer files.Close()
			fn(t, files, newSweepWorld(t, files))
		})
	}
}

// save stores a file uploaded by user, as createPost does before it
// writes the post.
func (w *sweepWorld) save(t *testing.T, user string) social.Media {
	t.Helper()
	jpg := mediatest.JPEGWithGPS(t, 8, 8)
	m, err := w.files.Save(social.WithViewer(context.Background(), social.Viewer{UserID: user}), bytes.NewReader(jpg), int64(len(jpg)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (w *sweepWorld) post(t *testing.T, user string, files ...social.Media) *social.Post {
	t.Helper()
	p, err := w.store.CreatePost(context.Background(), user, social.NewPost{Content: "with files", Media: files})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSweep stores files in every state a crash or a deletion leaves, on
// a local directory and on S3, and sweeps: before the grace nothing goes;
// after it exactly the files no post names go, a page at a time, also
// with two sweepers at once.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	eachBucket(t, func(t *testing.T, files *mediastore.Store, w *sweepWorld) {
		live := w.save(t, w.author)
		w.post(t, w.author, live)
		orphan := w.save(t, w.author) // its request died before the post was written
		gone := w.save(t, w.author)
		p := w.post(t, w.author, gone)
		if err := w.store.DeletePost(ctx, w.author, p.ID); err != nil { // its delete job never runs here
			t.Fatal(err)
		}
		// other's file, then more posts than the sweeper reads.
		busy := w.save(t, w.other)
		for range 40 {
			w.post(t, w.other)
		}
		w.files.Stamp = nil
		unstamped := w.save(t, w.author)
		w.files.Stamp = mediastore.ViewerStamp(w.store.PostSeqNow)
		all := []social.Media{live, orphan, gone, busy, unstamped}

		sweep := func(now time.Time, sweepers int) mediastore.SweepStats {
			t.Helper()
			var total mediastore.SweepStats
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range sweepers {
				sw := &mediastore.Sweeper{Files: files, Owners: w.store, Grace: time.Hour, Batch: 2, Now: func() time.Time { return now }}
				wg.Go(func() {
					// Passes of two files each: three cover the five (or six).
					for range 3 {
						st, err := sw.Pass(ctx)
						if err != nil {
							t.Error(err)
						}
						if st.Listed > 2 {
							t.Errorf("a pass listed %d files, more than its batch of 2", st.Listed)
						}
					}
					mu.Lock()
					defer mu.Unlock()
					st := sw.Stats()
					total.Listed += st.Listed
					total.Young += st.Young
					total.Deleted += st.Deleted
					total.Named += st.Named
					total.Undecided += st.Undecided
					total.Unstamped += st.Unstamped
				})
			}
			wg.Wait()
			return total
		}
		exists := func() map[string]bool {
			got := map[string]bool{}
			for _, m := range all {
				ok, err := files.Exists(ctx, m.Key)
				if err != nil {
					t.Fatal(err)
				}
				got[m.Key] = ok
			}
			return got
		}

		if st := sweep(time.Now(), 1); st.Listed != 5 || st.Young != 5 || st.Deleted != 0 {
			t.Errorf("within the grace: %+v; want 5 listed, 5 young, none deleted", st)
		}
		for k, ok := range exists() {
			if !ok {
				t.Errorf("%s deleted within the grace", k)
			}
		}

		later := time.Now().Add(2 * time.Hour)
		st := sweep(later, 1)
		want := map[string]bool{live.Key: true, orphan.Key: false, gone.Key: false, busy.Key: true, unstamped.Key: true}
		for k, ok := range exists() {
			if ok != want[k] {
				t.Errorf("after the grace, %s exists: %v, want %v", k, ok, want[k])
			}
		}
		if st.Listed != 5 || st.Named != 1 || st.Undecided != 1 || st.Unstamped != 1 || st.Deleted != 2 {
			t.Errorf("after the grace: %+v; want 5 listed, 1 named, 1 undecided, 1 unstamped, 2 deleted", st)
		}

		// Two sweepers at once over the same files: the new orphan
		// goes, by one or both, and nothing else.
		orphan = w.save(t, w.author)
		all = append(all, orphan)
		want[orphan.Key] = false
		if st := sweep(later, 2); st.Deleted < 1 || st.Deleted > 2 || st.Named < 1 {
			t.Errorf("two sweepers: %+v", st)
		}
		for k, ok := range exists() {
			if ok != want[k] {
				t.Errorf("after two sweepers, %s exists: %v, want %v", k, ok, want[k])
			}
		}
	})
}

// TestSweepExports writes two accounts' export archives beside a post's
// file and sweeps with ExportKeep, a page of one archive a pass: within
// ExportKeep and the grace nothing goes; after them each pass deletes one
// archive, and the post's file stays.
func TestSweepExports(t *testing.T) {
	ctx := context.Background()
	const keep = 7 * 24 * time.Hour
	eachBucket(t, func(t *testing.T, files *mediastore.Store, w *sweepWorld) {
		live := w.save(t, w.author)
		w.post(t, w.author, live)
		for _, u := range []string{w.author, w.other} {
			if _, err := files.WriteExport(ctx, u, func(wr io.Writer) error { _, err := wr.Write([]byte("zip")); return err }); err != nil {
				t.Fatal(err)
			}
		}
		archives := func() (n int) {
			for _, u := range []string{w.author, w.other} {
				if ok, err := files.Exists(ctx, mediastore.ExportKey(u)); err != nil {
					t.Fatal(err)
				} else if ok {
					n++
				}
			}
			return n
		}
		pass := func(now time.Time, sw *mediastore.Sweeper) mediastore.SweepStats {
			t.Helper()
			sw.Now = func() time.Time { return now }
			st, err := sw.Pass(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		sw := &mediastore.Sweeper{Files: files, Owners: w.store, Grace: time.Hour, Batch: 1, ExportKeep: keep}
		for range 3 {
			if st := pass(time.Now().Add(keep), sw); st.Expired != 0 {
				t.Fatalf("within ExportKeep and the grace: %+v", st)
			}
		}
		if n := archives(); n != 2 {
			t.Fatalf("%d archives left within ExportKeep and the grace, want 2", n)
		}
		later := time.Now().Add(keep + 2*time.Hour)
		for want := 1; want >= 0; want-- {
			if st := pass(later, sw); st.Expired != 1 {
				t.Errorf("a pass after ExportKeep expired %d archives, want 1 (its page)", st.Expired)
			}
			if n := archives(); n != want {
				t.Errorf("%d archives left, want %d", n, want)
			}
		}
		if ok, err := files.Exists(ctx, live.Key); err != nil || !ok {
			t.Errorf("the post's file is gone: %v %v", ok, err)
		}
	})
}
