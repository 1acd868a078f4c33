package export_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/socialgw/gateway/internal/export"
	"github.com/socialgw/gateway/internal/media/mediatest"
	"github.com/socialgw/gateway/internal/mediastore"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// An export's memory does not grow with the account: the worker holds one
// batch at a time and streams the zip into the blob store. The test
// writes the archive of an account of n posts (every tenth with an
// image) into a local bucket and measures the heap's peak above where it
// started (sampled every millisecond) and the allocations. The short
// tier runs 1 000 posts; the full run 1 000 and 10 000, whose peaks must
// be alike (docs/performance-accounts.md, "Data exports").
func TestExportMemoryBounded(t *testing.T) {
	sizes := []int{1000}
	if !testing.Short() {
		sizes = append(sizes, 10000)
	}
	var peaks []uint64
	for _, n := range sizes {
		peak, allocs, bytes, took := exportOf(t, n)
		t.Logf("%d posts: archive %d KiB in %v; heap peak +%.1f MiB; %d allocations, %.1f MiB allocated",
			n, bytes>>10, took.Round(time.Millisecond), float64(peak)/(1<<20), allocs.n, float64(allocs.bytes)/(1<<20))
		if peak > 48<<20 {
			t.Errorf("%d posts: heap peak +%d MiB, want under 48", n, peak>>20)
		}
		peaks = append(peaks, peak)
	}
	if len(peaks) == 2 && peaks[1] > 2*peaks[0]+8<<20 {
		t.Errorf("heap peak grows with the account: %d MiB at 1 000 posts, %d MiB at 10 000", peaks[0]>>20, peaks[1]>>20)
	}
}

type allocated struct{ n, bytes uint64 }

func exportOf(t *testing.T, n int) (peak uint64, allocs allocated, size int64, took time.Duration) {
	ctx := context.Background()
	st := redisstore.New(redistest.Client(t), redistest.Prefix(t))
	b, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	files := mediastore.New(b)
	defer files.Close()
	u, err := st.CreateUser(ctx, social.NewAccount{Name: fmt.Sprintf("big%d", n), Email: fmt.Sprintf("big%d@example.com", n), PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	img := mediatest.JPEGWithGPS(t, 200, 150)
	m, err := files.Save(ctx, bytes.NewReader(img), int64(len(img)))
	if err != nil {
		t.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				in := social.NewPost{Content: fmt.Sprintf("post number %d of a long life, with some words in it #tag%d", i, i%50)}
				if i%10 == 0 {
					in.Media = []social.Media{m}
				}
				if _, err := st.CreatePost(ctx, u.ID, in); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	exports := redisstore.NewExportService(st, redisstore.DefaultExports())
	w := &export.Worker{Source: exports, Records: exports, Files: files}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var high atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > high.Load() {
				high.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	start := time.Now()
	size, err = files.WriteExport(ctx, u.ID, func(out io.Writer) error { return w.Write(ctx, out, u.ID) })
	took = time.Since(start)
	close(done)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if h := high.Load(); h > before.HeapInuse {
		peak = h - before.HeapInuse
	}
	allocs = allocated{after.Mallocs - before.Mallocs, after.TotalAlloc - before.TotalAlloc}

	// The archive holds every post and every image.
	r, err := files.OpenExport(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	zr, err := zip.NewReader(readerAt{r}, size)
	if err != nil {
		t.Fatal(err)
	}
	if want := 11 + n/10; len(zr.File) != want {
		t.Fatalf("%d files in the archive, want %d", len(zr.File), want)
	}
	return peak, allocs, size, took
}

// readerAt reads a seeker at offsets.
type readerAt struct{ r io.ReadSeeker }

func (a readerAt) ReadAt(p []byte, off int64) (int, error) {
	if _, err := a.r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.ReadFull(a.r, p)
}
